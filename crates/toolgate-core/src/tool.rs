//! The tool contract: a typed [`Tool`] and its type-erased [`ToolHandler`].
//!
//! A tool declares its input and output as Rust types; their JSON Schemas are
//! generated with `schemars`. Input is decoded before anything else, so an invalid
//! input never reaches [`Tool::intent`] or [`Tool::execute`], and the error names
//! the offending field. Output is encoded and checked against the output schema; an
//! output that does not match is a failure, never a success.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use toolgate_core::{Location, PermissionRequest, Risk, Tool, ToolContext, ToolError};
//!
//! struct Echo;
//! #[derive(Deserialize, JsonSchema)]
//! struct EchoIn { text: String }
//! #[derive(Serialize, JsonSchema)]
//! struct EchoOut { text: String }
//!
//! impl Tool for Echo {
//!     type Input = EchoIn;
//!     type Output = EchoOut;
//!     fn description(&self) -> String { "Repeats its input.".into() }
//!     fn intent(&self, _: &EchoIn, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
//!         Ok(vec![PermissionRequest::new("echo", "*", Risk::Read)])
//!     }
//!     async fn execute(&self, input: EchoIn, _: ToolContext) -> Result<EchoOut, ToolError> {
//!         Ok(EchoOut { text: input.text })
//!     }
//! }
//! ```

use std::future::Future;
use std::sync::{Arc, OnceLock};

use futures::FutureExt;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::content::{Content, ToolOutput};
use crate::context::ToolContext;
use crate::gate::PermissionRequest;
use crate::location::{Location, PathError};
use crate::preview::Preview;

/// Facts about a tool that clients and schedulers use. The defaults lean to the
/// safe side: not read-only, not safe to run concurrently, possibly destructive,
/// open-world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolTraits {
    /// Never changes anything.
    pub read_only: bool,
    /// May run at the same time as other calls.
    pub concurrency_safe: bool,
    /// May destroy data.
    pub destructive: bool,
    /// Reaches outside the workspace (the network).
    pub open_world: bool,
}

impl Default for ToolTraits {
    fn default() -> Self {
        ToolTraits {
            read_only: false,
            concurrency_safe: false,
            destructive: true,
            open_world: true,
        }
    }
}

impl ToolTraits {
    /// A read-only, concurrency-safe, closed-world tool.
    pub fn read_only() -> Self {
        ToolTraits {
            read_only: true,
            concurrency_safe: true,
            destructive: false,
            open_world: false,
        }
    }

    /// A tool that reads from the network and changes nothing (webfetch,
    /// websearch): read-only and concurrency-safe, but open-world.
    pub fn reads_the_network() -> Self {
        ToolTraits {
            open_world: true,
            ..ToolTraits::read_only()
        }
    }
}

/// A failure inside a tool.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The input is well-formed but cannot be acted on (names what is wrong).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A path could not be resolved.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The tool ran and failed; the message is for the model.
    #[error("{0}")]
    Failed(String),
    /// The tool failed because of another error, kept as the source; the
    /// message (for the model) names what was being done and that error.
    #[error("{0}")]
    Caused(#[source] crate::failure::Failure),
    /// An I/O operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}

impl ToolError {
    /// `what` failed because of `source`, kept as the source; reads
    /// `"{what}: {source}"`.
    pub fn caused<E>(what: impl std::fmt::Display, source: E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        ToolError::Caused(crate::failure::Failure::caused(what, source))
    }

    /// An I/O error with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ToolError::Io {
            context: context.into(),
            source,
        }
    }
}

/// A tool with typed input and output.
pub trait Tool: Send + Sync + 'static {
    /// The decoded input.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    /// The full domain output (never truncated by the tool).
    type Output: Serialize + JsonSchema + Send + 'static;

    /// What the tool does, for the model.
    fn description(&self) -> String;

    /// Facts for clients and schedulers.
    fn traits(&self) -> ToolTraits {
        ToolTraits::default()
    }

    /// The action this tool's requests ask for, when it is not the name the
    /// tool is registered under (a file-writing tool may ask for `edit`). The
    /// catalogue leaves the tool out when the gate denies this action
    /// wholesale.
    fn action(&self) -> Option<&'static str> {
        None
    }

    /// The permission requests this input implies, with paths resolved. Computed
    /// before the tool runs; must not change anything.
    fn intent(
        &self,
        input: &Self::Input,
        location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError>;

    /// What this call will do, for a person asked to allow it: the command
    /// and where it runs, the diff of an edit. Computed only when someone is
    /// asked; must not change anything. By default none (the asker shows the
    /// input as it is).
    fn preview(&self, _input: &Self::Input, _location: &Location) -> Option<Preview> {
        None
    }

    /// Runs the tool. Must stop promptly when `ctx.cancel` fires.
    fn execute(
        &self,
        input: Self::Input,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;

    /// How the work ended, when the tool ran something that reports a status
    /// (a process's exit code): recorded in the audit log as the call's exit
    /// code. By default none.
    fn exit_status(&self, _output: &Self::Output) -> Option<i32> {
        None
    }

    /// The content the model sees; by default the output as pretty JSON text.
    fn project(&self, output: &Self::Output) -> Vec<Content> {
        vec![Content::text(
            serde_json::to_string_pretty(output).unwrap_or_default(),
        )]
    }
}

/// A tool's advertised definition.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    /// What the tool does.
    pub description: String,
    /// JSON Schema of the input (an object schema).
    pub input_schema: Value,
    /// JSON Schema of the structured output.
    pub output_schema: Value,
    /// Facts for clients.
    pub traits: ToolTraits,
    /// The action the tool's requests ask for, when it is not the tool's
    /// name (see [`Tool::action`]).
    pub action: Option<String>,
}

