//! Settings → Manners and the quiet switches as the shell shows them: one view (the manners'
//! settings, each character's proactive switch, quiet mode, the turns waiting, the held-back
//! log) and the changes the page, the quick controls and the tray make. Each change is stored,
//! then the waiting turns are looked at again. The shell only forwards.

use super::{MannersView, Stage};
use crate::error::{CoreError, Result};
use crate::manners::{self, QuietFor};
use serde::Serialize;
use serde_json::{Map, Value};

/// One character's proactive switch.
#[derive(Debug, Clone, Serialize)]
pub struct CharacterSwitch {
    pub id: String,
    pub name: String,
    pub on: bool,
}

/// Settings → Manners.
#[derive(Debug, Clone, Serialize)]
pub struct MannersPage {
    #[serde(flatten)]
    pub live: MannersView,
    /// Every manners key (except the per-character map and quiet mode) with its value now.
    pub settings: Map<String, Value>,
    pub characters: Vec<CharacterSwitch>,
}

impl Stage {
    /// The page now.
    pub fn manners_page(&self) -> Result<MannersPage> {
        let store = &self.0.store;
        let cfg = manners::Config::load(store);
        let mut settings = Map::new();
        for s in manners::SETTINGS {
            if s.key == manners::CHARACTERS_KEY || s.key == manners::QUIET_UNTIL_KEY {
                continue;
            }
            settings.insert(s.key.to_string(), crate::settings::get(store, s.key)?);
        }
        let characters = crate::presets::list(store)?
            .into_iter()
            .map(|p| CharacterSwitch {
                on: cfg.character_on(&p.id),
                id: p.id,
                name: p.name,
            })
            .collect();
        Ok(MannersPage {
            live: self.manners_view(),
            settings,
            characters,
        })
    }

    /// Store one manners key (validated; a key of another area is refused).
    pub fn manners_set(&self, key: &str, value: &Value) -> Result<MannersPage> {
        let ours = manners::SETTINGS.iter().any(|s| s.key == key)
            && key != manners::CHARACTERS_KEY
            && key != manners::QUIET_UNTIL_KEY;
        if !ours {
            return Err(CoreError::invalid(format!(
                "{key:?} is not a setting of Settings → Manners"
            )));
        }
        crate::settings::set(&self.0.store, key, value)?;
        self.proactive_recheck();
        self.manners_page()
    }

    /// Switch a character's proactive turns (and its `remind` tool) on or off.
    pub fn manners_character(&self, preset_id: &str, on: bool) -> Result<MannersPage> {
        crate::presets::get(&self.0.store, preset_id)?;
        manners::set_character(&self.0.store, preset_id, on)?;
        self.proactive_recheck();
        self.manners_page()
    }

    /// Quiet mode: `1h`, `30m`, `tomorrow` or `off` (the quick controls, the tray, `yui quiet`).
    pub fn quiet(&self, what: &str) -> Result<MannersPage> {
        let what = QuietFor::parse(what)?;
        manners::quiet(&self.0.store, self.0.clock.as_ref(), what)?;
        self.proactive_recheck();
        self.manners_page()
    }
}
