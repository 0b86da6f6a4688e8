//! [`Avatar`]: the body's state and the `body_action` actions — gliding the main window to a
//! target (short eased animation through [`BodyWindow::place`]), sitting on a window's top edge
//! and following it, standing up when the perch is covered, maximised, fullscreen, minimised or
//! closed, and sitting back when it can.
//!
//! Result words (docs/avatar.md): `unsupported` without a desktop host or a body window; `busy`
//! while the user is dragging the character; `not_found` for no matching window or spot;
//! `blocked` when every matching window is fullscreen, maximised, minimised, covered or has no
//! room above it; `interrupted` when the user drags the character or a new action arrives
//! mid-move; `timeout` when the window does not reach the target in time.

use super::geometry::{self as geo, Perch};
use super::{Activity, BodyState, BodyWindow, Desktop, DesktopHost, HostError, PerchRef, Places};
use crate::store::Store;
use plan::{perch_ref, sit_target};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod plan;

/// An action of `body_action`, its arguments checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    SitOnWindow { app: String },
    Peek { side: geo::Side },
    MoveTo { spot: String, monitor: Option<u32> },
    Stand,
    GoToBed,
}

/// How an action ended: `ok` or the contract's one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    NotFound,
    Blocked,
    Interrupted,
    Busy,
    Unsupported,
    Timeout,
    /// `move_to`'s monitor names no display: `error: invalid field monitor`.
    InvalidMonitor,
}

impl Outcome {
    pub fn answer(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::NotFound => "not_found",
            Outcome::Blocked => "blocked",
            Outcome::Interrupted => "interrupted",
            Outcome::Busy => "busy",
            Outcome::Unsupported => "unsupported",
            Outcome::Timeout => "timeout",
            Outcome::InvalidMonitor => "error: invalid field monitor",
        }
    }
}

/// Timings of the body's moves.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// One animation frame.
    pub frame: Duration,
    /// Glide speed, pixels per second; a glide lasts between `min_glide` and `max_glide`.
    pub speed: f64,
    pub min_glide: Duration,
    pub max_glide: Duration,
    /// How long the window may take to report the target position after the last frame.
    pub settle: Duration,
    /// A user drag this recent makes a new action `busy`.
    pub drag_hold: Duration,
    /// The longest an action may take (a window that keeps moving away).
    pub deadline: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            frame: Duration::from_millis(16),
            speed: 2400.0,
            min_glide: Duration::from_millis(120),
            max_glide: Duration::from_millis(600),
            settle: Duration::from_millis(1500),
            drag_hold: Duration::from_millis(600),
            deadline: Duration::from_secs(6),
        }
    }
}

/// How close the reported position must come to the target to count as there.
const NEAR: i32 = 3;

struct Inner {
    state: BodyState,
    /// Cancels the running action and its follow task.
    current: Option<CancellationToken>,
    /// Bumped by every action and drag; a task whose number is old no longer owns the state.
    seq: u64,
    dragged_at: Option<Instant>,
    /// Where the window was last put (by YUI) or reported (by the user's drag): a "move" to the
    /// same place (a click on the character, a window manager repeating itself) is no drag.
    known_at: Option<(i32, i32)>,
}

/// The avatar executor.
pub struct Avatar {
    desktop: Option<Arc<dyn DesktopHost>>,
    body: Option<Arc<dyn BodyWindow>>,
    store: Option<Store>,
    timing: Timing,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Avatar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Avatar")
            .field("desktop", &self.desktop.is_some())
            .field("body", &self.body.is_some())
            .finish()
    }
}

type Shared = Arc<Avatar>;

impl Avatar {
    /// An avatar over a desktop host (`None`: no implementation here, e.g. Wayland) and the
    /// main window (`None`: headless, e.g. the CLI). `store` holds the user's places and
    /// receives the body's settled state.
    pub fn new(
        desktop: Option<Arc<dyn DesktopHost>>,
        body: Option<Arc<dyn BodyWindow>>,
        store: Option<Store>,
    ) -> Self {
        Self::with_timing(desktop, body, store, Timing::default())
    }

    pub fn with_timing(
        desktop: Option<Arc<dyn DesktopHost>>,
        body: Option<Arc<dyn BodyWindow>>,
        store: Option<Store>,
        timing: Timing,
    ) -> Self {
        Self {
            desktop,
            body,
            store,
            timing,
            inner: Mutex::new(Inner {
                state: BodyState::default(),
                current: None,
                seq: 0,
                dragged_at: None,
                known_at: None,
            }),
        }
    }

