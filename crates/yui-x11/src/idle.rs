//! How long the user has given no input, as the X server counts it: the MIT-SCREEN-SAVER
//! extension's `ms_since_user_input` (keyboard and pointer, real or XTest; the same figure
//! screen savers and `xprintidle` use). One round trip per question; the core's presence watch
//! (`yui_domain::presence`) decides how often to ask.
//!
//! The user's return as an event ([`InputIdle::input_signal`]): an XSync alarm on the server's
//! `IDLETIME` counter that fires once the counter falls back to (near) zero — at the next input
//! — read by the host's event thread. An asleep app waits on it instead of asking every second.

use crate::{xerr, X11Desktop};
use std::time::Duration;
use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::protocol::screensaver::ConnectionExt as _;
use x11rb::protocol::sync::{self, ConnectionExt as _};
use yui_domain::avatar::HostError;
use yui_domain::presence::InputIdle;

/// The alarm fires when the idle counter is at most this (or half the idle time when it is
/// armed, if less): input resets it to 0.
const BACK_WITHIN_MS: u32 = 1000;

/// The XSync alarm on `IDLETIME` ([`X11Desktop::input_alarm`]).
pub(crate) type Alarm = sync::Alarm;

impl X11Desktop {
    /// The alarm that tells of the user's next input, made at the first ask; `None` where the
    /// server has no SYNC extension or no `IDLETIME` counter (the caller asks every second).
    fn input_alarm(&self) -> Option<Alarm> {
        *self.input_alarm.get_or_init(|| {
            let made = self.make_input_alarm();
            if let Err(e) = &made {
                tracing::info!(error = %e, "no X11 idle alarm: the characters' wake-up is polled");
            }
            made.ok()
        })
    }

    fn make_input_alarm(&self) -> Result<Alarm, HostError> {
        self.conn
            .extension_information(sync::X11_EXTENSION_NAME)
            .map_err(xerr)?
            .ok_or_else(|| HostError::unavailable("X11: the server has no SYNC extension"))?;
        self.conn
            .sync_initialize(3, 1)
            .map_err(xerr)?
            .reply()
            .map_err(xerr)?;
        let counters = self
            .conn
            .sync_list_system_counters()
            .map_err(xerr)?
            .reply()
            .map_err(xerr)?;
        let idle = counters
            .counters
            .iter()
            .find(|c| c.name == b"IDLETIME")
            .ok_or_else(|| HostError::unavailable("X11: the server has no IDLETIME counter"))?
            .counter;
        let alarm = self.conn.generate_id().map_err(xerr)?;
        // Made inactive (`events` off); armed by each ask.
        let aux = sync::CreateAlarmAux::new()
            .counter(idle)
            .value_type(sync::VALUETYPE::ABSOLUTE)
            .value(ms(u32::MAX / 2))
            .test_type(sync::TESTTYPE::NEGATIVE_COMPARISON)
            .delta(ms(0))
            .events(0);
        self.conn
            .sync_create_alarm(alarm, &aux)
            .map_err(xerr)?
            .check()
            .map_err(xerr)?;
        Ok(alarm)
    }
}

fn ms(v: u32) -> sync::Int64 {
    sync::Int64 { hi: 0, lo: v }
}

impl InputIdle for X11Desktop {
    fn idle_for(&self) -> Result<Duration, HostError> {
        let name = x11rb::protocol::screensaver::X11_EXTENSION_NAME;
        if self
            .conn
            .extension_information(name)
            .map_err(xerr)?
            .is_none()
        {
            return Err(HostError::unavailable(format!(
                "X11: the server has no {name} extension"
            )));
        }
        let info = self
            .conn
            .screensaver_query_info(self.root)
            .map_err(xerr)?
            .reply()
            .map_err(xerr)?;
        Ok(Duration::from_millis(u64::from(info.ms_since_user_input)))
    }

    fn input_signal(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        let alarm = self.input_alarm()?;
        let rx = self.input.subscribe();
        // Below the idle time now, so it cannot fire at once: input resets the counter to 0.
        let now = self.idle_for().ok()?.as_millis();
        let at = u32::try_from(now / 2)
            .unwrap_or(u32::MAX)
            .clamp(1, BACK_WITHIN_MS);
        // Armed once: fires when the counter drops to `at` or below (the next input), then,
        // with no delta, goes inactive until the next ask.
        let aux = sync::ChangeAlarmAux::new()
            .value_type(sync::VALUETYPE::ABSOLUTE)
            .value(ms(at))
            .test_type(sync::TESTTYPE::NEGATIVE_COMPARISON)
            .delta(ms(0))
            .events(1);
        let armed = self.conn.sync_change_alarm(alarm, &aux).map_err(xerr);
        match armed.and_then(|c| c.check().map_err(xerr)) {
            Ok(()) => Some(rx),
            Err(e) => {
                tracing::info!(error = %e, "X11 idle alarm not armed: the wake-up is polled");
                None
            }
        }
    }
}

/// The alarm fired: the user gave input.
pub(crate) fn alarm_fired(host: &X11Desktop, alarm: Alarm) {
    if host.input_alarm.get().copied().flatten() == Some(alarm) {
        host.input.send_modify(|n| *n = n.wrapping_add(1));
    }
}
