//! What a call will do, described by its tool for the person asked to allow
//! it ([`crate::Tool::preview`]). The structure is the same for every tool, so
//! the approval page and the terminal show it without knowing which tool made it.
//!
//! ```
//! use toolgate_core::{Preview, PreviewBody};
//!
//! let preview = Preview::new("Command")
//!     .with_body(PreviewBody::Command("cargo test".into()))
//!     .with_field("in", "/ws/crates");
//! assert_eq!(preview.fields[0].label, "in");
//! assert_eq!(serde_json::to_value(&preview).unwrap()["body"]["kind"], "command");
//! ```

use serde::{Deserialize, Serialize};

/// A tool's description of one call: a title, a few labelled facts and the
/// text or diff the call carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preview {
    /// What the call is, in a few words (`Command`, `Edit`, `Write`).
    pub title: String,
    /// Short facts, in the order to show them (a working directory, a size).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<PreviewField>,
    /// The content, in full; those who show it may cut it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<PreviewBody>,
}

/// One labelled fact of a [`Preview`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviewField {
    /// What the value is (`in`, `size`).
    pub label: String,
    /// The value, as text.
    pub value: String,
}

/// The content of a [`Preview`]; the kind says how to show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "text", rename_all = "snake_case")]
pub enum PreviewBody {
    /// A command line, shown verbatim.
    Command(String),
    /// A unified diff (`---`/`+++` headers, `@@` hunks, `+`/`-` lines).
    Diff(String),
    /// Any other text, shown verbatim.
    Text(String),
}

impl PreviewBody {
    /// The text, whatever its kind.
    pub fn text(&self) -> &str {
        match self {
            PreviewBody::Command(t) | PreviewBody::Diff(t) | PreviewBody::Text(t) => t,
        }
    }
}

impl Preview {
    /// The preview as a person is shown it: every character that is not shown
    /// ([`crate::visible::is_hidden`]) escaped, line breaks and tabs of the
    /// body kept, so a terminal escape or a bidi override in a command or a
    /// file's content cannot hide or reorder what the call does.
    pub fn shown(&self) -> Preview {
        use crate::visible::escape_hidden;
        let line = |t: &str| escape_hidden(t, &[]).into_owned();
        let block = |t: &str| escape_hidden(t, &['\n', '\t']).into_owned();
        Preview {
            title: line(&self.title),
            fields: self
                .fields
                .iter()
                .map(|f| PreviewField {
                    label: line(&f.label),
                    value: line(&f.value),
                })
                .collect(),
            body: self.body.as_ref().map(|b| match b {
                PreviewBody::Command(t) => PreviewBody::Command(block(t)),
                PreviewBody::Diff(t) => PreviewBody::Diff(block(t)),
                PreviewBody::Text(t) => PreviewBody::Text(block(t)),
            }),
        }
    }

    /// A preview with a title only.
    pub fn new(title: impl Into<String>) -> Self {
        Preview {
            title: title.into(),
            fields: Vec::new(),
            body: None,
        }
    }

    /// Adds a labelled fact after the others.
    #[must_use]
    pub fn with_field(mut self, label: impl Into<String>, value: impl Into<String>) -> Self {
        self.fields.push(PreviewField {
            label: label.into(),
            value: value.into(),
        });
        self
    }

    /// Sets the content.
    #[must_use]
    pub fn with_body(mut self, body: PreviewBody) -> Self {
        self.body = Some(body);
        self
    }
}
