//! The `yui.vocab` value (the expression vocabulary): parse and check it, then build what a turn
//! builds from it (the generate_express description, parameters and declared tool).
#![no_main]
use libfuzzer_sys::fuzz_target;
use yui_core::backend::Transport;
use yui_core::vocab;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(v) = vocab::from_value(&value) else {
        return;
    };
    let _ = vocab::vocab_is_empty(&v);
    let _ = vocab::tool_description(&v);
    let _ = vocab::parameters(&v);
    let _ = v.offered_motions();
    let _ = v.voice_tags();
    for t in [
        Transport::ChatCompletions,
        Transport::Responses,
        Transport::Push,
    ] {
        let _ = vocab::declared_tool(&v, t);
    }
});
