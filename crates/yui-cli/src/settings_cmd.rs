//! `yui settings`: read and write settings keys (JSON values). See docs/settings.md.

use clap::Subcommand;
use serde_json::Value;
use yui_core::{autostart, settings, CoreError, Store};

#[derive(Debug, Subcommand)]
pub enum SettingsCmd {
    /// Print a key's value (the default when it was never set; an unknown key is an error).
    Get { key: String },
    /// Store a JSON value under a key and print it, e.g. `yui settings set yui.browser '{"enabled":true}'`.
    Set { key: String, json: String },
    /// Print every known key with its value, plus any other stored key.
    List,
}

pub fn run(store: &Store, cmd: &SettingsCmd) -> Result<Value, CoreError> {
    match cmd {
        SettingsCmd::Get { key } => settings::get_named(store, key),
        SettingsCmd::Set { key, json } => {
            let value: Value = serde_json::from_str(json)
                .map_err(|e| CoreError::invalid(format!("the value is not valid JSON: {e}")))?;
            settings::validate(key, &value)?;
            if key == autostart::KEY {
                // The switch stands for a file: write or remove the entry too.
                autostart_set(store, autostart::from_value(&value)?)?;
            } else {
                settings::set(store, key, &value)?;
            }
            settings::get(store, key)
        }
        SettingsCmd::List => Ok(Value::Object(settings::list(store)?)),
    }
}

/// `yui.autostart` from the command line: the entry starts the desktop app installed beside this
/// `yui` (the package puts both in /usr/bin), else `yui-app` from PATH.
fn autostart_set(store: &Store, on: bool) -> Result<(), CoreError> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("yui-app")))
        .filter(|p| p.is_file());
    let app = beside.unwrap_or_else(|| "yui-app".into());
    autostart::Autostart::for_user(&app)?
        .set(store, on)
        .map(drop)
}
