//! What a model receives: text, images and structured content.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of model-facing content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 of the image bytes.
        data: String,
        /// `image/png`, `image/jpeg`, …
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            Content::Image { .. } => None,
        }
    }
}

/// What a tool produced: its structured output (schema-valid) and the content the
/// model sees.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The structured output, valid against the tool's output schema.
    pub structured: Value,
    /// The projection to model content.
    pub content: Vec<Content>,
    /// How the work the tool ran ended, for the audit log: a process's exit
    /// code, or any status code a tool reports (`0` for success). `None` when
    /// the tool has no such status or the process did not exit normally. Core
    /// records it as the completed event's `exit_code` and reads nothing of a
    /// tool's own output to find it (see [`crate::Tool::exit_status`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
}