    pub fn desktop_host(&self) -> Option<&Arc<dyn DesktopHost>> {
        self.desktop.as_ref()
    }
    pub fn body_window(&self) -> Option<&Arc<dyn BodyWindow>> {
        self.body.as_ref()
    }
    /// Whether `body_action` can run here.
    pub fn can_move(&self) -> bool {
        self.desktop.is_some() && self.body.is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The body's state now.
    pub fn state(&self) -> BodyState {
        self.lock().state.clone()
    }

    /// A fresh look at the desktop (off the async threads: the host answers over a socket).
    pub async fn snapshot(&self) -> Result<Desktop, HostError> {
        let host = self
            .desktop
            .clone()
            .ok_or_else(|| HostError::unavailable("no desktop host"))?;
        tokio::task::spawn_blocking(move || host.desktop())
            .await
            .map_err(|e| HostError::platform("reading the desktop", e))?
    }

    /// The number of the monitor the body is on: where its window is, else its last state,
    /// else 1.
    pub fn current_monitor(&self, desk: &Desktop) -> Option<u32> {
        let at = self
            .body
            .as_ref()
            .and_then(|b| b.position().map(|p| (p, b.size())))
            .map(|((x, y), (w, h))| geo::Rect::new(x, y, w, h));
        match at {
            Some(r) => geo::monitor_of(&desk.monitors, r).map(|m| m.number),
            None => desk.monitors.first().map(|m| m.number),
        }
    }

    /// The user dragged the character to `pos`: a running move ends `interrupted`, the body
    /// stands where it was dropped, and actions answer `busy` while the drag goes on.
    pub fn user_moved(&self, pos: (i32, i32)) {
        let mut g = self.lock();
        let before = g.known_at.replace(pos);
        // The first place the window is reported at (where the window manager put it at start)
        // is where the body is, not a drag, unless YUI was moving it.
        if before == Some(pos) || (before.is_none() && g.current.is_none()) {
            return;
        }
        g.dragged_at = Some(Instant::now());
        g.seq += 1;
        if let Some(t) = g.current.take() {
            t.cancel();
        }
        let monitor = g.state.monitor;
        g.state = BodyState {
            state: Activity::Standing,
            monitor,
            x: Some(pos.0),
            y: Some(pos.1),
            ..BodyState::default()
        };
    }

    /// The character rests after the user's drag: write the state down.
    pub fn user_rested(&self) {
        let state = self.state();
        self.settled(&state);
    }

    /// Run one action; the answer is `ok` or one contract word.
    pub async fn act(self: &Shared, action: Action) -> Outcome {
        let (Some(_), Some(body)) = (self.desktop.clone(), self.body.clone()) else {
            return Outcome::Unsupported;
        };
        let desk = match self.snapshot().await {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(error = %e, "avatar: the desktop cannot be read");
                return Outcome::Unsupported;
            }
        };
        let size = body.size();
        let plan = match self.plan(&action, &desk, size) {
            Ok(p) => p,
            Err(o) => return o,
        };
        let (token, seq) = {
            let mut g = self.lock();
            if g.dragged_at
                .is_some_and(|t| t.elapsed() < self.timing.drag_hold)
            {
                return Outcome::Busy;
            }
            if let Some(old) = g.current.take() {
                old.cancel();
            }
            g.seq += 1;
            let token = CancellationToken::new();
            g.current = Some(token.clone());
            g.state.state = Activity::Moving;
            (token, g.seq)
        };
        self.notify();
        let started = Instant::now();
        let mut plan = plan;
        loop {
            match self.glide(plan.to, &token).await {
                Ok(()) => {}
                Err(o) => return self.end_failed(seq, o),
            }
            // A perch that moved while the body glided: glide again to where it is now.
            let Some(id) = plan
                .perch
                .as_ref()
                .filter(|_| plan.activity == Activity::Sitting)
                .map(|p| p.id)
            else {
                break;
            };
            let Ok(desk) = self.snapshot().await else {
                break;
            };
            match desk.windows.iter().position(|w| w.id == id) {
                Some(i) if geo::perch_status(&desk, i, size).is_free() => {
                    match sit_target(&desk, i, size, plan.to.0) {
                        Some(to) if to != plan.to => plan.to = to,
                        _ => break,
                    }
                }
                _ => return self.end_failed(seq, Outcome::Blocked),
            }
            if started.elapsed() > self.timing.deadline {
                return self.end_failed(seq, Outcome::Timeout);
            }
        }
        let monitor = geo::monitor_of(
            &desk.monitors,
            geo::Rect::new(plan.to.0, plan.to.1, size.0, size.1),
        )
        .map(|m| m.number);
        let state = BodyState {
            state: plan.activity,
            monitor,
            x: Some(plan.to.0),
            y: Some(plan.to.1),
            spot: plan.spot,
            window: plan.perch.clone(),
            side: plan.side,
            waiting_for: None,
        };
        if !self.set_state(seq, state.clone()) {
            return Outcome::Interrupted;
        }
        self.settled(&state);
        if let Some(perch) = plan.perch.filter(|_| plan.activity == Activity::Sitting) {
            // Subscribed before this call returns, so no change after `ok` is missed.
            let changes = self.desktop.as_ref().map(|h| h.changes());
            let offset = plan.to.0 - plan.perch_x;
            let me = self.clone();
            if let Some(changes) = changes {
                tokio::spawn(async move { me.follow(perch, offset, changes, seq, token).await });
            }
        }
        Outcome::Ok
    }

