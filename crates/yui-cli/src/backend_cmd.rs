//! `yui backend`: the model backend settings and the API key. The key is read from stdin and is
//! never printed: output shows only `has_api_key` and where the key is kept.

use clap::Subcommand;
use serde_json::{json, Value};
use std::io::Read;
use yui_core::backend::{self, BackendChange, Secrets, Transport};
use yui_core::paths::Paths;
use yui_core::{CoreError, Store};

#[derive(Debug, Subcommand)]
pub enum BackendCmd {
    /// Print the backend settings, `has_api_key` and `api_key_storage`.
    Show,
    /// Change backend settings; options not given keep their value. Prints the result.
    Set {
        /// Base URL of the OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1.
        #[arg(long)]
        base_url: Option<String>,
        #[arg(long)]
        model: Option<String>,
        /// chat_completions | responses | push | realtime
        #[arg(long, value_parser = parse_transport)]
        transport: Option<Transport>,
        /// Push transport URL; an empty string clears it.
        #[arg(long)]
        push_url: Option<String>,
        /// Realtime transport URL (ws://…/v1/realtime); an empty string clears it (the base
        /// URL's /realtime is used).
        #[arg(long)]
        realtime_url: Option<String>,
        /// Reply cap in tokens (sent as max_tokens / max_output_tokens; default 512).
        #[arg(long, value_name = "N")]
        max_output_tokens: Option<u32>,
        /// Sampling temperature, 0 to 2; "none" leaves it to the server.
        #[arg(long, value_name = "T", value_parser = parse_temperature)]
        temperature: Option<Temperature>,
    },
    /// Read the API key from stdin (first line) and store it in the OS keyring (or the file
    /// fallback where no keyring exists).
    SetKey,
    /// Forget the stored API key.
    ClearKey,
    /// Look for a model server on this computer (the app's first run and Settings → Backend →
    /// Find: `/v1/models` on the usual ports, `YUI_DISCOVER_PORTS` replaces them). Prints
    /// `{found: [...], first_run}`: `first_run` is true while no backend was ever set up.
    Find,
}

/// `--temperature`: a number, or `none` to clear it.
#[derive(Debug, Clone, Copy)]
pub struct Temperature(Option<f64>);

fn parse_temperature(s: &str) -> Result<Temperature, String> {
    if s.eq_ignore_ascii_case("none") || s.trim().is_empty() {
        return Ok(Temperature(None));
    }
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|t| t.is_finite())
        .map(|t| Temperature(Some(t)))
        .ok_or_else(|| format!("temperature must be a number from 0 to 2 or \"none\", not {s:?}"))
}

/// Clap's parser for `--transport` (`yui turn` narrows it to the request transports).
pub fn parse_transport(s: &str) -> Result<Transport, String> {
    s.parse().map_err(|e: CoreError| e.message)
}

pub fn run(store: &Store, paths: &Paths, cmd: &BackendCmd) -> Result<Value, CoreError> {
    match cmd {
        BackendCmd::Show => Ok(serde_json::to_value(backend::view(store, paths)?)?),
        BackendCmd::Set {
            base_url,
            model,
            transport,
            push_url,
            realtime_url,
            max_output_tokens,
            temperature,
        } => {
            let change = BackendChange {
                base_url: base_url.clone(),
                model: model.clone(),
                transport: *transport,
                push_url: push_url
                    .as_ref()
                    .map(|u| Some(u.clone()).filter(|u| !u.trim().is_empty())),
                realtime_url: realtime_url
                    .as_ref()
                    .map(|u| Some(u.clone()).filter(|u| !u.trim().is_empty())),
                max_output_tokens: *max_output_tokens,
                temperature: temperature.map(|t| t.0),
            };
            Ok(serde_json::to_value(backend::update_and_view(
                store, paths, &change,
            )?)?)
        }
        BackendCmd::SetKey => {
            let mut input = String::new();
            std::io::stdin()
                .read_to_string(&mut input)
                .map_err(|e| CoreError::invalid(format!("cannot read the key from stdin: {e}")))?;
            let key = input.lines().next().unwrap_or("").trim().to_string();
            let storage = Secrets::new(paths).set_api_key(&key)?;
            Ok(json!({"has_api_key": true, "api_key_storage": storage}))
        }
        BackendCmd::Find => {
            let candidates = yui_core::discover::candidates();
            // A runtime of its own (turn_cmd's would make the two modules import each other).
            let found = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| CoreError::internal(format!("cannot start the async runtime: {e}")))?
                .block_on(yui_core::discover::discover_local(&candidates));
            Ok(json!({
                "found": found,
                "first_run": yui_core::firstrun::is_first_run(store)?,
            }))
        }
        BackendCmd::ClearKey => {
            Secrets::new(paths).clear()?;
            Ok(json!({"has_api_key": false, "api_key_storage": backend::KeyStorage::None}))
        }
    }
}
