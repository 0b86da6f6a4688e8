//! Settings: key → JSON in the `settings` table. Every key is declared once in [`KNOWN`] with its
//! type, default, validation and meaning (mirrored in docs/settings.md); a key not declared there
//! is refused, so a typo stores nothing.

use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde_json::{json, Value};

pub const BROWSER: &str = "yui.browser";
pub const RELATIONS: &str = "yui.relations";
pub const SCREEN: &str = "yui.screen";
// Keys owned by a domain module, which reads and writes it through `store::kv`.
pub const BACKEND: &str = crate::backend::KEY;
pub const VOCAB: &str = crate::vocab::KEY;
pub const VOICE: &str = crate::voice::KEY;
pub const TIMEOUTS: &str = crate::timeouts::TIMEOUTS_KEY;
pub const ENABLED_CLIENT_TOOLS: &str = enabled_tools::KEY;
pub const FIRST_RUN: &str = "yui.first_run";
pub const SLEEP: &str = crate::presence::KEY;
pub const MEMORY: &str = crate::longterm::config::KEY;
/// The contract's name: how many addressed turns may follow one user turn.
pub const ADDRESSED_CHAIN_MAX: &str = "rate_limit.addressed_chain_max";
/// [`ADDRESSED_CHAIN_MAX`] when it was never set.
pub const ADDRESSED_CHAIN_MAX_DEFAULT: u64 = 4;
/// The highest [`ADDRESSED_CHAIN_MAX`] accepted (a chain is a conversation, not a loop).
pub const ADDRESSED_CHAIN_MAX_LIMIT: u64 = 50;

/// A known key, declared once: its type (as the docs and errors name it), default, validation
/// and meaning. Add a key by adding one entry to [`KNOWN`] (and one line to docs/settings.md).
pub struct Known {
    pub key: &'static str,
    /// The value's shape, in words (shown by `yui settings list --known` and in errors).
    pub kind: &'static str,
    pub default: fn() -> Value,
    /// Refuses a value of the wrong shape; the message says what is expected.
    pub validate: fn(&Value) -> Result<()>,
    pub doc: &'static str,
}

const SWITCH_KIND: &str = "{\"enabled\": true|false}";

fn validate_switch_shape(key: &str, value: &Value) -> Result<()> {
    if value.get("enabled").is_some_and(Value::is_boolean) {
        Ok(())
    } else {
        Err(CoreError::invalid(format!(
            "{key} must be {{\"enabled\": true|false}}"
        )))
    }
}

/// A declaration of the built-in model's settings (`model::SETTINGS`) as a [`Known`].
const fn model_key(s: &'static crate::model::Setting) -> Known {
    Known {
        key: s.key,
        kind: s.kind,
        default: s.default,
        validate: s.validate,
        doc: s.doc,
    }
}

