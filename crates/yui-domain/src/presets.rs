//! Presets: the characters. Each has a persona (the system prompt), avatar and voice settings
//! (JSON), whether its window is open, whether it is the main character, and where its window
//! was last placed. Two defaults (`yui`, main; `kai`) are seeded by the migration, both open.
//!
//! The user makes characters in settings (or `yui preset add/edit/remove/import`): names are
//! unique ignoring case ([`check_name_free`]); the look is a built-in palette or a sprite folder
//! ([`check_avatar`]); the voice is a speech-dispatcher voice type with rate and pitch
//! ([`check_voice`]). [`delete`] removes a character with its transcript, relations and Responses
//! chain in one transaction (docs/characters.md).

use crate::error::{CoreError, Result};
use crate::store::Store;
use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Built-in avatar palettes, handed out in turn to new presets.
pub const PALETTES: &[&str] = &["rose", "sky", "mint", "amber", "lilac", "slate"];

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

/// A character to create: only the name is required; the rest defaults (a persona naming the
/// character, the next built-in palette, the default voice).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NewPreset {
    pub name: String,
    #[serde(default)]
    pub persona: Option<String>,
    #[serde(default)]
    pub avatar: Option<Value>,
    #[serde(default)]
    pub voice: Option<Value>,
    /// Open its window at once (settings does; the CLI leaves it closed unless asked).
    #[serde(default)]
    pub open: bool,
}

/// speech-dispatcher's voice types, the choices of a character's voice (the voice's own list).
pub use crate::voice::VOICE_TYPES;

/// What a character form offers (settings → Characters, `yui preset choices`): the voice types
/// and the palette a new character gets when none is chosen (the built-in palettes with their
/// labels are `looks::offer_new`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choices {
    pub voice_types: Vec<&'static str>,
    pub palettes: Vec<&'static str>,
    pub next_palette: &'static str,
}

/// The choices a character form offers now.
pub fn choices(store: &Store) -> Result<Choices> {
    let sort: i64 = store.read(|c| {
        Ok(
            c.query_row("SELECT COALESCE(MAX(sort), -1) + 1 FROM presets", [], |r| {
                r.get(0)
            })?,
        )
    })?;
    Ok(Choices {
        voice_types: VOICE_TYPES.to_vec(),
        palettes: PALETTES.to_vec(),
        next_palette: palette_for(sort),
    })
}

/// The palette of the character created at display position `sort` when it names none.
fn palette_for(sort: i64) -> &'static str {
    PALETTES[sort.rem_euclid(PALETTES.len() as i64) as usize]
}

/// The longest persona accepted, in characters (a long imported card still fits).
pub const MAX_PERSONA_CHARS: usize = 32_000;

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

/// One write to the presets table; the store's watchers hear of it once it is committed (the
/// windows get the new list). Positions are not news: they change with every drag.
fn write_and_tell<T>(store: &Store, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
    let out = store.write(f)?;
    store.changed(crate::store::changes::Change::Presets);
    Ok(out)
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
    create(
        store,
        &NewPreset {
            name: name.to_string(),
            ..Default::default()
        },
    )
}

/// Create a character that opens on the desktop at once (settings → Characters).
pub fn create_open(store: &Store, new: NewPreset) -> Result<Preset> {
    create(store, &NewPreset { open: true, ..new })
}

/// Create a character (last in display order). Its id is the slug of the name, made unique; the
/// name must not be taken (ignoring case); avatar and voice are checked. Nothing is written when
/// a check fails.
pub fn create(store: &Store, new: &NewPreset) -> Result<Preset> {
    let name = clean_name(&new.name)?;
    let persona = new.persona.as_deref().map(clean_persona).transpose()?;
    if let Some(a) = &new.avatar {
        check_avatar(a)?;
    }
    if let Some(v) = &new.voice {
        check_voice(v)?;
    }
    write_and_tell(store, |tx| {
        check_name_free(tx, &name, None)?;
        let id = unique_id(tx, &slug(&name))?;
        let sort: i64 =
            tx.query_row("SELECT COALESCE(MAX(sort), -1) + 1 FROM presets", [], |r| {
                r.get(0)
            })?;
        let avatar = match &new.avatar {
            Some(a) => a.to_string(),
            None => {
                let palette = palette_for(sort);
                serde_json::json!({"kind": "builtin", "palette": palette}).to_string()
            }
        };
        let voice = new
            .voice
            .as_ref()
            .map_or_else(|| "{}".to_string(), Value::to_string);
        let persona = persona.unwrap_or_else(|| {
            format!(
                "You are {name}, a desktop companion who lives on the user's screen. Speak briefly."
            )
        });
        tx.execute(
            "INSERT INTO presets (id, name, persona, avatar, voice, is_open, is_main, sort)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7)",
            params![id, name, persona, avatar, voice, new.open, sort],
        )?;
        must_find(tx, &id)
    })
}

