//! How YUI shows its windows on this desktop, chosen once at start before GTK starts: an X11
//! session's windows, native Wayland windows on the overlay layer (zwlr_layer_shell_v1: KDE
//! Plasma, wlroots compositors, COSMIC), or XWayland where the compositor offers no such layer
//! (GNOME's Mutter), where positions and always-on-top still work.
//!
//! [`decide`] is the choice, pure: the user's `yui.display.backend`, what the environment says
//! about the session ([`Session`]) and, only when it matters, what the compositor offers, asked
//! through [`CompositorProbe`] (the platform code: `crates/yui-wayland`). [`places`] keeps where
//! the user put each character, per backend and per output; [`input_region`] where a character
//! window takes clicks (click-through elsewhere).

pub mod input_region;
pub mod layer_desktop;
pub mod noted;
pub mod places;
#[cfg(target_os = "linux")]
pub mod portal;
pub mod shortcuts;
#[cfg(target_os = "linux")]
pub mod shortcuts_portal;
pub mod xwayland;

use crate::avatar::geometry::Rect;
use crate::error::{CoreError, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The user's choice of backend: `auto` (the default), `x11` or `wayland`.
pub const KEY: &str = "yui.display.backend";

/// What the user asked for in [`KEY`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Preference {
    /// The overlay layer where the compositor offers it, else XWayland.
    #[default]
    Auto,
    /// XWayland in a Wayland session (and X11 in an X11 one).
    X11,
    /// Native Wayland windows, on the overlay layer where offered.
    Wayland,
}

impl Preference {
    pub fn from_value(v: &Value) -> Result<Self> {
        serde_json::from_value(v.clone()).map_err(|_| {
            CoreError::invalid(format!("{KEY} must be \"auto\", \"x11\" or \"wayland\""))
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::X11 => "x11",
            Self::Wayland => "wayland",
        }
    }
}

pub fn default_value() -> Value {
    json!("auto")
}

/// The stored [`KEY`], read from the database file at `db` before the store is opened: at start,
/// while the process has one thread (GTK's backend must be set before any other starts), so
/// read-only, without migrations or the store's checkpointer thread. No file, no table, no row,
/// or a value this version cannot read: `auto` (the last is logged).
pub fn stored_preference(db: &std::path::Path) -> Preference {
    use rusqlite::{Connection, OpenFlags, OptionalExtension};
    if !db.is_file() {
        return Preference::Auto;
    }
    let read = || -> rusqlite::Result<Option<String>> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(db, flags)?;
        conn.query_row("SELECT value FROM settings WHERE key = ?1", [KEY], |r| {
            r.get(0)
        })
        .optional()
    };
    match read() {
        Ok(Some(text)) => serde_json::from_str(&text)
            .map_err(CoreError::from)
            .and_then(|v| Preference::from_value(&v))
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e.message, "{KEY} unreadable; auto");
                Preference::Auto
            }),
        Ok(None) => Preference::Auto,
        // A database without the table yet (never started) or damaged: the store says so later.
        Err(_) => Preference::Auto,
    }
}

/// What the environment says about the session, read once at start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Session {
    /// `WAYLAND_DISPLAY`: where a Wayland compositor listens.
    pub wayland_display: Option<String>,
    /// `DISPLAY`: an X server (XWayland in a Wayland session).
    pub x_display: Option<String>,
    /// `XDG_SESSION_TYPE` (`wayland`, `x11`, `tty`): logged, decides nothing on its own.
    pub session_type: Option<String>,
    /// `GDK_BACKEND` as the user set it (by hand, from the old README's advice).
    pub gdk_backend: Option<String>,
}

impl Session {
    /// The session from `var` (the process environment in the app; a table in tests).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Self {
        let set = |k| var(k).filter(|v| !v.trim().is_empty());
        Self {
            wayland_display: set("WAYLAND_DISPLAY"),
            x_display: set("DISPLAY"),
            session_type: set("XDG_SESSION_TYPE"),
            gdk_backend: set("GDK_BACKEND"),
        }
    }
    fn wayland(&self) -> bool {
        self.wayland_display.is_some()
    }
    fn x(&self) -> bool {
        self.x_display.is_some()
    }
    /// The first backend the user's own `GDK_BACKEND` names that GTK would take here.
    fn user_backend(&self) -> Option<&'static str> {
        let named = self.gdk_backend.as_deref()?.split(',').map(str::trim);
        named
            .filter_map(|b| match b {
                "x11" if self.x() => Some("x11"),
                "wayland" if self.wayland() => Some("wayland"),
                _ => None,
            })
            .next()
    }
}

