//! An in-memory desktop and body window for the avatar executor's tests: the desktop is data the
//! test edits (each edit signals a change, as X11 events would); the body window applies
//! positions like a window system and records what was asked of it.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;
use yui_core::avatar::body::Timing;
use yui_core::avatar::{
    Avatar, BodyState, BodyWindow, Capture, Desktop, DesktopHost, DesktopWindow, HostError,
    Monitor, Rect,
};
use yui_core::Store;

pub const BODY: (u32, u32) = (200, 300);

pub struct FakeDesktop {
    pub desk: Mutex<Desktop>,
    tx: tokio::sync::watch::Sender<u64>,
    /// Whether the body's windows were hidden when a capture ran.
    pub captured_hidden: Mutex<Vec<bool>>,
    pub body: Mutex<Option<Arc<FakeBody>>>,
}

impl FakeDesktop {
    pub fn new(desk: Desktop) -> Arc<Self> {
        Arc::new(Self {
            desk: Mutex::new(desk),
            tx: tokio::sync::watch::channel(0).0,
            captured_hidden: Mutex::new(Vec::new()),
            body: Mutex::new(None),
        })
    }
    /// Change the desktop and signal it.
    pub fn edit(&self, f: impl FnOnce(&mut Desktop)) {
        f(&mut self.desk.lock().unwrap());
        self.tx.send_modify(|n| *n += 1);
    }
    pub fn window_mut(&self, id: u64, f: impl FnOnce(&mut DesktopWindow)) {
        self.edit(|d| f(d.windows.iter_mut().find(|w| w.id == id).unwrap()))
    }
}

impl DesktopHost for FakeDesktop {
    fn desktop(&self) -> Result<Desktop, HostError> {
        Ok(self.desk.lock().unwrap().clone())
    }
    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.tx.subscribe()
    }
    fn capture(&self, area: Rect) -> Result<Capture, HostError> {
        let hidden = self
            .body
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|b| *b.hidden.lock().unwrap());
        self.captured_hidden.lock().unwrap().push(hidden);
        Ok(Capture {
            width: area.w,
            height: area.h,
            rgb: vec![128; (area.w * area.h * 3) as usize],
        })
    }
}

pub struct FakeBody {
    pub pos: Mutex<(i32, i32)>,
    /// A window system that ignores moves (for `timeout`).
    pub stuck: bool,
    pub placed: Mutex<Vec<(i32, i32)>>,
    pub hidden: Mutex<bool>,
    pub looking: Mutex<Vec<bool>>,
    pub states: Mutex<Vec<BodyState>>,
}

impl FakeBody {
    pub fn at(pos: (i32, i32)) -> Arc<Self> {
        Self::new(pos, false)
    }
    pub fn new(pos: (i32, i32), stuck: bool) -> Arc<Self> {
        Arc::new(Self {
            pos: Mutex::new(pos),
            stuck,
            placed: Mutex::new(Vec::new()),
            hidden: Mutex::new(false),
            looking: Mutex::new(Vec::new()),
            states: Mutex::new(Vec::new()),
        })
    }
    pub fn pos(&self) -> (i32, i32) {
        *self.pos.lock().unwrap()
    }
}

impl BodyWindow for FakeBody {
    fn size(&self) -> (u32, u32) {
        BODY
    }
    fn position(&self) -> Option<(i32, i32)> {
        Some(self.pos())
    }
    fn place(&self, pos: (i32, i32)) -> Result<(), HostError> {
        self.placed.lock().unwrap().push(pos);
        if !self.stuck {
            *self.pos.lock().unwrap() = pos;
        }
        Ok(())
    }
    fn hide_own_windows(&self, hidden: bool) {
        *self.hidden.lock().unwrap() = hidden;
    }
    fn show_looking(&self, on: bool) {
        self.looking.lock().unwrap().push(on);
    }
    fn state_changed(&self, s: &BodyState) {
        self.states.lock().unwrap().push(s.clone());
    }
}

/// Fast moves for tests.
pub fn timing() -> Timing {
    Timing {
        frame: Duration::from_millis(2),
        speed: 100_000.0,
        min_glide: Duration::from_millis(4),
        max_glide: Duration::from_millis(20),
        settle: Duration::from_millis(150),
        drag_hold: Duration::from_millis(300),
        deadline: Duration::from_secs(2),
    }
}

/// Two 1920×1080 monitors side by side; a 40 px panel at the bottom of each.
pub fn two_monitors() -> Vec<Monitor> {
    (0..2)
        .map(|i| Monitor {
            number: i + 1,
            name: format!("OUT-{}", i + 1),
            rect: Rect::new(1920 * i as i32, 0, 1920, 1080),
            work_area: Rect::new(1920 * i as i32, 0, 1920, 1040),
            primary: i == 0,
        })
        .collect()
}

pub fn window(id: u64, class: &str, title: &str, frame: Rect) -> DesktopWindow {
    DesktopWindow {
        id,
        class: class.into(),
        instance: class.to_lowercase(),
        title: title.into(),
        frame,
        hidden: false,
        fullscreen: false,
        maximized: false,
        desktop: Some(0),
        own: false,
    }
}

/// A desktop with an xterm (id 1) on monitor 1 and a gedit (id 2) on monitor 2.
pub fn desktop() -> Desktop {
    Desktop {
        monitors: two_monitors(),
        windows: vec![
            window(1, "XTerm", "bash", Rect::new(300, 500, 800, 400)),
            window(2, "Gedit", "notes.txt", Rect::new(2200, 400, 900, 500)),
        ],
        current_desktop: Some(0),
    }
}

pub struct Rig {
    pub desk: Arc<FakeDesktop>,
    pub body: Arc<FakeBody>,
    pub avatar: Arc<Avatar>,
    pub store: Store,
    _dir: tempfile::TempDir,
}

pub fn rig_with(desk: Desktop, body: Arc<FakeBody>) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.db")).unwrap();
    let d = FakeDesktop::new(desk);
    *d.body.lock().unwrap() = Some(body.clone());
    let avatar = Arc::new(Avatar::with_timing(
        Some(d.clone()),
        Some(body.clone()),
        Some(store.clone()),
        timing(),
    ));
    Rig {
        desk: d,
        body,
        avatar,
        store,
        _dir: dir,
    }
}

pub fn rig() -> Rig {
    rig_with(desktop(), FakeBody::at((1600, 740)))
}

/// Wait until `f` holds (the follow task runs on its own), at most 2 s.
pub async fn eventually(mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..400 {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    false
}