/// Refuse `name` when another preset (not `except`) has it, ignoring case (Unicode lowercase).
pub fn check_name_free(conn: &Connection, name: &str, except: Option<&str>) -> Result<()> {
    let wanted = name.trim().to_lowercase();
    let mut stmt = conn.prepare_cached("SELECT id, name FROM presets")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (id, other) = row?;
        if Some(id.as_str()) != except && other.trim().to_lowercase() == wanted {
            return Err(CoreError::invalid(format!(
                "a character named {:?} already exists; choose another name",
                other.trim()
            )));
        }
    }
    Ok(())
}

fn clean_persona(persona: &str) -> Result<String> {
    let persona = persona.trim();
    if persona.chars().count() > MAX_PERSONA_CHARS {
        return Err(CoreError::invalid(format!(
            "a persona is at most {MAX_PERSONA_CHARS} characters"
        )));
    }
    Ok(persona.to_string())
}

/// A look is `{"kind":"builtin","palette":<one of PALETTES>}`, `{"kind":"sprites","dir":<an
/// absolute path to a folder>}` (with an optional `"picture"`: an absolute image file path) or
/// `{"kind":"picture","file":<an absolute image file path>}` (docs/sprites.md).
pub fn check_avatar(avatar: &Value) -> Result<()> {
    let obj = avatar
        .as_object()
        .ok_or_else(|| CoreError::invalid("avatar must be a JSON object"))?;
    match obj.get("kind").and_then(Value::as_str) {
        Some("builtin") => {
            let palette = obj.get("palette").and_then(Value::as_str).unwrap_or("");
            if !PALETTES.contains(&palette) {
                return Err(CoreError::invalid(format!(
                    "unknown palette {palette:?}; choose one of {}",
                    PALETTES.join(", ")
                )));
            }
        }
        Some("sprites") => {
            let dir = obj.get("dir").and_then(Value::as_str).unwrap_or("");
            let path = std::path::Path::new(dir);
            if !path.is_absolute() {
                return Err(CoreError::invalid(
                    "a sprite set needs \"dir\": an absolute folder path",
                ));
            }
            if !path.is_dir() {
                return Err(CoreError::invalid(format!(
                    "the sprite folder {dir} is not a folder that can be read"
                )));
            }
            if obj.contains_key("picture") {
                check_picture(obj.get("picture"))?;
            }
        }
        Some("picture") => check_picture(obj.get("file"))?,
        Some("vrm") => check_vrm(obj)?,
        _ => {
            return Err(CoreError::invalid(
                "avatar kind must be \"builtin\" (a palette), \"sprites\" (a folder), \"picture\" (an image file) or \"vrm\" (a VRM model)",
            ))
        }
    }
    Ok(())
}

/// A VRM look (docs/vrm.md): an absolute path to the model file, and the look shown when the
/// model cannot be drawn (any other kind of look; optional).
fn check_vrm(obj: &serde_json::Map<String, Value>) -> Result<()> {
    let file = obj.get("file").and_then(Value::as_str).unwrap_or("");
    let path = std::path::Path::new(file);
    if !path.is_absolute() || !path.is_file() {
        return Err(CoreError::invalid(
            "a VRM look needs \"file\": an absolute path to a .vrm file that exists",
        ));
    }
    match obj.get("fallback").filter(|f| !f.is_null()) {
        Some(f) if f.get("kind") == Some(&Value::from("vrm")) => Err(CoreError::invalid(
            "a VRM look's fallback must be another kind of look",
        )),
        f => f.map_or(Ok(()), check_avatar),
    }
}

/// A still picture of a look: an absolute path to an image file (docs/sprites.md).
fn check_picture(file: Option<&Value>) -> Result<()> {
    let file = file.and_then(Value::as_str).unwrap_or("");
    let path = std::path::Path::new(file);
    if !path.is_absolute() {
        return Err(CoreError::invalid(
            "a picture needs an absolute path to an image file",
        ));
    }
    if !path.is_file() {
        return Err(CoreError::invalid(format!(
            "the picture {file} is not a file that can be read"
        )));
    }
    Ok(())
}

