//! A user's hands on the X display, for the soak (`soak.rs`): a click and typed text sent as
//! the X server's own input events (XTest), so a soak turn goes in the way a user's does — X →
//! GTK → WebKit → the page — and not through WebDriver's automation, whose own machinery made
//! WebKit's web process grow by megabytes over a few hundred turns (docs/PERFORMANCE.md,
//! "Typed as a user types").

use std::collections::HashMap;
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{self, AtomEnum, ConnectionExt as _, Window};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

/// XTest event types (X11's core event codes).
const KEY_PRESS: u8 = 2;
const KEY_RELEASE: u8 = 3;
const BUTTON_PRESS: u8 = 4;
const BUTTON_RELEASE: u8 = 5;
const MOTION: u8 = 6;

pub struct Hands {
    conn: RustConnection,
    root: Window,
    /// Character → (keycode, with Shift), from the server's keyboard map.
    keys: HashMap<char, (u8, bool)>,
    shift: u8,
    /// Keysym → keycode, for the keys without a character (F9, …).
    syms: HashMap<u32, u8>,
}

pub type Result<T> = std::result::Result<T, String>;

fn err(e: impl std::fmt::Display) -> String {
    format!("X11: {e}")
}

impl Hands {
    /// Connect to `$DISPLAY` and read its keyboard map.
    pub fn connect() -> Result<Self> {
        let (conn, screen) = x11rb::connect(None).map_err(err)?;
        let root = conn.setup().roots[screen].root;
        let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
        let map = conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(err)?
            .reply()
            .map_err(err)?;
        let per = usize::from(map.keysyms_per_keycode.max(1));
        let mut keys = HashMap::new();
        let mut shift = 0;
        let mut by_sym = HashMap::new();
        for (i, syms) in map.keysyms.chunks(per).enumerate() {
            let code = min + i as u8;
            if let Some(&first) = syms.first() {
                by_sym.entry(first).or_insert(code);
            }
            for (col, &sym) in syms.iter().take(2).enumerate() {
                // Latin-1 keysyms are their code points; Return and Shift_L are named.
                let ch = match sym {
                    0xff0d => Some('\n'),
                    0x20..=0x7e => char::from_u32(sym),
                    _ => None,
                };
                if let Some(ch) = ch {
                    keys.entry(ch).or_insert((code, col == 1));
                }
                if sym == 0xffe1 && shift == 0 {
                    shift = code;
                }
            }
        }
        if shift == 0 {
            return Err("X11: no Shift_L key in the keyboard map".into());
        }
        Ok(Self {
            conn,
            root,
            keys,
            shift,
            syms: by_sym,
        })
    }

    fn atom(&self, name: &str) -> Result<u32> {
        Ok(self
            .conn
            .intern_atom(false, name.as_bytes())
            .map_err(err)?
            .reply()
            .map_err(err)?
            .atom)
    }

    /// The top-level window titled `title` (`_NET_WM_NAME`).
    pub fn window(&self, title: &str) -> Result<Window> {
        let (list, name, utf8) = (
            self.atom("_NET_CLIENT_LIST")?,
            self.atom("_NET_WM_NAME")?,
            self.atom("UTF8_STRING")?,
        );
        let clients = self
            .conn
            .get_property(false, self.root, list, AtomEnum::WINDOW, 0, 4096)
            .map_err(err)?
            .reply()
            .map_err(err)?;
        for w in clients.value32().into_iter().flatten() {
            let got = self
                .conn
                .get_property(false, w, name, utf8, 0, 1024)
                .map_err(err)?
                .reply()
                .map_err(err)?;
            if got.value == title.as_bytes() {
                return Ok(w);
            }
        }
        Err(format!("X11: no window titled {title:?}"))
    }

    /// Where `w`'s top-left corner is on the root.
    pub fn origin(&self, w: Window) -> Result<(i16, i16)> {
        let at = self
            .conn
            .translate_coordinates(w, self.root, 0, 0)
            .map_err(err)?
            .reply()
            .map_err(err)?;
        Ok((at.dst_x, at.dst_y))
    }

    /// Whether the keyboard focus is `w` or inside it: the window manager gives the focus on a
    /// click, but on its own time, and keys sent before it did go to the window before.
    pub fn has_focus(&self, w: Window) -> Result<bool> {
        let mut at = self
            .conn
            .get_input_focus()
            .map_err(err)?
            .reply()
            .map_err(err)?
            .focus;
        while at != x11rb::NONE && at != self.root {
            if at == w {
                return Ok(true);
            }
            at = self
                .conn
                .query_tree(at)
                .map_err(err)?
                .reply()
                .map_err(err)?
                .parent;
        }
        Ok(false)
    }

    fn fake(&self, kind: u8, detail: u8, x: i16, y: i16) -> Result<()> {
        self.conn
            .xtest_fake_input(kind, detail, x11rb::CURRENT_TIME, self.root, x, y, 0)
            .map_err(err)?;
        Ok(())
    }

    /// Wait until the server has handled everything sent so far.
    fn sync(&self) -> Result<()> {
        self.conn
            .get_input_focus()
            .map_err(err)?
            .reply()
            .map_err(err)?;
        Ok(())
    }

    /// Move the pointer to (`x`, `y`) on the root and click the left button there.
    pub fn click(&self, x: i16, y: i16) -> Result<()> {
        self.fake(MOTION, 0, x, y)?;
        self.fake(BUTTON_PRESS, xproto::ButtonIndex::M1.into(), 0, 0)?;
        self.fake(BUTTON_RELEASE, xproto::ButtonIndex::M1.into(), 0, 0)?;
        self.sync()
    }

    /// Move the pointer to (`x`, `y`) on the root.
    pub fn move_to(&self, x: i16, y: i16) -> Result<()> {
        self.fake(MOTION, 0, x, y)?;
        self.sync()
    }

    /// Press (`down`) or let go of the left button where the pointer is.
    pub fn button(&self, down: bool) -> Result<()> {
        let kind = if down { BUTTON_PRESS } else { BUTTON_RELEASE };
        self.fake(kind, xproto::ButtonIndex::M1.into(), 0, 0)?;
        self.sync()
    }

    /// Press (`down`) or let go of the key whose first keysym is `keysym` (e.g. 0xffc6, F9).
    pub fn key(&self, keysym: u32, down: bool) -> Result<()> {
        let &code = self
            .syms
            .get(&keysym)
            .ok_or_else(|| format!("X11: no key has keysym {keysym:#x}"))?;
        self.fake(if down { KEY_PRESS } else { KEY_RELEASE }, code, 0, 0)?;
        self.sync()
    }

    /// Type `text` (printable ASCII and `\n` for Return) into the focused window.
    pub fn type_text(&self, text: &str) -> Result<()> {
        for ch in text.chars() {
            let &(code, shifted) = self
                .keys
                .get(&ch)
                .ok_or_else(|| format!("X11: no key types {ch:?}"))?;
            if shifted {
                self.fake(KEY_PRESS, self.shift, 0, 0)?;
            }
            self.fake(KEY_PRESS, code, 0, 0)?;
            self.fake(KEY_RELEASE, code, 0, 0)?;
            if shifted {
                self.fake(KEY_RELEASE, self.shift, 0, 0)?;
            }
        }
        self.sync()
    }
}
