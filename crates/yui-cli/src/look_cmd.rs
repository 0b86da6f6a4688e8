//! `yui look`: a character's look as a VRM model (docs/vrm.md) — give a character a model, show
//! what each emotion will look like on it and where that comes from, and read a model's meta
//! and licence before using it. The same core calls as the look picker.

use clap::Subcommand;
use serde_json::{json, Value};
use std::path::PathBuf;
use yui_core::{presets, vocab, vrm, CoreError, Store};

#[derive(Debug, Subcommand)]
pub enum LookCmd {
    /// Give a character a VRM model as its look: the file is copied (textures scaled) into the
    /// data dir; its current look is kept as the fallback. Prints the preset, `model` and
    /// `licence` (the model's own terms), and `motions` set with `--vrm-motion`.
    Set {
        /// The character's id.
        #[arg(long)]
        preset: String,
        /// The VRM model (.vrm, VRM 1.0 or 0.x).
        #[arg(long, value_name = "MODEL.vrm", required_unless_present = "vrm_motion")]
        vrm: Option<PathBuf>,
        /// Play a VRM animation file for a motion of the vocabulary instead of its procedural
        /// one (the file is copied beside the model); `MOTION=` plays the procedural one again.
        /// May be repeated. Every file is checked before anything changes.
        #[arg(long = "vrm-motion", value_name = "MOTION=FILE.vrma", value_parser = vrm::motions::MotionChange::parse)]
        vrm_motion: Vec<vrm::motions::MotionChange>,
    },
    /// A character's VRM look: its meta, licence, expressions, and each emotion's face
    /// (`faces`: the expressions set and where they come from), mouth shapes and blink.
    Show { id: String },
    /// Read a VRM model without importing it: meta, licence, expressions, textures, and the
    /// faces the vocabulary's emotions would get.
    Inspect { file: PathBuf },
}

pub fn run(store: &Store, data_dir: &std::path::Path, cmd: &LookCmd) -> Result<Value, CoreError> {
    Ok(match cmd {
        LookCmd::Set {
            preset,
            vrm: file,
            vrm_motion,
        } => {
            // Every motion file is checked before the model or anything else changes.
            let motions = vrm::motions::check(store, vrm_motion)?;
            let mut out = match file {
                Some(file) => {
                    serde_json::to_value(vrm::look::set_for(store, data_dir, preset, file)?)?
                }
                None => serde_json::to_value(presets::get(store, preset)?)?,
            };
            if !motions.is_empty() {
                out["motions"] =
                    serde_json::to_value(vrm::motions::apply(store, data_dir, preset, motions)?)?;
            }
            out
        }
        LookCmd::Show { id } => {
            let preset = presets::get(store, id)?;
            let file = match preset.avatar.get("kind").and_then(Value::as_str) {
                Some("vrm") => preset.avatar["file"].as_str().unwrap_or_default().to_string(),
                _ => {
                    return Err(CoreError::invalid(format!(
                        "{:?} is not drawn with a VRM model; give it one with `yui look set --preset {id} --vrm MODEL.vrm`",
                        preset.name
                    )))
                }
            };
            let look = vrm::look_of(std::path::Path::new(&file), &vocab::load(store)?)?;
            let licence = look.meta.licence.lines();
            let mut out = serde_json::to_value(look)?;
            out["licence"] = json!(licence);
            out
        }
        LookCmd::Inspect { file } => {
            let bytes = vrm::read_file(file)?;
            let (_, model) = vrm::read(&bytes, &file.display().to_string())?;
            let licence = model.meta.licence.lines();
            let textures = model.textures.clone();
            let size = model.bytes;
            let look = vrm::look_for(file, model, &vocab::load(store)?);
            let mut out = serde_json::to_value(look)?;
            out["licence"] = json!(licence);
            out["textures"] = json!(textures);
            out["bytes"] = json!(size);
            out
        }
    })
}
