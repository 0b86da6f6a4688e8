//! The global push-to-talk shortcut on the host's own X connection: `XGrabKey` on the root
//! window (with CapsLock and NumLock either way), its press and release read by the event thread
//! that already blocks in `wait_for_event` — no thread of its own and no polling (the
//! tauri-plugin-global-shortcut this replaces checked `XPending` every 50 ms from app start,
//! issue 46). Taken only while the app asks for it: while push-to-talk with a shortcut is on.

use crate::{xerr, X11Desktop};
use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::xkb::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{ConnectionExt as _, GrabMode, Keycode, ModMask};
use x11rb::protocol::ErrorKind;
use yui_domain::avatar::HostError;
use yui_domain::display::shortcuts::{Combo, GlobalShortcut};

/// What the shortcut's press (`true`) and release (`false`) call, on the X event thread.
pub use yui_domain::display::shortcuts::OnKey;

/// A key combination: the modifiers (X's mask bits) and the key's keysym.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortcut {
    pub mods: u16,
    pub keysym: u32,
}

/// The shortcut taken now.
pub(crate) struct Grab {
    keycode: Keycode,
    mods: ModMask,
    on: OnKey,
    /// Between its press and its release (a held key repeats presses only: detectable
    /// auto-repeat is asked for, so one hold is one press and one release).
    pressed: bool,
}

/// CapsLock and NumLock count as modifiers while they are on: the grab is made for each way.
const LOCKS: [u16; 4] = [0, 1 << 1, 1 << 4, (1 << 1) | (1 << 4)];

