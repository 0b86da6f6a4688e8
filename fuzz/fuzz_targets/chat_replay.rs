//! A Chat Completions SSE response body, replayed through the turn's stream reader.
#![no_main]
use libfuzzer_sys::fuzz_target;
use yui_core::backend::Transport;

fuzz_target!(|data: &[u8]| yui_fuzz::replay_sse(Transport::ChatCompletions, data));
