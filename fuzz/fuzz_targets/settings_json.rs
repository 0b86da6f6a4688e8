//! Settings values: the first line names the key (one of `settings::KNOWN`, or anything), the
//! rest is the value's JSON, checked by that key's declared validator (`settings::validate`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| yui_fuzz::settings_json(data));
