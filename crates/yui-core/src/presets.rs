//! Presets: the characters. Each has a persona (the system prompt), avatar and voice settings
//! (JSON), whether its window is open, whether it is the main character, and where its window
//! was last placed. Two defaults (`yui`, main; `kai`) are seeded by the migration, both open.

use crate::error::{CoreError, Result};
use crate::store::Store;
use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Built-in avatar palettes, handed out in turn to new presets.
const PALETTES: &[&str] = &["rose", "sky", "mint", "amber", "lilac", "slate"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preset {
    pub id: String,
    pub name: String,
    /// The system prompt.
    pub persona: String,
    /// JSON: `{"kind":"builtin","palette":"rose"}` or a sprite folder.
    pub avatar: Value,
    /// JSON: voice engine settings.
    pub voice: Value,
    pub is_open: bool,
    /// The preset shown in the main window.
    pub is_main: bool,
    pub pos_x: Option<i32>,
    pub pos_y: Option<i32>,
    pub sort: i64,
}

/// Fields to change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PresetUpdate {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub persona: Option<String>,
    #[serde(default)]
    pub avatar: Option<Value>,
    #[serde(default)]
    pub voice: Option<Value>,
}

const COLUMNS: &str = "id, name, persona, avatar, voice, is_open, is_main, pos_x, pos_y, sort";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Preset> {
    let avatar: String = r.get(3)?;
    let voice: String = r.get(4)?;
    Ok(Preset {
        id: r.get(0)?,
        name: r.get(1)?,
        persona: r.get(2)?,
        // A hand-edited row with bad JSON reads as null rather than failing the whole list.
        avatar: serde_json::from_str(&avatar).unwrap_or(Value::Null),
        voice: serde_json::from_str(&voice).unwrap_or(Value::Null),
        is_open: r.get(5)?,
        is_main: r.get(6)?,
        pos_x: r.get(7)?,
        pos_y: r.get(8)?,
        sort: r.get(9)?,
    })
}

fn find(conn: &Connection, id: &str) -> Result<Option<Preset>> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM presets WHERE id = ?1"),
            [id],
            from_row,
        )
        .optional()?)
}

fn must_find(conn: &Connection, id: &str) -> Result<Preset> {
    find(conn, id)?.ok_or_else(|| CoreError::not_found(format!("no preset with id {id:?}")))
}

