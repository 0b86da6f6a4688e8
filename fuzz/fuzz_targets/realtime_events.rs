//! Realtime server events (one per line): parse, map, dispatch, as one response reads them.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| yui_fuzz::replay_realtime(data));
