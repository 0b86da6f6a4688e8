//! Figures for docs/PERFORMANCE.md (a script, not criterion: it starts its own X server).
//!
//! 1. `look at: screen`'s pipeline — X11 GetImage of a 1920×1080 display, resize to 1280×720,
//!    JPEG, data URL — against `import -window root` piped to `/usr/bin/convert -resize
//!    1280x1280 -quality 80`, in the same run, median of 15.
//! 2. CPU of the avatar (X11 host events + following) while its perch window is dragged for 10 s
//!    (60 moves a second), and while it sits still for 60 s.
//!
//! Run: `cargo bench -p yui-x11 --bench capture` (needs Xvfb and openbox; display
//! `YUI_BENCH_DISPLAY`, default :85).

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::*;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use yui_core::avatar::body::{Action, Outcome};
use yui_core::avatar::{Avatar, BodyWindow, DesktopHost, HostError, Rect};
use yui_x11::X11Desktop;

struct Kill(Vec<Child>);
impl Drop for Kill {
    fn drop(&mut self) {
        for c in self.0.iter_mut().rev() {
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let _ = c.wait();
        }
    }
}

fn cpu_secs() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

struct Body {
    conn: Arc<RustConnection>,
    id: Window,
}
impl BodyWindow for Body {
    fn size(&self) -> (u32, u32) {
        (220, 300)
    }
    fn position(&self) -> Option<(i32, i32)> {
        let g = self.conn.get_geometry(self.id).ok()?.reply().ok()?;
        Some((g.x.into(), g.y.into()))
    }
    fn place(&self, (x, y): (i32, i32)) -> Result<(), HostError> {
        self.conn
            .configure_window(self.id, &ConfigureWindowAux::new().x(x).y(y))
            .map_err(|e| HostError::platform("X11", e))?;
        self.conn.flush().map_err(|e| HostError::platform("X11", e))
    }
}

fn window(
    conn: &RustConnection,
    root: Window,
    r: (i16, i16, u16, u16),
    color: u32,
    class: &[u8],
    or: bool,
) -> Window {
    let id = conn.generate_id().unwrap();
    conn.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        id,
        root,
        r.0,
        r.1,
        r.2,
        r.3,
        0,
        WindowClass::INPUT_OUTPUT,
        x11rb::COPY_FROM_PARENT,
        &CreateWindowAux::new()
            .background_pixel(color)
            .override_redirect(u32::from(or)),
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        id,
        AtomEnum::WM_CLASS,
        AtomEnum::STRING,
        class,
    )
    .unwrap();
    let hints = [
        5u32,
        r.0 as u32,
        r.1 as u32,
        r.2.into(),
        r.3.into(),
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    ];
    conn.change_property32(
        PropMode::REPLACE,
        id,
        AtomEnum::WM_NORMAL_HINTS,
        AtomEnum::WM_SIZE_HINTS,
        &hints,
    )
    .unwrap();
    conn.map_window(id).unwrap();
    id
}

fn main() {
    let display = format!(
        ":{}",
        std::env::var("YUI_BENCH_DISPLAY").unwrap_or_else(|_| "85".into())
    );
    let xvfb = Command::new("Xvfb")
        .args([
            &display,
            "-screen",
            "0",
            "1920x1080x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ])
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb");
    let mut servers = Kill(vec![xvfb]);
    while x11rb::connect(Some(&display)).is_err() {
        std::thread::sleep(Duration::from_millis(20));
    }
    servers.0.push(
        Command::new("openbox")
            .env("DISPLAY", &display)
            .stderr(Stdio::null())
            .spawn()
            .expect("openbox"),
    );
    std::thread::sleep(Duration::from_millis(600));
    let conn = Arc::new(x11rb::connect(Some(&display)).unwrap().0);
    let root = conn.setup().roots[0].root;
    // Something to look at: 60 coloured windows of many sizes.
    for i in 0..60u32 {
        let r = (
            (i * 97 % 1700) as i16,
            (i * 53 % 900) as i16,
            (120 + i * 37 % 500) as u16,
            (80 + i * 29 % 400) as u16,
        );
        window(
            &conn,
            root,
            r,
            i.wrapping_mul(0x0012_3457) & 0x00ff_ffff,
            b"fill\0Fill\0",
            false,
        );
    }
    conn.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));

    let host = X11Desktop::connect(Some(&display), None).unwrap();
    let area = Rect::new(0, 0, 1920, 1080);
    let mut ours = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        let cap = host.capture(area).unwrap();
        let url = yui_core::avatar::capture::to_data_url(cap).unwrap();
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(url.len() > 1000);
    }
    let mut theirs = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "import -display {display} -window root png:- | /usr/bin/convert png:- -resize 1280x1280 -quality 80 jpeg:- | wc -c"
            ))
            .output()
            .unwrap();
        theirs.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(out.status.success());
    }
    let (a, b) = (median(ours), median(theirs));
    println!(
        "capture+resize+JPEG 1920x1080: yui-x11 {a:.1} ms, import+convert {b:.1} ms, ratio {:.3}",
        a / b
    );

    // CPU while the perch is dragged, and while sitting still.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let perch = window(
        &conn,
        root,
        (300, 500, 800, 400),
        0x0020_c020,
        b"perch\0Perch\0",
        false,
    );
    let body_id = window(
        &conn,
        root,
        (1500, 700, 220, 300),
        0x00ff_0000,
        b"body\0Body\0",
        true,
    );
    conn.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let host = X11Desktop::connect(Some(&display), None).unwrap();
    let body = Arc::new(Body {
        conn: conn.clone(),
        id: body_id,
    });
    let avatar = Arc::new(Avatar::new(
        Some(host.clone() as Arc<dyn DesktopHost>),
        Some(body),
        None,
    ));
    let a2 = avatar.clone();
    assert_eq!(
        rt.block_on(async move {
            a2.act(Action::SitOnWindow {
                app: "perch".into(),
            })
            .await
        }),
        Outcome::Ok
    );
    // A separate connection drags the perch (as the window manager would).
    let drag = Arc::new(x11rb::connect(Some(&display)).unwrap().0);
    let c0 = cpu_secs();
    let t = Instant::now();
    let mut i = 0i32;
    while t.elapsed() < Duration::from_secs(10) {
        i += 1;
        let x = 300 + (i % 200) - 100;
        drag.configure_window(perch, &ConfigureWindowAux::new().x(x).y(500))
            .unwrap();
        drag.flush().unwrap();
        std::thread::sleep(Duration::from_millis(16));
    }
    let dragged = cpu_secs() - c0;
    let c1 = cpu_secs();
    std::thread::sleep(Duration::from_secs(60));
    let still = cpu_secs() - c1;
    println!(
        "avatar CPU while the perch is dragged (10 s, {i} moves): {:.1}% of one core; sitting still (60 s): {:.2}% of one core",
        dragged / 10.0 * 100.0,
        still / 60.0 * 100.0
    );
    drop(rt);
}