/// A voice is `{}` (the default voice) or any of `voice_type` (one of [`VOICE_TYPES`]), `rate`
/// and `pitch` (integers, -100..=100), `name` (the voice on a speech server) and `engine`
/// (`speech-dispatcher` or `openai`: this character's own engine). Other keys are refused, so a typo is not silently kept.
pub fn check_voice(voice: &Value) -> Result<()> {
    let obj = voice
        .as_object()
        .ok_or_else(|| CoreError::invalid("voice must be a JSON object"))?;
    for (k, v) in obj {
        match k.as_str() {
            "voice_type" => {
                let t = v.as_str().unwrap_or("");
                if !VOICE_TYPES.contains(&t) {
                    return Err(CoreError::invalid(format!(
                        "unknown voice type {v}; choose one of {}",
                        VOICE_TYPES.join(", ")
                    )));
                }
            }
            "rate" | "pitch" => {
                if !v.as_i64().is_some_and(|n| (-100..=100).contains(&n)) {
                    return Err(CoreError::invalid(format!(
                        "voice {k} must be an integer from -100 to 100"
                    )));
                }
            }
            // The character's voice on an OpenAI-compatible speech server (docs/voice.md).
            "name" => {
                if !v
                    .as_str()
                    .is_some_and(|n| !n.trim().is_empty() && n.chars().count() <= 64)
                {
                    return Err(CoreError::invalid(
                        "voice name must be a non-empty string of at most 64 characters",
                    ));
                }
            }
            // The character's own engine, over `yui.voice`'s (docs/voice.md).
            "engine" => {
                crate::voice::canonical_engine(v.as_str().unwrap_or(""))?;
            }
            other => {
                return Err(CoreError::invalid(format!(
                    "unknown voice field {other:?} (known: voice_type, rate, pitch, name, engine)"
                )))
            }
        }
    }
    Ok(())
}

fn set_open(store: &Store, id: &str, open: bool) -> Result<Preset> {
    write_and_tell(store, |tx| {
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

/// Change name, persona, avatar or voice (checked as for [`create`]; a name must stay unique).
pub fn update(store: &Store, id: &str, change: &PresetUpdate) -> Result<Preset> {
    let name = change.name.as_deref().map(clean_name).transpose()?;
    let persona = change.persona.as_deref().map(clean_persona).transpose()?;
    if let Some(a) = &change.avatar {
        check_avatar(a)?;
    }
    if let Some(v) = &change.voice {
        check_voice(v)?;
    }
    write_and_tell(store, |tx| {
        must_find(tx, id)?;
        if let Some(name) = &name {
            check_name_free(tx, name, Some(id))?;
            tx.execute(
                "UPDATE presets SET name = ?2 WHERE id = ?1",
                params![id, name],
            )?;
        }
        if let Some(persona) = &persona {
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

/// What [`delete`] removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deleted {
    pub preset: Preset,
    pub transcript_lines: usize,
    pub relation_rows: usize,
    pub chain_rows: usize,
}

/// Delete a character with everything kept for it, in ONE transaction: its transcript, its
/// relations (its own toward others, others' toward it, their logs and per-turn marks), its
/// Responses chain and its memories. Any failure rolls all of it back. The main character cannot be deleted (make
/// another one main first), nor the last one.
pub fn delete(store: &Store, id: &str) -> Result<Deleted> {
    write_and_tell(store, |tx| {
        let preset = must_find(tx, id)?;
        if preset.is_main {
            return Err(CoreError::invalid(format!(
                "{:?} is the main character; make another character main before deleting it",
                preset.name
            )));
        }
        let transcript_lines = tx.execute("DELETE FROM transcript WHERE preset_id = ?1", [id])?;
        let mut relation_rows = 0;
        for table in ["relations", "relation_log", "relation_turns"] {
            relation_rows += tx.execute(
                &format!(
                    "DELETE FROM {table} WHERE preset_id = ?1
                     OR (target_kind = 'preset' AND target_id = ?1)"
                ),
                [id],
            )?;
        }
        let chain_rows = tx.execute("DELETE FROM response_chain WHERE preset_id = ?1", [id])?;
        // Its memories too (their index entries and vectors go with them: triggers, cascade).
        crate::longterm::delete_preset(tx, id)?;
        tx.execute("DELETE FROM presets WHERE id = ?1", [id])?;
        Ok(Deleted {
            preset,
            transcript_lines,
            relation_rows,
            chain_rows,
        })
    })
}

/// Make `id` the main preset (and open it); the previous main one stays open as a pet.
pub fn set_main(store: &Store, id: &str) -> Result<Preset> {
    write_and_tell(store, |tx| {
        must_find(tx, id)?;
        tx.execute("UPDATE presets SET is_main = 0 WHERE is_main <> 0", [])?;
        tx.execute(
            "UPDATE presets SET is_main = 1, is_open = 1 WHERE id = ?1",
            [id],
        )?;
        must_find(tx, id)
    })
}
