//! Character-card import: a file's bytes (PNG with a `chara`/`ccv3` text chunk, or V1/V2/V3
//! JSON) through `cards::parse`, the PNG chunk reader, and the persona built from the card.
#![no_main]
use libfuzzer_sys::fuzz_target;
use yui_core::cards;

fuzz_target!(|data: &[u8]| {
    if let Ok(card) = cards::parse(data) {
        let _ = cards::persona(&card);
    }
    let _ = cards::png_text_chunks(data);
});