/// One output of the compositor, as the Wayland registry describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Output {
    /// The connector's name (`DP-1`, `HEADLESS-1`), or `output-N` where the compositor has none.
    pub name: String,
    /// Its place in the compositor's layout, in logical pixels.
    pub rect: Rect,
    pub scale: i32,
}

/// What the compositor said when asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// It offers the overlay layer (zwlr_layer_shell_v1).
    LayerShell { outputs: Vec<Output> },
    /// It answered, without the layer shell.
    NoLayerShell { outputs: Vec<Output> },
    /// It could not be asked (no socket, refused, timed out): what happened.
    Failed(String),
}

/// Asks the compositor at `wayland_display` what it offers (platform code, behind this trait so
/// the choice is tested without one).
pub trait CompositorProbe {
    fn probe(&self, wayland_display: &str) -> Probe;
}

/// How the windows are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// An X11 session.
    X11,
    /// The X11 backend in a Wayland session (`GDK_BACKEND=x11` before GTK starts).
    Xwayland,
    /// Native Wayland windows on the overlay layer, placed by anchors and margins.
    LayerShell,
    /// Native Wayland windows without the overlay layer: the compositor places them (the last
    /// resort: no XWayland, no layer shell).
    Wayland,
}

impl Backend {
    /// The name places are saved under (`x11`, `xwayland`, `layer-shell`, `wayland`).
    pub fn key(self) -> &'static str {
        match self {
            Self::X11 => "x11",
            Self::Xwayland => "xwayland",
            Self::LayerShell => "layer-shell",
            Self::Wayland => "wayland",
        }
    }
    /// What `GDK_BACKEND` must say before GTK starts.
    pub fn gdk_backend(self) -> &'static str {
        match self {
            Self::X11 | Self::Xwayland => "x11",
            Self::LayerShell | Self::Wayland => "wayland",
        }
    }
    /// Whether YUI can put a window where it wants and keep it above normal windows.
    pub fn places_windows(self) -> bool {
        self != Self::Wayland
    }
    /// In plain words, for Settings → General.
    pub fn describe(self) -> &'static str {
        match self {
            Self::X11 => "X11 windows",
            Self::Xwayland => "XWayland (X11 windows in the Wayland session)",
            Self::LayerShell => "Native Wayland windows on the overlay layer",
            Self::Wayland => "Native Wayland windows (the compositor places them)",
        }
    }
}

/// Why [`decide`] chose what it chose: what was asked for, and what the session offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub asked: Asked,
    pub found: Found,
}

/// What decided the choice, besides the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// `auto`: the session alone.
    Auto,
    /// `yui.display.backend` named a backend the session has.
    Setting(Preference),
    /// `yui.display.backend` named a backend the session lacks.
    SettingUnavailable(Preference),
    /// The user's own `GDK_BACKEND` (under `auto`).
    UserGdkBackend(&'static str),
}

/// What the session offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    NoWaylandSession,
    /// The compositor was not asked (its answer could change nothing).
    NotAsked,
    LayerShell,
    NoLayerShell {
        xwayland: bool,
    },
    ProbeFailed {
        error: String,
        xwayland: bool,
    },
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let found = match &self.found {
            Found::NoWaylandSession => {
                "this is no Wayland session (WAYLAND_DISPLAY is unset)".into()
            }
            Found::NotAsked => String::new(),
            Found::LayerShell => {
                "the compositor offers the overlay layer (zwlr_layer_shell_v1)".into()
            }
            Found::NoLayerShell { xwayland } => format!(
                "the compositor offers no overlay layer (zwlr_layer_shell_v1){}",
                no_xwayland(*xwayland)
            ),
            Found::ProbeFailed { error, xwayland } => format!(
                "the compositor could not be asked what it offers ({error}){}",
                no_xwayland(*xwayland)
            ),
        };
        let asked = match &self.asked {
            Asked::Auto => String::new(),
            Asked::Setting(p) => format!("{KEY} is {}", p.as_str()),
            Asked::SettingUnavailable(Preference::X11) => {
                format!("{KEY} is x11, but the session has no XWayland (DISPLAY is unset)")
            }
            Asked::SettingUnavailable(p) => format!("{KEY} is {}, but", p.as_str()),
            Asked::UserGdkBackend(b) => format!("GDK_BACKEND={b} was set before YUI started"),
        };
        match (asked.is_empty(), found.is_empty()) {
            (true, _) => f.write_str(&found),
            (false, true) => f.write_str(&asked),
            (false, false) if asked.ends_with(", but") => write!(f, "{asked} {found}"),
            (false, false) => write!(f, "{asked}; {found}"),
        }
    }
}

