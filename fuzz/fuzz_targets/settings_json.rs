//! Settings values: the first line names the key (one of `settings::KNOWN`, or anything), the
//! rest is the value's JSON, checked by that key's declared validator (`settings::validate`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use yui_core::settings;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (key, value) = text.split_once('\n').unwrap_or(("", &text));
    let Ok(value) = serde_json::from_str::<serde_json::Value>(value) else {
        return;
    };
    let _ = settings::validate(key, &value);
    // Every known key's validator sees every value, so one input exercises all of them.
    for k in settings::KNOWN {
        let _ = (k.validate)(&value);
    }
});
