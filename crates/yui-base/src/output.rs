//! What a client tool answers the model: text, or text and images.

use serde::Serialize;

/// What a tool answers the model: a string, or text plus images (data URLs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ToolOutput {
    Text(String),
    Images { text: String, images: Vec<String> },
}

impl ToolOutput {
    pub fn text(s: impl Into<String>) -> Self {
        Self::Text(s.into())
    }
    /// The text part (the whole result for a string result).
    pub fn as_text(&self) -> &str {
        match self {
            Self::Text(t) => t,
            Self::Images { text, .. } => text,
        }
    }
}

impl From<&str> for ToolOutput {
    fn from(s: &str) -> Self {
        Self::Text(s.to_string())
    }
}
impl From<String> for ToolOutput {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}