fn no_xwayland(xwayland: bool) -> &'static str {
    match xwayland {
        true => "",
        false => ", and the session has no XWayland (DISPLAY is unset)",
    }
}

/// The choice made at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub backend: Backend,
    pub reason: Reason,
    pub preference: Preference,
    /// The compositor's outputs where it was asked (the layer shell places windows on them).
    pub outputs: Vec<Output>,
}

/// Said once where XWayland is chosen: what the body cannot see from there.
pub const XWAYLAND_NOTE: &str = "In this Wayland session YUI's windows run through XWayland: \
they stay where you put them and above other windows, but the characters cannot sit on or look \
at windows of native Wayland apps, only on X11 and XWayland ones.";

impl Choice {
    /// The one plain note to show the user about this choice, if any.
    pub fn note(&self) -> Option<&'static str> {
        match self.backend {
            Backend::Xwayland => Some(XWAYLAND_NOTE),
            Backend::Wayland => Some(
                "This compositor offers neither an overlay layer nor XWayland: it decides where \
YUI's windows go and whether other windows cover them.",
            ),
            Backend::X11 | Backend::LayerShell => None,
        }
    }
}

/// The choice: the user's preference first where the session has it, then the user's own
/// `GDK_BACKEND` (under `auto`), then the overlay layer where the compositor offers it, else
/// XWayland, else plain Wayland windows. The compositor is asked only in a Wayland session and
/// only when its answer matters.
pub fn decide(preference: Preference, session: &Session, probe: &dyn CompositorProbe) -> Choice {
    let choice = |backend, asked, found, outputs| Choice {
        backend,
        reason: Reason { asked, found },
        preference,
        outputs,
    };
    let Some(wl) = session.wayland_display.as_deref() else {
        let asked = match preference {
            Preference::Wayland => Asked::SettingUnavailable(preference),
            Preference::X11 => Asked::Setting(preference),
            Preference::Auto => Asked::Auto,
        };
        return choice(Backend::X11, asked, Found::NoWaylandSession, Vec::new());
    };
    let xwayland = session.x();
    let user = session.user_backend();
    let asked = match preference {
        Preference::X11 if xwayland => {
            return choice(
                Backend::Xwayland,
                Asked::Setting(preference),
                Found::NotAsked,
                Vec::new(),
            )
        }
        Preference::Auto if user == Some("x11") => {
            return choice(
                Backend::Xwayland,
                Asked::UserGdkBackend("x11"),
                Found::NotAsked,
                Vec::new(),
            )
        }
        Preference::X11 => Asked::SettingUnavailable(preference),
        Preference::Wayland => Asked::Setting(preference),
        Preference::Auto if user == Some("wayland") => Asked::UserGdkBackend("wayland"),
        Preference::Auto => Asked::Auto,
    };
    // Native windows were asked for (the setting, the user's GDK_BACKEND) or XWayland is missing.
    let native = matches!(asked, Asked::Setting(_) | Asked::UserGdkBackend(_)) || !xwayland;
    let (backend, found, outputs) = match probe.probe(wl) {
        Probe::LayerShell { outputs } => (Backend::LayerShell, Found::LayerShell, outputs),
        Probe::NoLayerShell { outputs } if native => {
            (Backend::Wayland, Found::NoLayerShell { xwayland }, outputs)
        }
        Probe::NoLayerShell { .. } => (
            Backend::Xwayland,
            Found::NoLayerShell { xwayland },
            Vec::new(),
        ),
        Probe::Failed(error) if native => (
            Backend::Wayland,
            Found::ProbeFailed { error, xwayland },
            Vec::new(),
        ),
        Probe::Failed(error) => (
            Backend::Xwayland,
            Found::ProbeFailed { error, xwayland },
            Vec::new(),
        ),
    };
    choice(backend, asked, found, outputs)
}

#[cfg(test)]
mod tests;
