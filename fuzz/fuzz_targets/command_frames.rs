//! Command client tools: every stdout line as a version 4 frame (`protocol::parse`); an input
//! whose first line is a JSON array is also read as `client-tools.json` entries, and each usable
//! definition's schema checks every other line that is JSON (as a call's arguments are checked).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| yui_fuzz::command_frames(data));