    fn end_failed(&self, seq: u64, o: Outcome) -> Outcome {
        // A failed glide leaves the body standing where it stopped (unless another action or a
        // drag owns the state now).
        let pos = self.body.as_ref().and_then(|b| b.position());
        let mut g = self.lock();
        if g.seq == seq {
            g.current = None;
            let monitor = g.state.monitor;
            g.state = BodyState {
                state: Activity::Standing,
                monitor,
                x: pos.map(|p| p.0),
                y: pos.map(|p| p.1),
                ..BodyState::default()
            };
        }
        drop(g);
        self.notify();
        o
    }

    /// Set the state if task `seq` still owns it.
    fn set_state(&self, seq: u64, state: BodyState) -> bool {
        let mut g = self.lock();
        if g.seq != seq {
            return false;
        }
        g.state = state;
        drop(g);
        self.notify();
        true
    }

    fn notify(&self) {
        if let Some(b) = &self.body {
            b.state_changed(&self.state());
        }
    }

    /// Write the settled state (for `look at: body` from the CLI).
    fn settled(&self, state: &BodyState) {
        let Some(store) = &self.store else { return };
        let v = match serde_json::to_value(state) {
            Ok(v) => v,
            Err(_) => return,
        };
        if let Err(e) = crate::store::kv::put(store, super::BODY_KEY, &v) {
            tracing::warn!(error = %e.message, "avatar: writing the body state failed");
        }
    }

    fn places(&self) -> Places {
        self.store
            .as_ref()
            .and_then(|s| crate::store::kv::get(s, super::PLACES_KEY).ok().flatten())
            .and_then(|v| Places::from_value(&v).ok())
            .unwrap_or_default()
    }

    /// Move the window to `to` in a short eased glide, then wait until it reports `to`.
    async fn glide(&self, to: (i32, i32), token: &CancellationToken) -> Result<(), Outcome> {
        let body = self.body.as_ref().ok_or(Outcome::Unsupported)?;
        let from = body.position().unwrap_or(to);
        let (dx, dy) = ((to.0 - from.0) as f64, (to.1 - from.1) as f64);
        let dist = (dx * dx + dy * dy).sqrt();
        let t = self.timing;
        let secs = (dist / t.speed).clamp(t.min_glide.as_secs_f64(), t.max_glide.as_secs_f64());
        let frames = ((secs / t.frame.as_secs_f64()).ceil() as u32).max(1);
        for i in 1..=frames {
            let s = f64::from(i) / f64::from(frames);
            let e = s * s * (3.0 - 2.0 * s); // smoothstep
            let p = (
                from.0 + (dx * e).round() as i32,
                from.1 + (dy * e).round() as i32,
            );
            if token.is_cancelled() {
                return Err(Outcome::Interrupted);
            }
            let at = if i == frames { to } else { p };
            if let Err(e) = body.place(at) {
                tracing::warn!(error = %e, "avatar: placing the window failed");
                return Err(Outcome::Timeout);
            }
            self.lock().known_at = Some(at);
            tokio::select! {
                _ = token.cancelled() => return Err(Outcome::Interrupted),
                _ = tokio::time::sleep(t.frame) => {}
            }
        }
        let until = Instant::now() + t.settle;
        loop {
            match body.position() {
                None => return Ok(()),
                Some(p) if (p.0 - to.0).abs() <= NEAR && (p.1 - to.1).abs() <= NEAR => {
                    return Ok(())
                }
                Some(_) if Instant::now() >= until => return Err(Outcome::Timeout),
                Some(_) => {}
            }
            tokio::select! {
                _ = token.cancelled() => return Err(Outcome::Interrupted),
                _ = tokio::time::sleep(t.frame) => {}
            }
        }
    }

