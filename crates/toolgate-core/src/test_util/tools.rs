//! Small tools whose behaviour a test controls: one that echoes, one that
//! waits to be released, one that sleeps, one that panics, and one whose
//! output breaks its own schema.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::lock;
use crate::{Content, Location, PermissionRequest, Risk, Tool, ToolContext, ToolError, ToolTraits};

/// The input of [`Echo`].
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoIn {
    /// What to repeat.
    pub text: String,
    /// How many times (once unless given).
    #[serde(default)]
    pub repeat: Option<u32>,
}

/// The output of [`Echo`], and of the other tools here that answer text.
#[derive(Serialize, JsonSchema)]
pub struct EchoOut {
    /// What the tool answered.
    pub text: String,
    /// The length of the input's text in bytes, where the tool reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length: Option<usize>,
}

impl EchoOut {
    /// An answer of `text` alone.
    pub fn new(text: impl Into<String>) -> Self {
        EchoOut {
            text: text.into(),
            length: None,
        }
    }
}

/// Echoes its input, naming the first 40 characters of the text as the
/// resource of one `echo` read; counts its executions.
///
/// Two kinds: a labelled echo ([`Echo::new`]) answers `LABEL:TEXT` so a test
/// can tell registrations apart; a plain one ([`Echo::plain`]) answers the
/// text itself with its length and says it is read-only, as a client sees a
/// simple tool.
pub struct Echo {
    label: Option<&'static str>,
    runs: Arc<Mutex<usize>>,
}

impl Echo {
    /// An echo labelled `label`, and the count of its executions.
    pub fn new(label: &'static str) -> (Self, Arc<Mutex<usize>>) {
        let runs = Arc::new(Mutex::new(0));
        let echo = Echo {
            label: Some(label),
            runs: Arc::clone(&runs),
        };
        (echo, runs)
    }

    /// A plain, read-only echo: "Repeats its input."
    pub fn plain() -> Self {
        Echo {
            label: None,
            runs: Arc::default(),
        }
    }
}

impl Tool for Echo {
    type Input = EchoIn;
    type Output = EchoOut;
    fn description(&self) -> String {
        match self.label {
            Some(label) => format!("echo ({label})"),
            None => "Repeats its input.".into(),
        }
    }
    fn traits(&self) -> ToolTraits {
        match self.label {
            Some(_) => ToolTraits::default(),
            None => ToolTraits::read_only(),
        }
    }
    fn intent(&self, i: &EchoIn, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new(
            "echo",
            i.text.chars().take(40).collect::<String>(),
            Risk::Read,
        )])
    }
    async fn execute(&self, i: EchoIn, _: ToolContext) -> Result<EchoOut, ToolError> {
        *lock(&self.runs) += 1;
        let text = i.text.repeat(i.repeat.unwrap_or(1) as usize);
        Ok(match self.label {
            Some(label) => EchoOut::new(format!("{label}:{text}")),
            None => EchoOut {
                length: Some(i.text.len()),
                text,
            },
        })
    }
    fn project(&self, o: &EchoOut) -> Vec<Content> {
        vec![Content::text(o.text.clone())]
    }
}

/// The input of the tools here that take none.
#[derive(Deserialize, JsonSchema)]
pub struct Empty {}

/// Waits on a notifier before finishing, so a test can change the registry
/// mid-call: notifies `started`, then answers `label` once `release` is
/// notified, or is cancelled.
pub struct Slow {
    /// Lets the call finish.
    pub release: Arc<tokio::sync::Notify>,
    /// Notified when the call has begun.
    pub started: Arc<tokio::sync::Notify>,
    /// What the call answers.
    pub label: &'static str,
}

impl Tool for Slow {
    type Input = Empty;
    type Output = EchoOut;
    fn description(&self) -> String {
        "slow".into()
    }
    fn intent(&self, _: &Empty, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new("slow", "*", Risk::Read)])
    }
    async fn execute(&self, _: Empty, ctx: ToolContext) -> Result<EchoOut, ToolError> {
        self.started.notify_one();
        tokio::select! {
            () = self.release.notified() => Ok(EchoOut::new(self.label)),
            () = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
        }
    }
}

/// Sleeps until cancelled; ignores cancellation (sleeping an hour) when
/// `stubborn`, so only dropping the call ends it.
pub struct Sleeper {
    /// Whether the tool ignores its cancel signal.
    pub stubborn: bool,
}

impl Tool for Sleeper {
    type Input = Empty;
    type Output = EchoOut;
    fn description(&self) -> String {
        "sleeps".into()
    }
    fn intent(&self, _: &Empty, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new("sleep", "*", Risk::Read)])
    }
    async fn execute(&self, _: Empty, ctx: ToolContext) -> Result<EchoOut, ToolError> {
        if self.stubborn {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        } else {
            ctx.cancel.cancelled().await;
        }
        Err(ToolError::Cancelled)
    }
}

/// Panics when it runs.
pub struct Panicker;

impl Tool for Panicker {
    type Input = Empty;
    type Output = EchoOut;
    fn description(&self) -> String {
        "panics".into()
    }
    fn intent(&self, _: &Empty, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new("panic", "*", Risk::Read)])
    }
    async fn execute(&self, _: Empty, _: ToolContext) -> Result<EchoOut, ToolError> {
        panic!("boom in tool")
    }
}

/// Claims an output schema its output violates (a number where a string is due).
pub struct Liar;

/// The schema [`Liar`] claims: a whole number `count`.
#[derive(Serialize, JsonSchema)]
pub struct Strict {
    /// A number, in the schema.
    pub count: u32,
}

/// What [`Liar`] answers: `count` as a string, under [`Strict`]'s schema.
pub struct LyingOutput;

impl Serialize for LyingOutput {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Strict", 1)?;
        st.serialize_field("count", "not a number")?;
        st.end()
    }
}

impl JsonSchema for LyingOutput {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Strict".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Strict::json_schema(g)
    }
}

impl Tool for Liar {
    type Input = Empty;
    type Output = LyingOutput;
    fn description(&self) -> String {
        "lies about its output".into()
    }
    fn intent(&self, _: &Empty, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new("liar", "*", Risk::Read)])
    }
    async fn execute(&self, _: Empty, _: ToolContext) -> Result<LyingOutput, ToolError> {
        Ok(LyingOutput)
    }
}
