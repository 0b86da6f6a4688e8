//! Character card import: the cards SillyTavern and most character sites share, turned into a
//! YUI character (docs/characters.md has the mapping).
//!
//! Accepted: Character Card V2 (`"spec": "chara_card_v2"`) and V3 (`"spec": "chara_card_v3"`)
//! JSON, the older spec-less V1 JSON (top-level `name`, `description`, …), and PNG cards carrying
//! one of those JSON texts base64-encoded in a `tEXt` or `iTXt` chunk with the keyword `chara`
//! (V1/V2) or `ccv3` (V3, preferred when both are present). The PNG chunks are walked by hand
//! (length, type, data, CRC-32): no image decoding is needed to find the text, and a damaged file
//! is caught by its CRCs.
//!
//! A card that cannot be read gets an error naming what is wrong and creates nothing; a card whose
//! name is taken gets the same error as creating that name by hand.

use crate::error::{CoreError, Result};
use crate::presets::{self, NewPreset, Preset};
use crate::store::Store;
use base64::Engine as _;
use serde_json::{Map, Value};

/// The largest card file read (PNG cards carry the picture too).
pub const MAX_CARD_BYTES: usize = 32 * 1024 * 1024;

const PNG_SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// Which card format a card came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Spec {
    V1,
    V2,
    V3,
}

/// The fields YUI takes from a card (trimmed; empty when the card leaves them out).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Card {
    pub spec: Spec,
    pub name: String,
    pub description: String,
    pub personality: String,
    pub scenario: String,
    pub first_mes: String,
    pub system_prompt: String,
}

/// Read a card from a file's bytes: a PNG (by its signature) or JSON text.
pub fn parse(bytes: &[u8]) -> Result<Card> {
    if bytes.len() > MAX_CARD_BYTES {
        return Err(CoreError::invalid(format!(
            "the card file is {} bytes; at most {MAX_CARD_BYTES} are read",
            bytes.len()
        )));
    }
    if bytes.starts_with(PNG_SIGNATURE) {
        return parse_png(bytes);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| {
        CoreError::invalid("not a character card: the file is neither a PNG nor UTF-8 JSON text")
    })?;
    parse_json(text.trim_start_matches('\u{feff}'))
}

/// Read a card from its JSON text (V1, V2 or V3).
pub fn parse_json(text: &str) -> Result<Card> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| CoreError::invalid(format!("the card is not valid JSON: {e}")))?;
    let top = value
        .as_object()
        .ok_or_else(|| CoreError::invalid("the card must be a JSON object"))?;
    let (spec, data) = match top.get("spec") {
        Some(Value::String(s)) if s == "chara_card_v2" => (Spec::V2, data_of(top, s)?),
        Some(Value::String(s)) if s == "chara_card_v3" => (Spec::V3, data_of(top, s)?),
        Some(other) => {
            return Err(CoreError::invalid(format!(
                "unknown card spec {other}; YUI reads chara_card_v2 and chara_card_v3"
            )))
        }
        None => (Spec::V1, top),
    };
    let field = |key: &str| -> Result<String> {
        match data.get(key) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.trim().to_string()),
            Some(_) => Err(CoreError::invalid(format!("the card's {key} must be text"))),
        }
    };
    let name = field("name")?;
    if name.is_empty() {
        return Err(CoreError::invalid("the card has no name"));
    }
    let card = Card {
        spec,
        description: field("description")?,
        personality: field("personality")?,
        scenario: field("scenario")?,
        first_mes: field("first_mes")?,
        system_prompt: field("system_prompt")?,
        name,
    };
    if spec == Spec::V1
        && card.description.is_empty()
        && card.personality.is_empty()
        && card.first_mes.is_empty()
    {
        // A bare {"name": ...} is more likely some other JSON file than a card.
        return Err(CoreError::invalid(
            "not a character card: no spec, and no description, personality or first_mes",
        ));
    }
    Ok(card)
}

fn data_of<'a>(top: &'a Map<String, Value>, spec: &str) -> Result<&'a Map<String, Value>> {
    top.get("data")
        .and_then(Value::as_object)
        .ok_or_else(|| CoreError::invalid(format!("the {spec} card has no \"data\" object")))
}

/// Read the card in a PNG: the `ccv3` text chunk if there is one, else `chara`.
pub fn parse_png(bytes: &[u8]) -> Result<Card> {
    let chunks = png_text_chunks(bytes)?;
    let pick = |key: &str| chunks.iter().find(|(k, _)| k == key).map(|(_, t)| t);
    let (key, text) = match (pick("ccv3"), pick("chara")) {
        (Some(t), _) => ("ccv3", t),
        (None, Some(t)) => ("chara", t),
        (None, None) => {
            return Err(CoreError::invalid(
                "not a character card: the PNG has no chara or ccv3 text chunk",
            ))
        }
    };
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let json = engine
        .decode(compact.as_bytes())
        .map_err(|e| CoreError::invalid(format!("the PNG's {key} chunk is not base64: {e}")))?;
    let json = String::from_utf8(json)
        .map_err(|_| CoreError::invalid(format!("the PNG's {key} chunk is not UTF-8 text")))?;
    parse_json(&json)
}