    /// Stay on the perch: move with it, stand up when it cannot be sat on (and sit back when
    /// it can again), stand for good when it closes. Ends when another action or a drag takes
    /// over (`token`).
    /// `offset`: the body's x relative to the perch's left edge, kept while the perch moves.
    async fn follow(
        self: Shared,
        perch: PerchRef,
        offset: i32,
        mut changes: tokio::sync::watch::Receiver<u64>,
        seq: u64,
        token: CancellationToken,
    ) {
        let Some(body) = self.body.clone() else {
            return;
        };
        let size = body.size();
        // A drag sends a change per frame; re-reading the desktop for each costs more than the
        // eye sees. At most one re-read per two frames: the changes in between coalesce.
        let every = self.timing.frame * 2;
        let mut last: Option<tokio::time::Instant> = None;
        loop {
            tokio::select! {
                _ = token.cancelled() => return,
                r = changes.changed() => if r.is_err() { return },
            }
            if let Some(wait) = last.map(|t| every.saturating_sub(t.elapsed())) {
                if !wait.is_zero() {
                    tokio::select! {
                        _ = token.cancelled() => return,
                        _ = tokio::time::sleep(wait) => {}
                    }
                }
            }
            // Whatever changed meanwhile is in the snapshot below.
            changes.borrow_and_update();
            last = Some(tokio::time::Instant::now());
            let Ok(desk) = self.snapshot().await else {
                continue;
            };
            if token.is_cancelled() {
                return;
            }
            let sitting = self.state().state == Activity::Sitting;
            let Some(i) = desk.windows.iter().position(|w| w.id == perch.id) else {
                // Closed: stand up below where the body is, and stop following.
                self.stand_up(&desk, seq, &token, None).await;
                return;
            };
            let frame = desk.windows[i].frame;
            if geo::perch_status(&desk, i, size).is_free() {
                let Some(to) = sit_target(&desk, i, size, frame.x + offset) else {
                    continue;
                };
                if sitting {
                    // Where YUI last put the window (or the user dropped it) is known here: no
                    // need to ask the window system on every step of a drag.
                    let at = self.lock().known_at;
                    if at != Some(to) && body.place(to).is_ok() {
                        let mut g = self.lock();
                        g.known_at = Some(to);
                        if g.seq == seq {
                            g.state.x = Some(to.0);
                            g.state.y = Some(to.1);
                        }
                    }
                } else if self.glide(to, &token).await.is_ok() {
                    // Sitting back on the perch it stood up from.
                    let mut state = self.state();
                    state.state = Activity::Sitting;
                    state.window = Some(perch_ref(&desk.windows[i]));
                    state.waiting_for = None;
                    state.x = Some(to.0);
                    state.y = Some(to.1);
                    if self.set_state(seq, state.clone()) {
                        self.settled(&state);
                    }
                }
            } else if sitting {
                self.stand_up(&desk, seq, &token, Some(perch.clone())).await;
            }
        }
    }

    /// Drop to the floor below the body; `waiting_for`: the perch to sit back on later.
    async fn stand_up(
        &self,
        desk: &Desktop,
        seq: u64,
        token: &CancellationToken,
        waiting_for: Option<PerchRef>,
    ) {
        let Some(body) = &self.body else { return };
        let size = body.size();
        let pos = body.position().unwrap_or((0, 0));
        let Some(m) = geo::monitor_of(&desk.monitors, geo::Rect::new(pos.0, pos.1, size.0, size.1))
        else {
            return;
        };
        let to = geo::clamp_to(m.work_area, size, (pos.0, geo::floor_y(m.work_area, size)));
        if self.glide(to, token).await.is_err() {
            return;
        }
        let state = BodyState {
            state: Activity::Standing,
            monitor: Some(m.number),
            x: Some(to.0),
            y: Some(to.1),
            waiting_for,
            ..BodyState::default()
        };
        if self.set_state(seq, state.clone()) {
            self.settled(&state);
        }
    }
}

/// The perch status words `look at: perch_targets` uses.
pub fn perch_word(p: Perch) -> &'static str {
    match p {
        Perch::Free => "free",
        Perch::Minimized => "minimized",
        Perch::OtherDesktop => "other_desktop",
        Perch::Fullscreen => "fullscreen",
        Perch::Maximized => "maximized",
        Perch::Covered => "covered",
        Perch::NoRoom => "no_room",
    }
}
