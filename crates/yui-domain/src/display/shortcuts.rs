//! The global push-to-talk shortcut's seam: where a key combination held anywhere on the desktop
//! is taken. Two ways stand behind [`GlobalShortcut`]: the X11 grab on the desktop host's own
//! connection (`yui_x11::hotkey`, X11 sessions and XWayland) and the desktop's GlobalShortcuts
//! portal (`shortcuts_portal.rs`, native Wayland sessions, where no client may grab keys).
//!
//! The setting's text (`Ctrl+Alt+Space`) is read once here, [`Combo::parse`], into modifiers and
//! the key's xkbcommon name: the X11 grab looks the name's keysym up, the portal sends it as the
//! preferred trigger in the shortcuts specification's form (`CTRL+ALT+space`).

use crate::avatar::HostError;
use std::sync::Arc;

/// What the shortcut's press (`true`) and release (`false`) call, in order, on the thread that
/// hears them.
pub type OnKey = Arc<dyn Fn(bool) + Send + Sync>;

/// Where the global shortcut is taken.
pub trait GlobalShortcut: Send + Sync {
    /// Take `spec` (giving back the one taken before); `on` hears its presses and releases.
    /// Refused in plain words (the text is not a key combination, another program holds it, the
    /// desktop has no way or declined).
    fn take(&self, spec: &str, on: OnKey) -> Result<(), HostError>;
    /// Give it back (nothing when none is taken); a hold in progress is released.
    fn give_back(&self);
    /// How the desktop describes the keys bound now, where the desktop chooses them (the
    /// portal's `trigger_description`, which follows the user's rebinding in the desktop's
    /// settings); `None` where the setting's own keys are grabbed, or nothing is taken.
    fn trigger(&self) -> Option<String> {
        None
    }
}

/// The modifiers of a combination.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mods {
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
    /// Super, the "Windows" key (xkbcommon's `Mod4`, the specification's `LOGO`).
    pub logo: bool,
}

/// A key combination as the settings write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Combo {
    pub mods: Mods,
    /// The key's keysym name in xkbcommon's spelling (`space`, `a`, `7`, `F5`, `Return`,
    /// `bracketleft`).
    pub key: &'static str,
}

/// Text that is not a key combination, in plain words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a key combination such as Ctrl+Alt+Space")]
pub struct NotACombo(pub String);

impl Combo {
    /// `Ctrl+Alt+Space`-style text (modifiers `Ctrl`/`Control`, `Alt`/`Option`, `Shift`,
    /// `Super`/`Cmd`/`Command`/`Meta`, `CommandOrControl`; then one key), in plain words when
    /// it is not one.
    pub fn parse(spec: &str) -> Result<Combo, NotACombo> {
        let bad = || NotACombo(spec.to_string());
        let mut mods = Mods::default();
        let mut key = None;
        for token in spec.split('+').map(str::trim) {
            if token.is_empty() || key.is_some() {
                return Err(bad());
            }
            match token.to_ascii_uppercase().as_str() {
                "CTRL" | "CONTROL" | "COMMANDORCONTROL" | "CMDORCTRL" | "COMMANDORCTRL"
                | "CMDORCONTROL" => mods.ctrl = true,
                "ALT" | "OPTION" => mods.alt = true,
                "SHIFT" => mods.shift = true,
                "SUPER" | "CMD" | "COMMAND" | "META" => mods.logo = true,
                _ => key = Some(key_name(token).ok_or_else(bad)?),
            }
        }
        Ok(Combo {
            mods,
            key: key.ok_or_else(bad)?,
        })
    }