/// The `tEXt` and uncompressed `iTXt` chunks of a PNG as (keyword, text), in file order. Checks
/// the signature, every chunk's length and CRC, and that the file ends with `IEND`.
pub fn png_text_chunks(bytes: &[u8]) -> Result<Vec<(String, String)>> {
    let damaged = |why: String| CoreError::invalid(format!("the PNG is damaged: {why}"));
    let mut rest = bytes
        .strip_prefix(PNG_SIGNATURE)
        .ok_or_else(|| CoreError::invalid("not a PNG file"))?;
    let mut out = Vec::new();
    loop {
        if rest.len() < 12 {
            return Err(damaged("it ends before its IEND chunk".into()));
        }
        let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let kind = &rest[4..8];
        if rest.len() - 12 < len {
            return Err(damaged(format!(
                "chunk {} says {len} bytes but the file ends first",
                String::from_utf8_lossy(kind)
            )));
        }
        let data = &rest[8..8 + len];
        let crc =
            u32::from_be_bytes([rest[8 + len], rest[9 + len], rest[10 + len], rest[11 + len]]);
        if crc32(&rest[4..8 + len]) != crc {
            return Err(damaged(format!(
                "chunk {} fails its CRC check",
                String::from_utf8_lossy(kind)
            )));
        }
        match kind {
            b"tEXt" => {
                if let Some(z) = data.iter().position(|&b| b == 0) {
                    // Latin-1: every byte is the code point of the same value.
                    let latin1 = |b: &[u8]| b.iter().map(|&c| c as char).collect::<String>();
                    out.push((latin1(&data[..z]), latin1(&data[z + 1..])));
                }
            }
            b"iTXt" => {
                if let Some(entry) = itxt(data)? {
                    out.push(entry);
                }
            }
            b"IEND" => return Ok(out),
            _ => {}
        }
        rest = &rest[12 + len..];
    }
}

/// An `iTXt` chunk: keyword NUL, compression flag, method, language NUL, translated keyword NUL,
/// UTF-8 text. A compressed one is skipped unless it carries a card (then it is an error).
fn itxt(data: &[u8]) -> Result<Option<(String, String)>> {
    let Some(z) = data.iter().position(|&b| b == 0) else {
        return Ok(None);
    };
    let keyword = String::from_utf8_lossy(&data[..z]).into_owned();
    let rest = &data[z + 1..];
    if rest.len() < 2 {
        return Ok(None);
    }
    let compressed = rest[0] != 0;
    let rest = &rest[2..];
    let Some(lang_end) = rest.iter().position(|&b| b == 0) else {
        return Ok(None);
    };
    let rest = &rest[lang_end + 1..];
    let Some(tk_end) = rest.iter().position(|&b| b == 0) else {
        return Ok(None);
    };
    let text = &rest[tk_end + 1..];
    if compressed {
        if keyword == "chara" || keyword == "ccv3" {
            return Err(CoreError::invalid(format!(
                "the PNG's {keyword} chunk is compressed iTXt, which YUI does not read; save the card uncompressed"
            )));
        }
        return Ok(None);
    }
    let text = String::from_utf8(text.to_vec())
        .map_err(|_| CoreError::invalid(format!("the PNG's {keyword} iTXt is not UTF-8")))?;
    Ok(Some((keyword, text)))
}

/// CRC-32 (ISO-HDLC, as PNG uses), bitwise: cards are read once, speed does not matter.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Replace the card macros: `{{char}}`/`<BOT>` by the character's name, `{{user}}`/`<USER>` by
/// "the user" (any case).
fn fill(text: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let lower = text.to_ascii_lowercase();
    let mut i = 0;
    'outer: while i < text.len() {
        for (pat, with) in [
            ("{{char}}", name),
            ("<bot>", name),
            ("{{user}}", "the user"),
            ("<user>", "the user"),
        ] {
            if lower[i..].starts_with(pat) {
                out.push_str(with);
                i += pat.len();
                continue 'outer;
            }
        }
        let ch = text[i..].chars().next().unwrap_or_default();
        out.push(ch);
        i += ch.len_utf8().max(1);
    }
    out
}

