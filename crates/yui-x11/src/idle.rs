//! How long the user has given no input, as the X server counts it: the MIT-SCREEN-SAVER
//! extension's `ms_since_user_input` (keyboard and pointer, real or XTest; the same figure
//! screen savers and `xprintidle` use). One round trip per question; the core's presence watch
//! (`yui_domain::presence`) decides how often to ask.

use crate::{xerr, X11Desktop};
use std::time::Duration;
use x11rb::connection::RequestConnection as _;
use x11rb::protocol::screensaver::ConnectionExt as _;
use yui_domain::avatar::HostError;
use yui_domain::presence::InputIdle;

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
}