pub const KNOWN: &[Known] = &[
    Known {
        key: BROWSER,
        kind: SWITCH_KIND,
        default: || json!({"enabled": false}),
        validate: |v| validate_switch_shape(BROWSER, v),
        doc: "Browser tool switch: lets the model run JavaScript in ego lite. Off by default.",
    },
    Known {
        key: RELATIONS,
        kind: SWITCH_KIND,
        default: || json!({"enabled": true}),
        validate: |v| validate_switch_shape(RELATIONS, v),
        doc: "Relations switch: rate_relation and the relation: line. On by default.",
    },
    Known {
        key: SCREEN,
        kind: SWITCH_KIND,
        default: || json!({"enabled": false}),
        validate: |v| validate_switch_shape(SCREEN, v),
        doc: "Screen-capture switch: look at: screen. Off by default.",
    },
    Known {
        key: crate::avatar::PLACES_KEY,
        kind: "object {spots, bed}",
        default: || json!({"spots": {}, "bed": null}),
        validate: |v| {
            crate::avatar::Places::from_value(v).map(drop)
        },
        doc: "The body's places the user saved: named spots for move_to and the bed for go_to_bed, each {monitor, x, y} relative to that monitor's work area (docs/avatar.md).",
    },
    Known {
        key: crate::avatar::BODY_KEY,
        kind: "object (written by the app)",
        default: || json!({"state": "unknown"}),
        validate: |v| match v.is_object() {
            true => Ok(()),
            false => Err(CoreError::invalid("yui.body must be an object")),
        },
        doc: "Written by the app: the body's last settled state (what look at: body shows from the CLI).",
    },
    Known {
        key: BACKEND,
        kind: "object {base_url, model, transport, push_url, realtime_url}",
        default: crate::backend::default_value,
        validate: |v| crate::backend::BackendConfig::from_value(v).map(drop),
        doc: "Model backend: base URL, model, transport (chat_completions | responses | push | realtime), push URL, realtime URL (unset: the base URL's /realtime). The API key is never here: it is in the OS keyring (or the labelled file fallback, see backend.rs).",
    },
    Known {
        key: crate::backend::realtime::KEY,
        kind: "object {voice, turn_detection: server_vad|semantic_vad|push_to_talk, transcription_model}",
        default: crate::backend::realtime::default_value,
        validate: |v| crate::backend::realtime::RealtimeSettings::from_value(v).map(drop),
        doc: "The realtime transport's session: the voice the server speaks with, how the user's turn ends (server voice activity, semantic, or push-to-talk with an explicit commit) and the model that transcribes the user's speech (null: none). See docs/realtime-transport.md.",
    },
    Known {
        key: VOCAB,
        kind: "object {emotions, motions, voice, selection} (docs/cue-contract.md)",
        default: crate::vocab::default_value,
        validate: |v| crate::vocab::from_value(v).map(drop),
        doc: "Expression vocabulary: emotions, motions (reactive/ambient/broker_publish), voice engine and tag table, expression-motion selection (docs/cue-contract.md). generate_express is built from it at every turn.",
    },
    Known {
        key: VOICE,
        kind: "{\"enabled\": true|false, \"engine\": \"speech-dispatcher\"|\"openai\"}",
        default: crate::voice::default_value,
        validate: |v| crate::voice::from_value(v).map(drop),
        doc: "Voice switch and engine: speak replies through speech-dispatcher (the default) or the OpenAI-compatible server of yui.voice.tts. Off by default.",
    },
    Known {
        key: crate::voice::config::TTS_KEY,
        kind: "object {base_url, model, voice, response_format: wav|pcm, pcm_rate, speed, instructions, use_backend_key, timeout_secs}",
        default: crate::voice::config::tts_default,
        validate: |v| crate::voice::config::TtsSettings::from_value(v).map(drop),
        doc: "OpenAI-compatible text-to-speech (POST {base_url}/audio/speech): base_url (null: the chat backend's), model, default voice, response format, speed, whether the server honours instructions, whether to send the chat backend's key (docs/voice.md).",
    },
    Known {
        key: crate::voice::config::STT_KEY,
        kind: "object {base_url, model, language, prompt, use_backend_key, timeout_secs}",
        default: crate::voice::config::stt_default,
        validate: |v| crate::voice::config::SttSettings::from_value(v).map(drop),
        doc: "OpenAI-compatible speech-to-text (POST {base_url}/audio/transcriptions): base_url (null: the chat backend's), model, language, prompt (docs/voice.md).",
    },
    Known {
        key: crate::voice::config::LISTEN_KEY,
        kind: "object {mode: off|push_to_talk|hands_free, shortcut, sensitivity 0-1, hangover_ms, input_device, output_device}",
        default: crate::voice::config::listen_default,
        validate: |v| crate::voice::config::ListenSettings::from_value(v).map(drop),
        doc: "Listening: the microphone's mode (off by default, push-to-talk or hands-free) and global push-to-talk shortcut, voice-activity sensitivity (0-1) and hang-over (ms of silence that end an utterance), and the input and output devices (null: the system's default) (docs/voice.md).",
    },
    Known {
        key: TIMEOUTS,
        kind: "object {connect_secs, headers_secs, stall_secs} of whole seconds 1-3600",
        default: crate::timeouts::Timeouts::default_value,
        validate: crate::timeouts::Timeouts::validate,
        doc: "How long a turn waits for the backend, in seconds: connect_secs (TCP/TLS connect, 10), headers_secs (the response headers, 120: a server loading a model is slow to answer), stall_secs (no byte of the stream, 60).",
    },
    Known {
        key: mcp_grace::KEY,
        kind: "object {turn_grace_ms} of whole milliseconds 0-1500",
        default: mcp_grace::default_value,
        validate: |v| mcp_grace::McpSettings::from_value(v).map(drop),
        doc: "How long a turn waits for MCP servers still starting before it declares the tools of those that are ready (turn_grace_ms, 1000; at most 1500). The log names the servers left out; a tool call waits for its own server only. See docs/mcp.md.",
    },
    Known {
        key: ENABLED_CLIENT_TOOLS,
        kind: "object {\"<preset id>\": [tool names]}",
        default: enabled_tools::default_value,
        validate: enabled_tools::validate,
        doc: "Which configured command client tools each character declares (docs/command-tools.md). No entry for a preset: the definitions with defaultEnabled; a list: exactly the known names in it; []: none.",
    },
    Known {
        key: FIRST_RUN,
        kind: "object {\"done\": bool}",
        default: || json!({"done": false}),
        validate: |v| match v.get("done") {
            Some(Value::Bool(_)) => Ok(()),
            _ => Err(CoreError::invalid("yui.first_run must be {\"done\": true|false}")),
        },
        doc: "Whether the first-run greeting (and the search for a local model server) has happened.",
    },
    Known {
        key: SLEEP,
        kind: "object {\"after_minutes\": integer 0-1440}",
        default: crate::presence::default_value,
        validate: |v| crate::presence::after_from_value(v).map(drop),
        doc: "The characters fall asleep after the user has given no keyboard or pointer input for after_minutes (10), and wake at the next input; asleep they show a sleeping face and play no ambient motion. 0: never asleep.",
    },
    Known {
        key: crate::autostart::KEY,
        kind: SWITCH_KIND,
        default: crate::autostart::default_value,
        validate: |v| crate::autostart::from_value(v).map(drop),
        doc: "Start with the desktop: while on, an XDG autostart entry ($XDG_CONFIG_HOME/autostart/yui.desktop) starts YUI at login; switching it off removes the entry. Off by default. Settings → General, or `yui settings set` (both write or remove the entry).",
    },
    Known {
        key: crate::display::KEY,
        kind: "\"auto\" | \"x11\" | \"wayland\"",
        default: crate::display::default_value,
        validate: |v| crate::display::Preference::from_value(v).map(drop),
        doc: "How YUI shows its windows, chosen at start (docs/wayland.md): auto (the default) takes the overlay layer where a Wayland compositor offers it, else XWayland; x11 takes XWayland in a Wayland session; wayland takes native Wayland windows. Read at the next start.",
    },
    Known {
        key: crate::display::places::KEY,
        kind: "object (written by the app)",
        default: crate::display::places::default_value,
        validate: |v| crate::display::places::from_value(v).map(drop),
        doc: "Written by the app: where each character was put in Wayland sessions, per backend (xwayland, layer-shell) and per output name (docs/wayland.md).",
    },
    Known {
        key: crate::display::noted::KEY,
        kind: "list of backend names (written by the app)",
        default: crate::display::noted::default_value,
        validate: |v| crate::display::noted::from_value(v).map(drop),
        doc: "Written by the app: the display backends (xwayland, wayland) whose one-time note the main character has said in its bubble, so it is never said again (docs/wayland.md). The log and Settings → General keep saying it.",
    },
    Known {
        key: crate::manners::said::KEY,
        kind: "object {morning, night: \"YYYY-MM-DD\" or null} (written by the app)",
        default: crate::manners::said::default_value,
        validate: |v| crate::manners::said::from_value(v).map(drop),
        doc: "Written by the app: the local dates the morning and night triggers last went, so that each goes once a day even when YUI is started again (docs/proactive.md).",
    },
    Known {
        key: crate::display::input_region::KEY,
        kind: SWITCH_KIND,
        default: crate::display::input_region::default_value,
        validate: |v| crate::display::input_region::from_value(v).map(drop),
        doc: "Click-through: a click where a character window draws nothing (around the character, its bubble and its buttons) goes to the window below. On by default; off, the whole window takes clicks. Read when the character's outline next changes (at the latest the next start). See docs/avatar.md.",
    },
    Known {
        key: crate::layout::SCALE_KEY,
        kind: "number, 0.5 to 2",
        default: crate::layout::scale_default,
        validate: |v| crate::layout::scale_from_value(v).map(drop),
        doc: "The size of every character (its window and its drawing), as a factor of the usual size: 0.5 is half, 2 twice. A VRM character keeps its model's proportions. Settings → Characters.",
    },
    Known {
        key: MEMORY,
        kind: "object {enabled, pause_minutes, recall_tokens, history_tokens, paused, embeddings}",
        default: crate::longterm::config::default_value,
        validate: |v| crate::longterm::Config::from_value(v).map(drop),
        doc: "Long-term memory (docs/memory.md): enabled (extraction writes memories, true), pause_minutes (a conversation is read for memories after this long without a turn, 2), recall_tokens (what one turn may recall, 400), history_tokens (the history window, 3000), paused (preset ids whose remembering is paused), embeddings (null, or {model, base_url}: fused with BM25).",
    },
    Known {
        key: ADDRESSED_CHAIN_MAX,
        kind: "integer 0-50",
        default: || json!(ADDRESSED_CHAIN_MAX_DEFAULT),
        validate: |v| match v.as_u64() {
            Some(n) if n <= ADDRESSED_CHAIN_MAX_LIMIT => Ok(()),
            _ => Err(CoreError::invalid(format!(
                "{ADDRESSED_CHAIN_MAX} must be a whole number from 0 to {ADDRESSED_CHAIN_MAX_LIMIT}"
            ))),
        },
        doc: "How many addressed turns (one character answering another, address_character) may follow one user turn before the exchange stops; 0 turns addressing off. The user typing anywhere starts the count again.",
    },
    model_key(&crate::model::SETTINGS[0]),
    model_key(&crate::model::SETTINGS[1]),
    model_key(&crate::model::SETTINGS[2]),
    model_key(&crate::model::SETTINGS[3]),
    model_key(&crate::model::SETTINGS[4]),
    // Proactive turns and their manners (docs/proactive.md), declared in `manners`.
    model_key(&crate::manners::SETTINGS[0]),
    model_key(&crate::manners::SETTINGS[1]),
    model_key(&crate::manners::SETTINGS[2]),
    model_key(&crate::manners::SETTINGS[3]),
    model_key(&crate::manners::SETTINGS[4]),
    model_key(&crate::manners::SETTINGS[5]),
    model_key(&crate::manners::SETTINGS[6]),
    model_key(&crate::manners::SETTINGS[7]),
    model_key(&crate::manners::SETTINGS[8]),
    model_key(&crate::manners::SETTINGS[9]),
    model_key(&crate::manners::SETTINGS[10]),
];

