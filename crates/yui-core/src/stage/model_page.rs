//! Settings → Backend → Built-in model as the shell shows it (docs/built-in-model.md): one view
//! (the catalog, the installed models and the GGUF files found on this machine, each with its
//! state and any download under way; the engine; its settings) and the changes the page makes:
//! remove and add a file (download, cancel and use are `model.rs`'s), the idle stop, the threads, the mirror. Each
//! change goes through the same code as `yui model …`; the shell only forwards.

use super::model::ModelPull;
use super::Stage;
use crate::error::{CoreError, Result};
use crate::model::{self, catalog, local};
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::Path;

/// One model on the page.
#[derive(Debug, Clone, Serialize)]
pub struct ModelRow {
    #[serde(flatten)]
    pub listed: local::Listed,
    /// Its size in words (`1.1 GB`).
    pub size_text: String,
    /// The memory it needs in words, where the catalog says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ram_text: Option<String>,
    /// The download under way, as it last showed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull: Option<ModelPull>,
}

/// Settings → Backend → Built-in model.
#[derive(Debug, Clone, Serialize)]
pub struct ModelPage {
    pub models: Vec<ModelRow>,
    /// The model the backend's built-in engine uses, if it is the backend.
    pub in_use: Option<String>,
    /// Bytes the installed models take under the data dir (a linked file counts once, here).
    pub on_disk: u64,
    pub on_disk_text: String,
    /// The engine's process, while one runs.
    pub engine_pid: Option<u32>,
    /// The llama-server program the engine would run (`None`: none found).
    pub engine_program: Option<String>,
    /// `yui.model.idle_stop_s`, `yui.model.threads`, `yui.model.mirror` now.
    pub settings: Map<String, Value>,
    /// The threads when `yui.model.threads` is unset (the physical cores).
    pub threads_default: u32,
    /// The sentence of the change just made (`Removed smollm2 (98 MB freed).`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The keys the page may write.
pub const PAGE_KEYS: &[&str] = &[model::IDLE_STOP_KEY, model::THREADS_KEY, model::MIRROR_KEY];

impl Stage {
    /// The page now.
    pub fn model_page(&self) -> Result<ModelPage> {
        let (store, paths) = (&self.0.store, &self.0.paths);
        let cfg = model::Config::load(store)?;
        let entries = cfg.catalog()?;
        let in_use = crate::backend::load(store)?.builtin;
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let look = local::Looking {
            in_use: in_use.as_deref(),
            mirror: cfg.mirror.as_deref(),
            home: home.as_deref(),
        };
        let pulls = self.model_pulls();
        let models: Vec<ModelRow> = local::list(paths, &entries, look)
            .into_iter()
            .map(|m| ModelRow {
                size_text: catalog::human(m.size),
                ram_text: m.ram.map(catalog::human),
                pull: pulls.iter().find(|p| p.name == m.name).cloned(),
                listed: m,
            })
            .collect();
        let on_disk = models
            .iter()
            .filter(|m| {
                matches!(
                    m.listed.state,
                    local::State::Installed | local::State::InUse
                )
            })
            .map(|m| m.listed.size)
            .sum::<u64>()
            + models.iter().filter_map(|m| m.listed.partial).sum::<u64>();
        let mut settings = Map::new();
        for key in PAGE_KEYS {
            settings.insert((*key).to_string(), crate::settings::get(store, key)?);
        }
        Ok(ModelPage {
            models,
            in_use,
            on_disk,
            on_disk_text: catalog::human(on_disk),
            engine_pid: local::running(paths).map(|r| r.pid),
            engine_program: model::engine::find_program(cfg.engine_path.as_deref())
                .map(|p| p.display().to_string()),
            settings,
            threads_default: u32::try_from(model::sys::physical_cores()).unwrap_or(1),
            note: None,
        })
    }

    fn page_with(&self, note: String) -> Result<ModelPage> {
        let mut page = self.model_page()?;
        page.note = Some(note);
        Ok(page)
    }

    /// Store one of the page's settings (validated; another key is refused). The engine is
    /// made again with it on the next turn (`model::builtin::shared` compares its spec).
    pub fn model_set(&self, key: &str, value: &Value) -> Result<ModelPage> {
        if !PAGE_KEYS.contains(&key) {
            return Err(CoreError::invalid(format!(
                "{key:?} is not a setting of Settings → Backend → Built-in model"
            )));
        }
        crate::settings::set(&self.0.store, key, value)?;
        self.model_page()
    }

    /// Delete a model and free its space; a model a running engine serves is never deleted
    /// (the core's sentence says so).
    pub fn model_remove(&self, name: &str) -> Result<ModelPage> {
        let entries = model::Config::load(&self.0.store)?.catalog()?;
        let r = local::remove(&self.0.paths, &entries, name)?;
        let sentence = match r.still_at {
            Some(from) => {
                format!("Removed {name}; its file is still at {from}, so no space was freed.")
            }
            None => format!("Removed {name} ({} freed).", catalog::human(r.freed)),
        };
        self.page_with(sentence)
    }

    /// Add the user's own GGUF file (linked when on the same disk, else copied: the sentence
    /// says which); with `use_it` it becomes the backend too (the first run's "add a file",
    /// which then says hello through it).
    pub async fn model_add(&self, file: &Path, use_it: bool) -> Result<ModelPage> {
        let entries = model::Config::load(&self.0.store)?.catalog()?;
        let (paths, file) = (self.0.paths.clone(), file.to_path_buf());
        // Hashing (and maybe copying) a GB-sized file: off the async threads.
        let r = tokio::task::spawn_blocking(move || local::add(&paths, &entries, &file, None))
            .await
            .map_err(|e| CoreError::internal(format!("adding the model stopped: {e}")))??;
        let how = if r.added.how == "linked" {
            "linked (the same file, no extra space)"
        } else {
            "copied"
        };
        let mut sentence = format!(
            "Added {} ({}), {how} from {}.",
            r.added.name,
            catalog::human(r.added.size),
            r.added.from
        );
        if use_it {
            self.model_use(&r.added.name, true)?;
            sentence.push_str(&format!(" {} is now the backend.", r.added.name));
        }
        self.page_with(sentence)
    }
}
