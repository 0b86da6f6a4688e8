//! A tool call's `arguments` text, parsed the way a turn parses it, then given to every client
//! tool of the main window (generate_express, body_action, look, browser, rate_relation,
//! address_character): their real `call` (no avatar, browser switch off, a real store) and their
//! pure argument checks.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| yui_fuzz::tool_args(data));