    /// The shortcuts specification's trigger (`CTRL+ALT+space`): the portal's
    /// `preferred_trigger`.
    pub fn trigger(&self) -> String {
        let m = self.mods;
        let mut parts: Vec<&str> = [
            (m.ctrl, "CTRL"),
            (m.alt, "ALT"),
            (m.shift, "SHIFT"),
            (m.logo, "LOGO"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        parts.push(self.key);
        parts.join("+")
    }
}

const LETTERS: [&str; 26] = [
    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s",
    "t", "u", "v", "w", "x", "y", "z",
];
const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
const FKEYS: [&str; 24] = [
    "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12", "F13", "F14", "F15",
    "F16", "F17", "F18", "F19", "F20", "F21", "F22", "F23", "F24",
];

/// A key's xkbcommon name by the names the settings use (`Space`, `A`, `KeyA`, `7`, `Digit7`,
/// `F5`, `Enter`, `Up`, `[`…).
fn key_name(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    let upper = upper
        .strip_prefix("KEY")
        .filter(|r| r.len() == 1)
        .or_else(|| upper.strip_prefix("DIGIT").filter(|r| r.len() == 1))
        .unwrap_or(&upper);
    if let [c] = upper.as_bytes() {
        return Some(match c {
            b'A'..=b'Z' => LETTERS[usize::from(c - b'A')],
            b'0'..=b'9' => DIGITS[usize::from(c - b'0')],
            b'`' => "grave",
            b'\\' => "backslash",
            b'[' => "bracketleft",
            b']' => "bracketright",
            b',' => "comma",
            b'=' => "equal",
            b'-' => "minus",
            b'.' => "period",
            b'\'' => "apostrophe",
            b';' => "semicolon",
            b'/' => "slash",
            _ => return None,
        });
    }
    if let Some(n) = upper
        .strip_prefix('F')
        .and_then(|n| n.parse::<usize>().ok())
    {
        return FKEYS.get(n.checked_sub(1)?).copied();
    }
    Some(match upper {
        "SPACE" => "space",
        "ENTER" | "RETURN" => "Return",
        "TAB" => "Tab",
        "ESCAPE" | "ESC" => "Escape",
        "BACKSPACE" => "BackSpace",
        "DELETE" => "Delete",
        "INSERT" => "Insert",
        "HOME" => "Home",
        "END" => "End",
        "PAGEUP" => "Prior",
        "PAGEDOWN" => "Next",
        "LEFT" | "ARROWLEFT" => "Left",
        "UP" | "ARROWUP" => "Up",
        "RIGHT" | "ARROWRIGHT" => "Right",
        "DOWN" | "ARROWDOWN" => "Down",
        "PAUSE" => "Pause",
        "PRINTSCREEN" => "Print",
        "SCROLLLOCK" => "Scroll_Lock",
        _ => return None,
    })
}

/// Ways tried in order: the first that takes the shortcut holds it; one that this desktop does
/// not have at all ([`HostError::Unsupported`]: no portal) hands over to the next, any other
/// refusal (declined, held by another program) is the answer.
pub struct FirstOf(pub Vec<Arc<dyn GlobalShortcut>>);

impl GlobalShortcut for FirstOf {
    fn take(&self, spec: &str, on: OnKey) -> Result<(), HostError> {
        let mut last = HostError::Unsupported("no way to take a global shortcut here".into());
        for way in &self.0 {
            match way.take(spec, on.clone()) {
                Err(e @ HostError::Unsupported(_)) => {
                    tracing::info!(error = %e, "global shortcut: trying the next way");
                    last = e;
                }
                done => return done,
            }
        }
        Err(last)
    }
    fn give_back(&self) {
        for way in &self.0 {
            way.give_back();
        }
    }
    fn trigger(&self) -> Option<String> {
        self.0.iter().find_map(|w| w.trigger())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A way that answers as told and counts what it was asked.
    struct Way(Result<(), HostError>, Mutex<(u32, u32)>);
    impl GlobalShortcut for Way {
        fn take(&self, _: &str, _: OnKey) -> Result<(), HostError> {
            self.1.lock().unwrap().0 += 1;
            self.0.clone()
        }
        fn give_back(&self) {
            self.1.lock().unwrap().1 += 1;
        }
    }

    #[test]
    fn a_way_this_desktop_lacks_hands_over_to_the_next_and_a_refusal_is_the_answer() {
        let way = |r| Arc::new(Way(r, Mutex::new((0, 0))));
        let on: OnKey = Arc::new(|_| {});
        let (none, grab) = (
            way(Err(HostError::Unsupported("no portal".into()))),
            way(Ok(())),
        );
        let both = FirstOf(vec![none.clone(), grab.clone()]);
        assert!(both.take("F9", on.clone()).is_ok());
        both.give_back();
        assert_eq!(*none.1.lock().unwrap(), (1, 1));
        assert_eq!(*grab.1.lock().unwrap(), (1, 1));
        let declined = way(Err(HostError::unavailable(
            "the desktop declined the shortcut",
        )));
        let grab = way(Ok(()));
        let e = FirstOf(vec![declined, grab.clone()]).take("F9", on.clone());
        assert_eq!(
            e.unwrap_err().to_string(),
            "the desktop declined the shortcut"
        );
        assert_eq!(grab.1.lock().unwrap().0, 0, "a refusal is not overridden");
        let e = FirstOf(vec![way(Err(HostError::Unsupported("no portal".into())))]).take("F9", on);
        assert_eq!(e.unwrap_err().to_string(), "no portal");
    }

    #[test]
    fn combinations_parse_as_the_settings_write_them_into_the_specification_s_triggers() {
        let t = |s: &str| Combo::parse(s).unwrap().trigger();
        assert_eq!(t("Ctrl+Alt+Space"), "CTRL+ALT+space");
        assert_eq!(t("shift+F5"), "SHIFT+F5");
        assert_eq!(t("Super+KeyK"), "LOGO+k");
        assert_eq!(t("Alt+Ctrl+Digit7"), "CTRL+ALT+7");
        assert_eq!(t("Meta+Shift+["), "SHIFT+LOGO+bracketleft");
        assert_eq!(t("CommandOrControl+Enter"), "CTRL+Return");
        assert_eq!(t("F12"), "F12");
        assert_eq!(t("Ctrl+PageDown"), "CTRL+Next");
        for bad in [
            "",
            "Ctrl+",
            "Ctrl+Alt",
            "Ctrl+Space+A",
            "Ctrl+Nope",
            "F25",
            "F0",
        ] {
            assert_eq!(
                Combo::parse(bad).unwrap_err().to_string(),
                format!("{bad:?} is not a key combination such as Ctrl+Alt+Space")
            );
        }
    }
}