/// [`ADDRESSED_CHAIN_MAX`], read now; an unreadable value reads as the default.
pub fn addressed_chain_max(store: &Store) -> u64 {
    get(store, ADDRESSED_CHAIN_MAX)
        .ok()
        .and_then(|v| v.as_u64())
        .map_or(ADDRESSED_CHAIN_MAX_DEFAULT, |n| {
            n.min(ADDRESSED_CHAIN_MAX_LIMIT)
        })
}

/// The declaration of `key`, if it is a known key.
pub fn known(key: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.key == key)
}

/// Read a key: the stored value, else the default, else `null`.
pub fn get(store: &Store, key: &str) -> Result<Value> {
    match kv::get(store, key)? {
        Some(v) => Ok(v),
        None => Ok(known(key).map(|k| (k.default)()).unwrap_or(Value::Null)),
    }
}

/// [`get`] for a key the user names (`yui settings get`): a key YUI does not know and that was
/// never stored is refused with the list of known keys, instead of reading as `null`.
pub fn get_named(store: &Store, key: &str) -> Result<Value> {
    let v = get(store, key)?;
    if v.is_null() && known(key).is_none() {
        return Err(CoreError::invalid(format!(
            "unknown setting key {key:?}; known keys: {}",
            KNOWN.iter().map(|k| k.key).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(v)
}

/// Write a known key after its validation. An unknown key or a bad value stores nothing.
pub fn set(store: &Store, key: &str, value: &Value) -> Result<()> {
    validate(key, value)?;
    kv::put(store, key, value)
}

/// Refuse an unknown key or a value of the wrong shape.
pub fn validate(key: &str, value: &Value) -> Result<()> {
    if key.trim().is_empty() {
        return Err(CoreError::invalid("setting key is empty"));
    }
    let Some(k) = known(key) else {
        return Err(CoreError::invalid(format!(
            "unknown setting key {key:?}; known keys: {}",
            KNOWN.iter().map(|k| k.key).collect::<Vec<_>>().join(", ")
        )));
    };
    (k.validate)(value)
}

/// A switch's state (`{"enabled": bool}`), read at the moment of the call.
pub fn switch_on(store: &Store, key: &str) -> Result<bool> {
    Ok(get(store, key)?
        .get("enabled")
        .and_then(Value::as_bool)
        .unwrap_or(false))
}

/// Every known key with its current value (stored or default), then any other stored keys, as
/// one JSON object ordered by key.
pub fn list(store: &Store) -> Result<serde_json::Map<String, Value>> {
    let stored: Vec<(String, String)> = store.read(|c| {
        let mut stmt = c.prepare("SELECT key, value FROM settings ORDER BY key")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })?;
    let mut out = serde_json::Map::new();
    for k in KNOWN {
        out.insert(k.key.to_string(), (k.default)());
    }
    for (key, text) in stored {
        // A hand-edited row with bad JSON shows as null rather than hiding every other key.
        out.insert(key, serde_json::from_str(&text).unwrap_or(Value::Null));
    }
    Ok(out)
}

/// The keys of the device-wide switches the user flips (settings window and quick controls).
pub const SWITCHES: [&str; 3] = [BROWSER, RELATIONS, SCREEN];

/// The device-wide switches, as the UI shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Switches {
    pub browser: bool,
    pub relations: bool,
    pub screen: bool,
}

/// Every switch's state now.
pub fn switches(store: &Store) -> Result<Switches> {
    Ok(Switches {
        browser: switch_on(store, BROWSER)?,
        relations: switch_on(store, RELATIONS)?,
        screen: switch_on(store, SCREEN)?,
    })
}

/// Flip the switch `key` (one of [`SWITCHES`]); returns every switch's state after the change.
pub fn set_switch(store: &Store, key: &str, enabled: bool) -> Result<Switches> {
    if !SWITCHES.contains(&key) {
        return Err(CoreError::invalid(format!("{key:?} is not a switch")));
    }
    set(store, key, &json!({ "enabled": enabled }))?;
    switches(store)
}

/// `yui.enabled_client_tools`'s shape (which command and MCP tools each character declares):
/// declared here, below the tools that read it (`tools::command::select`).
pub mod enabled_tools {
    use crate::error::{CoreError, Result};
    use serde_json::{Map, Value};

    /// The default value of the setting: no entries.
    pub fn default_value() -> Value {
        Value::Object(Map::new())
    }

    /// The settings key of the selection.
    pub const KEY: &str = "yui.enabled_client_tools";

    /// Check a value of the setting: an object of preset id → array of strings.
    pub fn validate(value: &Value) -> Result<()> {
        let bad = || {
            CoreError::invalid(format!(
                "{} must be {{\"<preset id>\": [\"tool name\", …]}}",
                KEY
            ))
        };
        let obj = value.as_object().ok_or_else(bad)?;
        for v in obj.values() {
            let list = v.as_array().ok_or_else(bad)?;
            if !list.iter().all(Value::is_string) {
                return Err(bad());
            }
        }
        Ok(())
    }
}

/// `yui.mcp`: how long a turn waits for MCP servers that are still starting before it declares
/// the tools of those that are ready (`tools::mcp::Hub::settle_for_turn`). A server that never
/// answers `initialize` costs a turn this grace at most, never its whole start timeout; a tool
/// call waits for its own server only. Declared here, on the settings' floor, as the engine's
/// `tools` may not be imported from it.
pub mod mcp_grace {
    use crate::error::{CoreError, Result};
    use crate::store::{kv, Store};
    use serde_json::{json, Value};
    use std::time::Duration;

    /// The settings key (declared in `KNOWN` above).
    pub const KEY: &str = "yui.mcp";
    /// `turn_grace_ms` when it was never set.
    pub const DEFAULT_GRACE_MS: u64 = 1000;
    /// The longest grace accepted: a turn must not wait long on what it may not use.
    pub const MAX_GRACE_MS: u64 = 1500;

    /// The typed `yui.mcp`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct McpSettings {
        /// How long a turn waits for servers still starting (0: not at all).
        pub turn_grace: Duration,
    }

    impl Default for McpSettings {
        fn default() -> Self {
            Self {
                turn_grace: Duration::from_millis(DEFAULT_GRACE_MS),
            }
        }
    }

    /// The default value, as stored.
    pub fn default_value() -> Value {
        json!({"turn_grace_ms": DEFAULT_GRACE_MS})
    }

    impl McpSettings {
        /// `{"turn_grace_ms": 0..=1500}`; anything else is refused in words.
        pub fn from_value(v: &Value) -> Result<Self> {
            let bad = || {
                CoreError::invalid(format!(
                    "{KEY} must be {{\"turn_grace_ms\": 0..={MAX_GRACE_MS}}}"
                ))
            };
            let obj = v.as_object().ok_or_else(bad)?;
            if obj.keys().any(|k| k != "turn_grace_ms") {
                return Err(bad());
            }
            let ms = match obj.get("turn_grace_ms") {
                None => DEFAULT_GRACE_MS,
                Some(n) => n.as_u64().filter(|&n| n <= MAX_GRACE_MS).ok_or_else(bad)?,
            };
            Ok(Self {
                turn_grace: Duration::from_millis(ms),
            })
        }
    }

    /// The stored setting; a value that cannot be read keeps the default (and says so in the log).
    pub fn load(store: &Store) -> McpSettings {
        match kv::get(store, KEY) {
            Ok(Some(v)) => McpSettings::from_value(&v)
                .inspect_err(|e| tracing::warn!(error = %e.message, "{KEY}: the default is used"))
                .unwrap_or_default(),
            _ => McpSettings::default(),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_grace_is_a_bounded_number_of_milliseconds() {
            let ok = |v: Value| McpSettings::from_value(&v).map(|s| s.turn_grace.as_millis());
            assert_eq!(ok(json!({"turn_grace_ms": 0})).unwrap(), 0);
            assert_eq!(ok(json!({"turn_grace_ms": 1500})).unwrap(), 1500);
            assert_eq!(ok(json!({})).unwrap(), 1000);
            assert_eq!(ok(default_value()).unwrap(), 1000);
            for bad in [
                json!({"turn_grace_ms": 1501}),
                json!({"turn_grace_ms": -1}),
                json!({"turn_grace_ms": "1s"}),
                json!({"grace": 10}),
                json!(5),
            ] {
                assert_eq!(
                    ok(bad).unwrap_err().message,
                    "yui.mcp must be {\"turn_grace_ms\": 0..=1500}"
                );
            }
        }
    }
}
