//! Command client tools: every stdout line as a version 4 frame (`protocol::parse`); an input
//! whose first line is a JSON array is also read as `client-tools.json` entries, and each usable
//! definition's schema checks every other line that is JSON (as a call's arguments are checked).
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use yui_core::tools::command::{config, protocol, run};

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    let _ = protocol::parse(first);
    let rest: Vec<&[u8]> = lines.collect();
    for line in &rest {
        let _ = protocol::parse(line);
    }
    let Ok(Value::Array(entries)) = serde_json::from_slice::<Value>(first) else {
        return;
    };
    let (defs, _diags) = config::parse_entries(&entries, None);
    for def in defs {
        let Ok(validator) = jsonschema::validator_for(&def.parameters) else {
            continue;
        };
        for line in &rest {
            if let Ok(args) = serde_json::from_slice::<Value>(line) {
                let _ = run::check_args(&validator, &args);
            }
        }
    }
});