/// The persona (system prompt) made from a card; the mapping is documented in
/// docs/characters.md.
pub fn persona(card: &Card) -> String {
    let name = card.name.as_str();
    let mut parts: Vec<String> = Vec::new();
    if card.system_prompt.is_empty() {
        parts.push(format!("You are {name}."));
    } else {
        parts.push(fill(&card.system_prompt, name));
    }
    if !card.description.is_empty() {
        parts.push(fill(&card.description, name));
    }
    if !card.personality.is_empty() {
        parts.push(format!(
            "{name}'s personality: {}",
            fill(&card.personality, name)
        ));
    }
    if !card.scenario.is_empty() {
        parts.push(format!("Scenario: {}", fill(&card.scenario, name)));
    }
    if !card.first_mes.is_empty() {
        parts.push(format!(
            "You opened the conversation with:\n{}",
            fill(&card.first_mes, name)
        ));
    }
    parts.push(
        "You now live on the user's desktop as a small character in YUI; keep replies brief."
            .into(),
    );
    parts.join("\n\n")
}

/// Import a card file as a new character (closed unless `open`). Nothing is written when the card
/// cannot be read or its name is taken.
pub fn import(store: &Store, bytes: &[u8], open: bool) -> Result<Preset> {
    let card = parse(bytes)?;
    presets::create(
        store,
        &NewPreset {
            name: card.name.clone(),
            persona: Some(persona(&card)),
            avatar: None,
            voice: None,
            open,
        },
    )
}

/// The bytes of a file the settings window read and sent as base64 (the IPC carries text).
pub fn decode_base64(data: &str) -> Result<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| CoreError::invalid(format!("the card file did not arrive intact: {e}")))
}

/// [`import`] of a file the settings window read and sent as base64.
pub fn import_base64(store: &Store, data: &str, open: bool) -> Result<Preset> {
    import(store, &decode_base64(data)?, open)
}

/// Where a card's picture is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PictureSource {
    /// The image's bytes: a PNG card itself, or an image a JSON card embeds as a `data:` URL.
    Bytes(Vec<u8>),
    /// A file the card names (a bare file name, read from the card's own folder).
    File(String),
}

/// The picture of a card file, if it has one: a PNG card is its own picture; a JSON card may
/// embed one (`data:image/…;base64,…`) or name a file beside it, in a V3 `assets` entry of type
/// `icon` (the one named `main` first) or in an `avatar` field (top level or under `data`).
/// Web addresses, `embeded://` (CHARX archives) and `ccdefault:` are not followed.
pub fn picture_of(bytes: &[u8]) -> Option<PictureSource> {
    if bytes.starts_with(PNG_SIGNATURE) {
        return Some(PictureSource::Bytes(bytes.to_vec()));
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    let data = value.get("data");
    let mut refs: Vec<&str> = Vec::new();
    if let Some(assets) = data.and_then(|d| d.get("assets")).and_then(Value::as_array) {
        let icons = assets
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) == Some("icon"));
        let (main, other): (Vec<&Value>, Vec<&Value>) =
            icons.partition(|a| a.get("name").and_then(Value::as_str) == Some("main"));
        refs.extend(
            main.into_iter()
                .chain(other)
                .filter_map(|a| a.get("uri").and_then(Value::as_str)),
        );
    }
    for holder in [Some(&value), data].into_iter().flatten() {
        if let Some(a) = holder.get("avatar").and_then(Value::as_str) {
            refs.push(a);
        }
    }
    refs.into_iter().find_map(picture_ref)
}

/// One picture reference of a JSON card: an embedded image or a bare file name.
fn picture_ref(uri: &str) -> Option<PictureSource> {
    let uri = uri.trim();
    if let Some(rest) = uri.strip_prefix("data:") {
        let (meta, payload) = rest.split_once(',')?;
        if !meta.starts_with("image/") || !meta.ends_with(";base64") {
            return None;
        }
        let compact: String = payload
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        return base64::engine::general_purpose::STANDARD
            .decode(compact)
            .ok()
            .map(PictureSource::Bytes);
    }
    let lower = uri.to_ascii_lowercase();
    let image_name = [".png", ".webp", ".jpg", ".jpeg"]
        .iter()
        .any(|e| lower.ends_with(e));
    // A bare name only: no scheme, no folder, so nothing outside the card's folder is read.
    let bare = !uri.contains(['/', '\\', ':']) && !uri.starts_with('.');
    (image_name && bare).then(|| PictureSource::File(uri.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_png_iend_crc() {
        assert_eq!(crc32(b"IEND"), 0xAE42_6082);
    }

    #[test]
    fn macros_are_filled_in_any_case() {
        assert_eq!(
            fill("{{Char}} greets {{user}}; <BOT> likes <User>. ü", "Mio"),
            "Mio greets the user; Mio likes the user. ü"
        );
    }
}
