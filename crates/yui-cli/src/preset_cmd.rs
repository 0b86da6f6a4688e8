//! `yui preset`: list, add, edit, remove, import, open and close characters, and choose the main
//! one (the same core calls as settings → Characters).

use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use yui_core::looks::{self, CardImport};
use yui_core::presets::{self, NewPreset, PresetUpdate};
use yui_core::{cards, vrm, CoreError, Store};

/// A VRM model rather than a card: named `.vrm`, or a glTF binary whatever its name.
fn is_vrm(file: &Path) -> bool {
    use std::io::Read;
    let named = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("vrm"));
    let mut magic = [0u8; 4];
    named
        || std::fs::File::open(file)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok_and(|()| &magic == b"glTF")
}

#[derive(Debug, Subcommand)]
pub enum PresetCmd {
    /// Print every preset (display order).
    List,
    /// Print what a character may be given: voice types, palettes, and the palette a new
    /// character gets when none is named (as the settings form offers them).
    Choices,
    /// Add a character; its id is made from the name (names are unique, ignoring case).
    /// Prints the new preset.
    Add {
        name: String,
        #[command(flatten)]
        fields: Fields,
        /// Open its window (at once in a running app, else at the next start).
        #[arg(long)]
        open: bool,
    },
    /// Change a character's name, persona, look or voice. Prints the preset.
    Edit {
        id: String,
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        fields: Fields,
    },
    /// Delete a character with its transcript, relations and Responses chain (one transaction).
    /// Needs --yes. Prints what was removed.
    Remove {
        id: String,
        /// Confirm: the character's whole history goes with it.
        #[arg(long)]
        yes: bool,
    },
    /// Import a character card (Character Card V2/V3 JSON, or a PNG card with a `chara`/`ccv3`
    /// chunk) as a new character, with its picture as its look. An expression pack in a folder
    /// beside the card named as the card (or the character) is taken too, unless --no-sprites.
    /// Prints the new preset, `picture`, `pack` and `notes`.
    ///
    /// A VRM model (`.vrm`, VRM 1.0 or 0.x) makes a new character drawn with the model, named as
    /// its meta says; prints the new preset, `model` (meta, expressions, textures) and `licence`
    /// (the model's own terms, docs/vrm.md).
    Import {
        file: PathBuf,
        #[arg(long)]
        open: bool,
        /// The new character's name (a card's or a model's own name otherwise).
        #[arg(long)]
        name: Option<String>,
        /// An expression pack (a sprite folder, SillyTavern labels or YUI ids) to copy with it.
        #[arg(long, conflicts_with = "no_sprites")]
        sprites: Option<PathBuf>,
        /// Do not take the folder beside the card.
        #[arg(long)]
        no_sprites: bool,
    },
    /// Make a preset the main character (it opens; the previous main one stays open as a pet).
    Main { id: String },
    /// Mark a preset open (its window shows at the next start). Prints the preset.
    Open { id: String },
    /// Mark a preset closed. The main preset cannot be closed. Prints the preset.
    Close { id: String },
}

/// The editable fields of a character (all optional).
#[derive(Debug, Args)]
pub struct Fields {
    /// The persona (system prompt).
    #[arg(long)]
    persona: Option<String>,
    /// The look: a built-in palette (rose, sky, mint, amber, lilac, slate).
    #[arg(long, conflicts_with = "sprites")]
    palette: Option<String>,
    /// The look: a sprite-set folder (absolute path; docs/sprites.md).
    #[arg(long, value_name = "DIR")]
    sprites: Option<PathBuf>,
    /// The voice: a speech-dispatcher voice type (male1…3, female1…3, child_male, child_female),
    /// or `default`.
    #[arg(long)]
    voice_type: Option<String>,
    /// The voice's rate, -100..100.
    #[arg(long, allow_hyphen_values = true)]
    rate: Option<i64>,
    /// The voice's pitch, -100..100.
    #[arg(long, allow_hyphen_values = true)]
    pitch: Option<i64>,
}