/// All presets, in display order (`sort`, then id).
pub fn list(store: &Store) -> Result<Vec<Preset>> {
    store.read(|c| {
        let mut stmt = c.prepare(&format!("SELECT {COLUMNS} FROM presets ORDER BY sort, id"))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

/// The open presets, in display order.
pub fn list_open(store: &Store) -> Result<Vec<Preset>> {
    Ok(list(store)?.into_iter().filter(|p| p.is_open).collect())
}

pub fn get(store: &Store, id: &str) -> Result<Preset> {
    store.read(|c| must_find(c, id))
}

/// The main preset (the one in the main window). Falls back to the first preset if no row is
/// marked main (e.g. after a hand edit).
pub fn main_preset(store: &Store) -> Result<Preset> {
    let mut all = list(store)?;
    if all.is_empty() {
        return Err(CoreError::not_found("there are no presets"));
    }
    let main = all.iter().position(|p| p.is_main).unwrap_or(0);
    Ok(all.swap_remove(main))
}

fn clean_name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() {
        return Err(CoreError::invalid("a preset name must not be empty"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(CoreError::invalid(format!(
            "a preset name is at most {MAX_NAME_CHARS} characters"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(CoreError::invalid(
            "a preset name must not contain control characters",
        ));
    }
    Ok(name.to_string())
}

/// The id made from a name: lowercase ASCII letters and digits, other runs become one `-`.
/// The result is also a valid window label (`pet-<id>`).
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    let out: String = out.chars().take(40).collect();
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "preset".to_string()
    } else {
        out.to_string()
    }
}

fn unique_id(tx: &Transaction<'_>, base: &str) -> Result<String> {
    let taken = |id: &str| -> Result<bool> {
        Ok(tx
            .query_row("SELECT 1 FROM presets WHERE id = ?1", [id], |_| Ok(()))
            .optional()?
            .is_some())
    };
    if !taken(base)? {
        return Ok(base.to_string());
    }
    let mut n: u64 = 2;
    loop {
        let id = format!("{base}-{n}");
        if !taken(&id)? {
            return Ok(id);
        }
        n += 1;
    }
}

/// Add a preset named `name` (closed, last in order). Its id is the slug of the name, made unique.
pub fn add(store: &Store, name: &str) -> Result<Preset> {
    let name = clean_name(name)?;
    store.write(|tx| {
        let id = unique_id(tx, &slug(&name))?;
        let sort: i64 =
            tx.query_row("SELECT COALESCE(MAX(sort), -1) + 1 FROM presets", [], |r| {
                r.get(0)
            })?;
        let palette = PALETTES[sort.rem_euclid(PALETTES.len() as i64) as usize];
        let avatar = serde_json::json!({"kind": "builtin", "palette": palette}).to_string();
        let persona = format!(
            "You are {name}, a desktop companion who lives on the user's screen. Speak briefly."
        );
        tx.execute(
            "INSERT INTO presets (id, name, persona, avatar, voice, is_open, is_main, sort)
             VALUES (?1, ?2, ?3, ?4, '{}', 0, 0, ?5)",
            params![id, name, persona, avatar, sort],
        )?;
        must_find(tx, &id)
    })
}

fn set_open(store: &Store, id: &str, open: bool) -> Result<Preset> {
    store.write(|tx| {
        let p = must_find(tx, id)?;
        if !open && p.is_main {
            return Err(CoreError::invalid(format!(
                "{id:?} is the main character and cannot be closed; make another preset the main one first"
            )));
        }
        tx.execute(
            "UPDATE presets SET is_open = ?2 WHERE id = ?1",
            params![id, open],
        )?;
        must_find(tx, id)
    })
}

/// Mark a preset open (its window is shown, and restored at the next start).
pub fn open(store: &Store, id: &str) -> Result<Preset> {
    set_open(store, id, true)
}

/// Open a preset and say which placement slot its window takes when it has no saved position:
/// the open presets count from slot 0 (main), and the one opened last takes the last slot.
pub fn open_with_slot(store: &Store, id: &str) -> Result<(Preset, usize)> {
    let preset = open(store, id)?;
    let slot = list_open(store)?.len().saturating_sub(1);
    Ok((preset, slot))
}

/// Mark a preset closed. The main preset cannot be closed.
pub fn close(store: &Store, id: &str) -> Result<Preset> {
    set_open(store, id, false)
}

/// Remember where a preset's window was placed (physical pixels, top-left).
pub fn set_position(store: &Store, id: &str, x: i32, y: i32) -> Result<()> {
    store.write(|tx| {
        let n = tx.execute(
            "UPDATE presets SET pos_x = ?2, pos_y = ?3 WHERE id = ?1",
            params![id, x, y],
        )?;
        if n == 0 {
            return Err(CoreError::not_found(format!("no preset with id {id:?}")));
        }
        Ok(())
    })
}

/// Change name, persona, avatar or voice.
pub fn update(store: &Store, id: &str, change: &PresetUpdate) -> Result<Preset> {
    let name = change.name.as_deref().map(clean_name).transpose()?;
    for (what, v) in [("avatar", &change.avatar), ("voice", &change.voice)] {
        if v.as_ref().is_some_and(|v| !v.is_object()) {
            return Err(CoreError::invalid(format!("{what} must be a JSON object")));
        }
    }
    store.write(|tx| {
        must_find(tx, id)?;
        if let Some(name) = &name {
            tx.execute(
                "UPDATE presets SET name = ?2 WHERE id = ?1",
                params![id, name],
            )?;
        }
        if let Some(persona) = &change.persona {
            tx.execute(
                "UPDATE presets SET persona = ?2 WHERE id = ?1",
                params![id, persona],
            )?;
        }
        if let Some(avatar) = &change.avatar {
            tx.execute(
                "UPDATE presets SET avatar = ?2 WHERE id = ?1",
                params![id, avatar.to_string()],
            )?;
        }
        if let Some(voice) = &change.voice {
            tx.execute(
                "UPDATE presets SET voice = ?2 WHERE id = ?1",
                params![id, voice.to_string()],
            )?;
        }
        must_find(tx, id)
    })
}

/// Make `id` the main preset (and open it); the previous main one stays open as a pet.
pub fn set_main(store: &Store, id: &str) -> Result<Preset> {
    store.write(|tx| {
        must_find(tx, id)?;
        tx.execute("UPDATE presets SET is_main = 0 WHERE is_main <> 0", [])?;
        tx.execute(
            "UPDATE presets SET is_main = 1, is_open = 1 WHERE id = ?1",
            [id],
        )?;
        must_find(tx, id)
    })
}
