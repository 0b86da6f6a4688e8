//! What a Wayland compositor offers YUI, asked once at start before GTK starts: whether it has
//! the overlay layer (the `zwlr_layer_shell_v1` global) and its outputs (`wl_output`: name,
//! place in the layout, scale). It implements `yui_domain::display::CompositorProbe`; the choice
//! itself is `yui_domain::display::decide`.
//!
//! The connection is its own (GTK has not started), made, asked and closed on the calling
//! thread: no thread is started, because the caller then sets `GDK_BACKEND` while it is the
//! process's only thread. Every wait is bounded by [`TIMEOUT`].

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use wayland_client::protocol::{wl_output, wl_registry};
use wayland_client::{Connection, Dispatch, EventQueue, QueueHandle, WEnum};
use yui_domain::avatar::geometry::Rect;
use yui_domain::display::{CompositorProbe, Output, Probe};

/// How long the compositor has to answer both round trips.
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// The probe of the running session's compositor.
#[derive(Debug, Default, Clone, Copy)]
pub struct Registry;

impl CompositorProbe for Registry {
    fn probe(&self, wayland_display: &str) -> Probe {
        match ask(wayland_display) {
            Ok(found) => found,
            Err(e) => Probe::Failed(e),
        }
    }
}

/// The compositor's socket: `WAYLAND_DISPLAY` as an absolute path, or under `XDG_RUNTIME_DIR`.
fn socket_path(display: &str) -> Result<PathBuf, String> {
    let name = PathBuf::from(display);
    if name.is_absolute() {
        return Ok(name);
    }
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if !dir.is_empty() => Ok(PathBuf::from(dir).join(name)),
        _ => Err("XDG_RUNTIME_DIR is unset".into()),
    }
}

#[derive(Default)]
struct State {
    layer_shell: bool,
    outputs: Vec<Seen>,
}

/// One output as its events describe it.
#[derive(Default)]
struct Seen {
    name: Option<String>,
    position: (i32, i32),
    mode: (i32, i32),
    scale: i32,
}

fn ask(display: &str) -> Result<Probe, String> {
    let path = socket_path(display)?;
    let stream = UnixStream::connect(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let conn = Connection::from_socket(stream).map_err(|e| e.to_string())?;
    let mut queue: EventQueue<State> = conn.new_event_queue();
    let qh = queue.handle();
    conn.display().get_registry(&qh, ());
    let mut state = State::default();
    let deadline = Instant::now() + TIMEOUT;
    // The first round trip lists the globals (and binds the outputs); the second brings the
    // outputs' own events.
    for _ in 0..2 {
        roundtrip(&conn, &mut queue, &mut state, deadline)?;
    }
    let outputs = state
        .outputs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let scale = o.scale.max(1);
            Output {
                name: o
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("output-{}", i + 1)),
                rect: Rect::new(
                    o.position.0,
                    o.position.1,
                    (o.mode.0 / scale).max(0) as u32,
                    (o.mode.1 / scale).max(0) as u32,
                ),
                scale,
            }
        })
        .collect();
    Ok(match state.layer_shell {
        true => Probe::LayerShell { outputs },
        false => Probe::NoLayerShell { outputs },
    })
}

/// `wl_display.sync` and read until its callback fires, never past `deadline`.
fn roundtrip(
    conn: &Connection,
    queue: &mut EventQueue<State>,
    state: &mut State,
    deadline: Instant,
) -> Result<(), String> {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    conn.display().sync(&queue.handle(), done.clone());
    while !done.load(std::sync::atomic::Ordering::Acquire) {
        conn.flush().map_err(|e| e.to_string())?;
        if let Some(guard) = queue.prepare_read() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !readable(guard.connection_fd().as_raw_fd(), left)? {
                return Err(format!("no answer in {} s", TIMEOUT.as_secs()));
            }
            match guard.read() {
                Ok(_) => {}
                Err(wayland_client::backend::WaylandError::Io(e))
                    if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        queue.dispatch_pending(state).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Whether `fd` has something to read within `wait`.
fn readable(fd: i32, wait: Duration) -> Result<bool, String> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // Rounded up: poll's milliseconds cut down would end the wait before its deadline.
    let ms = wait.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    loop {
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n >= 0 {
            return Ok(n > 0);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e.to_string());
        }
    }
}

impl Dispatch<wl_registry::WlRegistry, ()> for State {
    fn event(
        state: &mut Self,
        registry: &wl_registry::WlRegistry,
        event: wl_registry::Event,
        _: &(),
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        if let wl_registry::Event::Global {
            name,
            interface,
            version,
        } = event
        {
            match interface.as_str() {
                "zwlr_layer_shell_v1" => state.layer_shell = true,
                "wl_output" => {
                    let index = state.outputs.len();
                    registry.bind::<wl_output::WlOutput, _, _>(name, version.min(4), qh, index);
                    state.outputs.push(Seen::default());
                }
                _ => {}
            }
        }
    }
}

impl Dispatch<wl_output::WlOutput, usize> for State {
    fn event(
        state: &mut Self,
        _: &wl_output::WlOutput,
        event: wl_output::Event,
        index: &usize,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let Some(o) = state.outputs.get_mut(*index) else {
            return;
        };
        match event {
            wl_output::Event::Geometry { x, y, .. } => o.position = (x, y),
            wl_output::Event::Mode {
                flags: WEnum::Value(flags),
                width,
                height,
                ..
            } if flags.contains(wl_output::Mode::Current) => o.mode = (width, height),
            wl_output::Event::Scale { factor } => o.scale = factor,
            wl_output::Event::Name { name } => o.name = Some(name),
            _ => {}
        }
    }
}

impl
    Dispatch<
        wayland_client::protocol::wl_callback::WlCallback,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    > for State
{
    fn event(
        _: &mut Self,
        _: &wayland_client::protocol::wl_callback::WlCallback,
        event: wayland_client::protocol::wl_callback::Event,
        done: &std::sync::Arc<std::sync::atomic::AtomicBool>,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wayland_client::protocol::wl_callback::Event::Done { .. } = event {
            done.store(true, std::sync::atomic::Ordering::Release);
        }
    }
}
