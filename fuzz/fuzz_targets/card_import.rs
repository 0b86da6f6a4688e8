//! Character-card import: a file's bytes (PNG with a `chara`/`ccv3` text chunk, or V1/V2/V3
//! JSON) through `cards::parse`, the PNG chunk reader, the persona built from the card, and the
//! card's picture reference (`cards::picture_of`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| yui_fuzz::card_import(data));