impl Fields {
    fn avatar(&self) -> Option<Value> {
        if let Some(dir) = &self.sprites {
            let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
            return Some(json!({"kind": "sprites", "dir": dir.display().to_string()}));
        }
        self.palette
            .as_ref()
            .map(|p| json!({"kind": "builtin", "palette": p}))
    }

    /// The voice with these flags applied over `base` (the stored voice when editing).
    fn voice(&self, base: Option<&Value>) -> Option<Value> {
        if self.voice_type.is_none() && self.rate.is_none() && self.pitch.is_none() {
            return None;
        }
        let mut v: Map<String, Value> =
            base.and_then(Value::as_object).cloned().unwrap_or_default();
        match self.voice_type.as_deref() {
            Some("default") => {
                v.remove("voice_type");
            }
            Some(t) => {
                v.insert("voice_type".into(), json!(t));
            }
            None => {}
        }
        for (k, n) in [("rate", self.rate), ("pitch", self.pitch)] {
            if let Some(n) = n {
                v.insert(k.into(), json!(n));
            }
        }
        Some(Value::Object(v))
    }
}

pub fn run(store: &Store, data_dir: &Path, cmd: &PresetCmd) -> Result<Value, CoreError> {
    let out = match cmd {
        PresetCmd::List => serde_json::to_value(presets::list(store)?)?,
        PresetCmd::Choices => serde_json::to_value(presets::choices(store)?)?,
        PresetCmd::Add { name, fields, open } => {
            let new = NewPreset {
                name: name.clone(),
                persona: fields.persona.clone(),
                avatar: fields.avatar(),
                voice: fields.voice(None),
                open: *open,
            };
            serde_json::to_value(presets::create(store, &new)?)?
        }
        PresetCmd::Edit { id, name, fields } => {
            let current = presets::get(store, id)?;
            let change = PresetUpdate {
                name: name.clone(),
                persona: fields.persona.clone(),
                avatar: fields.avatar(),
                voice: fields.voice(Some(&current.voice)),
            };
            serde_json::to_value(presets::update(store, id, &change)?)?
        }
        PresetCmd::Remove { id, yes } => {
            let preset = presets::get(store, id)?;
            if !yes {
                return Err(CoreError::invalid(format!(
                    "this deletes {:?} with its transcript, relations and chain; pass --yes to confirm",
                    preset.name
                )));
            }
            let gone = presets::delete(store, id)?;
            looks::remove(data_dir, id);
            serde_json::to_value(gone)?
        }
        PresetCmd::Import {
            file, open, name, ..
        } if is_vrm(file) => serde_json::to_value(vrm::look::import_new(
            store,
            data_dir,
            file,
            name.as_deref(),
            *open,
        )?)?,
        PresetCmd::Import {
            file,
            open,
            name,
            sprites,
            no_sprites,
        } => {
            let bytes = std::fs::read(file).map_err(|e| {
                CoreError::not_found(format!("cannot read {}: {e}", file.display()))
            })?;
            let beside = if sprites.is_none() && !no_sprites {
                let name = cards::parse(&bytes)?.name;
                looks::pack_beside(file, &name)
            } else {
                None
            };
            let pack = sprites.clone().or(beside);
            let mut imported = looks::import_card(
                store,
                data_dir,
                &CardImport {
                    bytes: &bytes,
                    open: *open,
                    card_dir: file.parent(),
                    sprites: pack.as_deref(),
                },
            )?;
            if let Some(n) = name {
                let change = PresetUpdate {
                    name: Some(n.clone()),
                    ..PresetUpdate::default()
                };
                imported.preset = presets::update(store, &imported.preset.id, &change)?;
            }
            serde_json::to_value(imported)?
        }
        PresetCmd::Main { id } => serde_json::to_value(presets::set_main(store, id)?)?,
        PresetCmd::Open { id } => serde_json::to_value(presets::open(store, id)?)?,
        PresetCmd::Close { id } => serde_json::to_value(presets::close(store, id)?)?,
    };
    Ok(out)
}