/// `Ctrl+Alt+Space`-style text (read by the domain's [`Combo::parse`]) as X's modifier bits
/// and keysym, in plain words when it is not a key combination.
pub(crate) fn parse(spec: &str) -> Result<Shortcut, String> {
    let combo = Combo::parse(spec).map_err(|e| e.to_string())?;
    let m = combo.mods;
    let mods = [
        (m.ctrl, ModMask::CONTROL),
        (m.alt, ModMask::M1),
        (m.shift, ModMask::SHIFT),
        (m.logo, ModMask::M4),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .fold(0u16, |acc, (_, bit)| acc | u16::from(bit));
    let keysym = keysym(combo.key)
        .ok_or_else(|| format!("{spec:?} is not a key combination such as Ctrl+Alt+Space"))?;
    Ok(Shortcut { mods, keysym })
}

/// The keysym of an xkbcommon key name as [`Combo`] spells it.
fn keysym(name: &str) -> Option<u32> {
    if let [c] = name.as_bytes() {
        // Letters (lower case) and digits are their own ASCII code.
        return c.is_ascii_alphanumeric().then_some(u32::from(*c));
    }
    if let Some(n) = name.strip_prefix('F').and_then(|n| n.parse::<u32>().ok()) {
        return (1..=24).contains(&n).then_some(0xffbe + n - 1);
    }
    Some(match name {
        "grave" => u32::from(b'`'),
        "backslash" => u32::from(b'\\'),
        "bracketleft" => u32::from(b'['),
        "bracketright" => u32::from(b']'),
        "comma" => u32::from(b','),
        "equal" => u32::from(b'='),
        "minus" => u32::from(b'-'),
        "period" => u32::from(b'.'),
        "apostrophe" => u32::from(b'\''),
        "semicolon" => u32::from(b';'),
        "slash" => u32::from(b'/'),
        "space" => 0x20,
        "Return" => 0xff0d,
        "Tab" => 0xff09,
        "Escape" => 0xff1b,
        "BackSpace" => 0xff08,
        "Delete" => 0xffff,
        "Insert" => 0xff63,
        "Home" => 0xff50,
        "End" => 0xff57,
        "Prior" => 0xff55,
        "Next" => 0xff56,
        "Left" => 0xff51,
        "Up" => 0xff52,
        "Right" => 0xff53,
        "Down" => 0xff54,
        "Pause" => 0xff13,
        "Print" => 0xff61,
        "Scroll_Lock" => 0xff14,
        _ => return None,
    })
}

impl X11Desktop {
    /// Take `spec` as the global shortcut (giving back the one taken before); `on` hears its
    /// presses and releases. Refused in plain words when the text is not a key combination, no
    /// key of this keyboard makes it, or another program holds it.
    pub fn take_shortcut(&self, spec: &str, on: OnKey) -> Result<(), HostError> {
        let s = parse(spec).map_err(HostError::Unavailable)?;
        self.give_back_shortcut();
        self.detectable_auto_repeat();
        let keycode = self.keycode_of(s.keysym)?.ok_or_else(|| {
            HostError::unavailable(format!("no key of this keyboard makes {spec}"))
        })?;
        let mods = ModMask::from(s.mods);
        for lock in LOCKS {
            let m = mods | ModMask::from(lock);
            let grabbed = self
                .conn
                .grab_key(
                    false,
                    self.root,
                    m,
                    keycode,
                    GrabMode::ASYNC,
                    GrabMode::ASYNC,
                )
                .map_err(xerr)?
                .check();
            if let Err(e) = grabbed {
                self.ungrab(keycode, mods);
                return Err(match e {
                    ReplyError::X11Error(x) if x.error_kind == ErrorKind::Access => {
                        HostError::unavailable(format!("another program holds {spec}"))
                    }
                    e => xerr(e),
                });
            }
        }
        *self.grab() = Some(Grab {
            keycode,
            mods,
            on,
            pressed: false,
        });
        Ok(())
    }

    /// Give the shortcut back (nothing when none is taken); a hold in progress is released.
    pub fn give_back_shortcut(&self) {
        let Some(g) = self.grab().take() else { return };
        self.ungrab(g.keycode, g.mods);
        if g.pressed {
            (g.on)(false);
        }
    }

    /// Whether a shortcut is taken now.
    pub fn has_shortcut(&self) -> bool {
        self.grab().is_some()
    }

    fn grab(&self) -> std::sync::MutexGuard<'_, Option<Grab>> {
        self.shortcut.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn ungrab(&self, keycode: Keycode, mods: ModMask) {
        for lock in LOCKS {
            if let Ok(c) = self
                .conn
                .ungrab_key(keycode, self.root, mods | ModMask::from(lock))
            {
                c.ignore_error();
            }
        }
        let _ = self.conn.flush();
    }

    /// A held key sends presses only, not a release and a press per repeat (XKB; without it
    /// a hold would be many short ones).
    fn detectable_auto_repeat(&self) {
        let asked = self
            .conn
            .xkb_use_extension(1, 0)
            .ok()
            .and_then(|c| c.reply().ok());
        if asked.is_some_and(|r| r.supported) {
            let flag = xkb::PerClientFlag::DETECTABLE_AUTO_REPEAT;
            let device = xkb::ID::USE_CORE_KBD.into();
            let none = Default::default();
            if let Ok(c) = self
                .conn
                .xkb_per_client_flags(device, flag, flag, none, none, none)
            {
                let _ = c.reply();
            }
        }
    }

    /// The first keycode whose keysyms include `keysym`.
    fn keycode_of(&self, keysym: u32) -> Result<Option<Keycode>, HostError> {
        let setup = self.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let map = self
            .conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(xerr)?
            .reply()
            .map_err(xerr)?;
        let per = usize::from(map.keysyms_per_keycode.max(1));
        Ok(map
            .keysyms
            .chunks(per)
            .position(|syms| syms.contains(&keysym))
            .and_then(|i| u8::try_from(i).ok())
            .map(|i| min + i))
    }
}

/// The X11 grab behind the domain's seam (X11 sessions and XWayland).
impl GlobalShortcut for X11Desktop {
    fn take(&self, spec: &str, on: OnKey) -> Result<(), HostError> {
        self.take_shortcut(spec, on)
    }
    fn give_back(&self) {
        self.give_back_shortcut();
    }
}

/// A key event read by the event thread: the shortcut's first press and its release go to its
/// handler (called outside the lock, so it may take or give back the shortcut itself).
pub(crate) fn key_event(host: &X11Desktop, keycode: Keycode, down: bool) {
    let on = {
        let mut g = host.grab();
        let Some(g) = g.as_mut().filter(|g| g.keycode == keycode) else {
            return;
        };
        if g.pressed == down {
            return; // a repeat
        }
        g.pressed = down;
        g.on.clone()
    };
    on(down);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortcuts_parse_as_the_settings_write_them() {
        let ctrl = u16::from(ModMask::CONTROL);
        let alt = u16::from(ModMask::M1);
        let p = |s: &str| parse(s).unwrap();
        assert_eq!(
            p("Ctrl+Alt+Space"),
            Shortcut {
                mods: ctrl | alt,
                keysym: 0x20
            }
        );
        assert_eq!(p("shift+F5").keysym, 0xffc2);
        assert_eq!(p("Super+KeyK").keysym, u32::from(b'k'));
        assert_eq!(p("Ctrl+7").keysym, u32::from(b'7'));
        assert_eq!(
            p("F12"),
            Shortcut {
                mods: 0,
                keysym: 0xffc9
            }
        );
        for bad in ["", "Ctrl+", "Ctrl+Alt", "Ctrl+Space+A", "Ctrl+Nope", "F25"] {
            assert_eq!(
                parse(bad).unwrap_err(),
                format!("{bad:?} is not a key combination such as Ctrl+Alt+Space")
            );
        }
    }
}
