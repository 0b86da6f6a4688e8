//! The `yui.vocab` value (the expression vocabulary): parse and check it, then build what a turn
//! builds from it (the generate_express description, parameters and declared tool).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| yui_fuzz::vocab_json(data));