/// Why a call could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The input does not match the schema.
    #[error("invalid input at `{field}`: {message}")]
    InvalidInput {
        /// The path of the offending field (`.` for the whole input).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The intent could not be computed (a bad path, say).
    #[error(transparent)]
    Intent(ToolError),
}

/// Why a run failed after it started.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The tool reported a failure.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// The output did not match the output schema.
    #[error("tool output does not match its schema: {0}")]
    InvalidOutput(String),
}

type RunFn =
    Box<dyn FnOnce(ToolContext) -> BoxFuture<'static, Result<ToolOutput, RunError>> + Send>;

/// A decoded call, ready to be judged and then run.
pub struct PreparedCall {
    /// The requests the input implies.
    pub requests: Vec<PermissionRequest>,
    /// Read requests that only a rule naming their action can decide: with
    /// no such rule each is allowed by default and adds nothing to the
    /// call's outcome, so the pipeline judges (and records) them only when
    /// [`Gate::names_action`](crate::gate::Gate::names_action) says a rule
    /// names the action. An upstream tool's own name as an action is one.
    pub when_named: Vec<PermissionRequest>,
    run: RunFn,
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall")
            .field("requests", &self.requests)
            .field("when_named", &self.when_named)
            .finish_non_exhaustive()
    }
}

impl PreparedCall {
    /// A call that runs `run` once judged, for handlers that are not typed
    /// tools (proxied upstream tools): `requests` are what it is judged by.
    pub fn new(
        requests: Vec<PermissionRequest>,
        run: impl FnOnce(ToolContext) -> BoxFuture<'static, Result<ToolOutput, RunError>>
        + Send
        + 'static,
    ) -> Self {
        PreparedCall {
            requests,
            when_named: Vec::new(),
            run: Box::new(run),
        }
    }

    /// Adds requests judged only when a rule names their action (see
    /// [`PreparedCall::when_named`]).
    #[must_use]
    pub fn with_when_named(mut self, requests: Vec<PermissionRequest>) -> Self {
        self.when_named = requests;
        self
    }

    /// Runs the tool, encodes and checks its output, and projects it.
    pub fn run(self, ctx: ToolContext) -> BoxFuture<'static, Result<ToolOutput, RunError>> {
        (self.run)(ctx)
    }
}

/// A tool with its types erased, as the registry holds it.
pub trait ToolHandler: Send + Sync {
    /// The advertised definition, shared so that a catalogue holds it without
    /// copying its schemas.
    fn spec(&self) -> &Arc<ToolSpec>;

    /// Decodes the input and computes the intent. Nothing runs.
    fn prepare(&self, input: &Value, location: &Location) -> Result<PreparedCall, PrepareError>;

    /// Checks a (possibly shrunk) structured output against the output schema.
    fn check_output(&self, _structured: &Value) -> Result<(), String> {
        Ok(())
    }

    /// What the call with this input will do (see [`Tool::preview`]); `None`
    /// when the tool does not say or the input does not decode.
    fn preview(&self, _input: &Value, _location: &Location) -> Option<Preview> {
        None
    }

    /// The resource this tool's own request names for rules, when every call
    /// asks for it (an upstream tool's `NAME__tool` under action `mcp`): the
    /// catalogue leaves the tool out when the gate denies that resource
    /// wholesale. By default none.
    fn rule_resource(&self) -> Option<&str> {
        None
    }
}

/// A tool's output schema does not compile.
#[derive(Debug, thiserror::Error)]
#[error("tool schema is invalid: {0}")]
pub struct SchemaError(String);

