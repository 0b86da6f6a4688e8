//! A `tools/call` result as the one answer the model gets: text content joined (one block a line),
//! image content as the result's images (the path look's and the browser's screenshots take:
//! decoded, long edge ≤ 1280 px, JPEG data URLs, at most 4), `isError` as `error: <text>`.

use crate::images as shots;
use crate::tools::ToolOutput;
use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The most text a result keeps (as a command tool's `content`).
pub const MAX_TEXT: usize = 1024 * 1024;
/// An image bigger than this (decoded) is not attached.
pub const MAX_IMAGE_BYTES: usize = 16 * 1024 * 1024;

/// What a result holds before its images are encoded.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Parts {
    pub text: String,
    /// Decoded image bytes, in content order.
    pub images: Vec<Vec<u8>>,
    pub error: bool,
}

/// Split a result into its text, its images and whether it is an error.
pub fn parts(r: &CallToolResult) -> Parts {
    let mut lines: Vec<String> = Vec::new();
    let mut images = Vec::new();
    let mut image =
        |data: &str, lines: &mut Vec<String>| match base64::engine::general_purpose::STANDARD
            .decode(data.trim())
        {
            Ok(b) if b.len() <= MAX_IMAGE_BYTES => images.push(b),
            Ok(_) => lines.push("[yui] an image over 16 MiB was not attached".into()),
            Err(_) => lines.push("[yui] an image that is not valid base64 was not attached".into()),
        };
    for block in &r.content {
        match block {
            ContentBlock::Text(t) => lines.push(t.text.clone()),
            ContentBlock::Image(i) => image(&i.data, &mut lines),
            ContentBlock::Audio(a) => {
                lines.push(format!("[yui] audio ({}) was not attached", a.mime_type))
            }
            ContentBlock::Resource(e) => match &e.resource {
                ResourceContents::TextResourceContents { text, .. } => lines.push(text.clone()),
                ResourceContents::BlobResourceContents {
                    blob, mime_type, ..
                } if mime_type
                    .as_deref()
                    .is_some_and(|m| m.starts_with("image/")) =>
                {
                    image(blob, &mut lines)
                }
                ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                    lines.push(format!(
                        "[yui] binary resource {uri} ({}) was not attached",
                        mime_type.as_deref().unwrap_or("unknown type")
                    ))
                }
                _ => lines.push("[yui] a resource of an unknown kind was not attached".into()),
            },
            ContentBlock::ResourceLink(l) => lines.push(format!("[resource] {} {}", l.name, l.uri)),
            _ => lines.push("[yui] content of an unknown kind was not attached".into()),
        }
    }
    if r.content.is_empty() {
        if let Some(s) = &r.structured_content {
            lines.push(s.to_string());
        }
    }
    let mut text = lines.join("\n");
    if text.len() > MAX_TEXT {
        let mut cut = MAX_TEXT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[yui] the result was cut at 1 MiB");
    }
    Parts {
        text,
        images,
        error: r.is_error == Some(true),
    }
}

/// The answer: `error: <text>` for an error result; else the text, with the images encoded as
/// JPEG data URLs (CPU work: call it off the async threads).
pub fn answer(p: Parts) -> ToolOutput {
    if p.error {
        let text = if p.text.trim().is_empty() {
            "the tool failed".to_string()
        } else {
            p.text
        };
        return ToolOutput::Text(format!("error: {text}"));
    }
    if p.images.is_empty() {
        return ToolOutput::Text(p.text);
    }
    let mut notes = Vec::new();
    let dropped = p.images.len().saturating_sub(shots::MAX_SHOTS);
    if dropped > 0 {
        notes.push(format!(
            "[yui] {dropped} earlier image(s) dropped: only the last {} are attached",
            shots::MAX_SHOTS
        ));
    }
    let mut images = Vec::new();
    for bytes in &p.images[dropped..] {
        match shots::encode_bytes(bytes) {
            Ok(url) => images.push(url),
            Err(e) => notes.push(format!("[yui] an image was not attached: {e}")),
        }
    }
    let mut text = p.text;
    for n in notes {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&n);
    }
    if images.is_empty() {
        ToolOutput::Text(text)
    } else {
        ToolOutput::Images { text, images }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(v: serde_json::Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn text_is_joined_and_errors_are_marked() {
        let r = result(
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        );
        assert_eq!(answer(parts(&r)), ToolOutput::Text("a\nb".into()));
        let r =
            result(json!({"content": [{"type": "text", "text": "no such city"}], "isError": true}));
        assert_eq!(
            answer(parts(&r)),
            ToolOutput::Text("error: no such city".into())
        );
        let r = result(json!({"content": [], "isError": true}));
        assert_eq!(
            answer(parts(&r)),
            ToolOutput::Text("error: the tool failed".into())
        );
        let r = result(json!({"content": [], "structuredContent": {"t": 1}}));
        assert_eq!(answer(parts(&r)), ToolOutput::Text(r#"{"t":1}"#.into()));
    }

    #[test]
    fn images_become_jpeg_data_urls() {
        let mut png = Vec::new();
        image::RgbImage::new(4, 3)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
        let r = result(json!({"content": [
            {"type": "text", "text": "look"},
            {"type": "image", "data": b64, "mimeType": "image/png"},
            {"type": "image", "data": "%%%", "mimeType": "image/png"},
            {"type": "audio", "data": "", "mimeType": "audio/wav"},
        ]}));
        match answer(parts(&r)) {
            ToolOutput::Images { text, images } => {
                assert_eq!(images.len(), 1);
                assert!(images[0].starts_with("data:image/jpeg;base64,"));
                assert!(
                    text.starts_with("look\n[yui] an image that is not valid base64"),
                    "{text}"
                );
                assert!(text.contains("audio (audio/wav)"));
            }
            o => panic!("{o:?}"),
        }
    }
}