/// Wraps a typed tool as a [`ToolHandler`].
///
/// Nothing is generated here: the spec (description and JSON Schemas) is
/// built when it is first asked for, and the output schema compiled when the
/// first output is checked, so a process that only prepares calls (`toolgate
/// check`) never pays for them. An output schema that does not compile fails
/// each output check, naming the schema error.
pub fn handler<T: Tool>(tool: T) -> Result<Arc<dyn ToolHandler>, SchemaError> {
    Ok(Arc::new(TypedHandler {
        tool: Arc::new(tool),
        spec: OnceLock::new(),
        validator: Arc::new(OutputValidator::default()),
    }))
}

fn schema_value<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

/// The output schema of `T::Output`, compiled on first use.
struct OutputValidator<O> {
    compiled: OnceLock<Result<jsonschema::Validator, SchemaError>>,
    output: std::marker::PhantomData<fn() -> O>,
}

impl<O> Default for OutputValidator<O> {
    fn default() -> Self {
        OutputValidator {
            compiled: OnceLock::new(),
            output: std::marker::PhantomData,
        }
    }
}

impl<O: JsonSchema> OutputValidator<O> {
    /// Checks `structured`, naming the first mismatch and where it is.
    fn check(&self, structured: &Value) -> Result<(), String> {
        let validator = self
            .compiled
            .get_or_init(|| {
                jsonschema::validator_for(&schema_value::<O>())
                    .map_err(|e| SchemaError(e.to_string()))
            })
            .as_ref()
            .map_err(ToString::to_string)?;
        match validator.iter_errors(structured).next() {
            Some(err) => Err(format!("{err} at `{}`", err.instance_path())),
            None => Ok(()),
        }
    }
}

struct TypedHandler<T: Tool> {
    tool: Arc<T>,
    spec: OnceLock<Arc<ToolSpec>>,
    validator: Arc<OutputValidator<T::Output>>,
}

impl<T: Tool> ToolHandler for TypedHandler<T> {
    fn spec(&self) -> &Arc<ToolSpec> {
        self.spec.get_or_init(|| {
            Arc::new(ToolSpec {
                description: self.tool.description(),
                traits: self.tool.traits(),
                input_schema: schema_value::<T::Input>(),
                output_schema: schema_value::<T::Output>(),
                action: self.tool.action().map(str::to_string),
            })
        })
    }

    fn check_output(&self, structured: &Value) -> Result<(), String> {
        self.validator.check(structured)
    }

    fn preview(&self, input: &Value, location: &Location) -> Option<Preview> {
        let decoded: T::Input = decode_input(input).ok()?;
        self.tool.preview(&decoded, location)
    }

    fn prepare(&self, input: &Value, location: &Location) -> Result<PreparedCall, PrepareError> {
        let (decoded, requests) = decode_and_intent(&*self.tool, input, location)?;
        let tool = Arc::clone(&self.tool);
        let validator = Arc::clone(&self.validator);
        let judged: Arc<[PermissionRequest]> = requests.clone().into();
        let run: RunFn = Box::new(move |ctx: ToolContext| {
            async move {
                let output = tool.execute(decoded, ctx.with_judged(judged)).await?;
                let structured = serde_json::to_value(&output)
                    .map_err(|e| RunError::InvalidOutput(e.to_string()))?;
                validator
                    .check(&structured)
                    .map_err(RunError::InvalidOutput)?;
                let content = tool.project(&output);
                Ok(ToolOutput {
                    structured,
                    content,
                    exit_status: tool.exit_status(&output),
                })
            }
            .boxed()
        });
        Ok(PreparedCall {
            requests,
            when_named: Vec::new(),
            run,
        })
    }
}

/// Decodes `input` for `tool` and computes its intent: every check a call
/// passes before it is judged.
fn decode_and_intent<T: Tool>(
    tool: &T,
    input: &Value,
    location: &Location,
) -> Result<(T::Input, Vec<PermissionRequest>), PrepareError> {
    let decoded: T::Input = decode_input(input)?;
    let requests = tool
        .intent(&decoded, location)
        .map_err(PrepareError::Intent)?;
    Ok((decoded, requests))
}

/// Decodes a JSON value into `T`, naming the offending field on error.
pub fn decode_input<T: DeserializeOwned>(input: &Value) -> Result<T, PrepareError> {
    if !input.is_object() {
        return Err(PrepareError::InvalidInput {
            field: ".".into(),
            message: format!("expected a JSON object, got {}", json_kind(input)),
        });
    }
    serde_path_to_error::deserialize(input).map_err(|e| {
        let field = e.path().to_string();
        PrepareError::InvalidInput {
            field,
            message: e.into_inner().to_string(),
        }
    })
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
