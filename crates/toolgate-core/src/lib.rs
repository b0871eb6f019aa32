//! # toolgate-core
//!
//! The foundation of toolgate: the tool contract, the two-layer registry, the
//! settle pipeline every call goes through, output bounding, path resolution, the
//! audit event types, and the ports (traits) the other crates implement:
//! [`Gate`] (policy), [`EventSink`], [`EventQuery`] and [`OutputStore`] (store).
//!
//! This crate never decides permissions itself and knows no concrete tool.
//!
//! ```
//! use std::sync::Arc;
//! use toolgate_core::{Location, Registry, ToolSet};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let location = Arc::new(Location::new(dir.path()).unwrap());
//! let tools = ToolSet::new(Registry::new(), Registry::new());
//! // Register tools, build an `Engine` with a gate, a sink and an output store,
//! // then `engine.settle(&engine.materialize(), call, location, cancel).await`.
//! assert!(tools.materialize(|_| true).is_empty());
//! assert!(location.resolve("a/../b").unwrap().inside);
//! ```

#![deny(missing_docs)]

pub mod bound;
pub mod checkpoint;
// The path facts live in `toolgate-paths`; re-exported here under the names
// every crate already uses.
pub use toolgate_paths::{credential, path_text, protected, secret_values, small_file};
pub mod content;
pub mod context;
pub mod event;
pub mod event_query;
pub mod failure;
pub mod gate;
pub mod local_host;
pub mod location;
pub mod metadata_host;
pub mod output_check;
pub mod pipeline;
pub mod preview;
pub mod question;
pub mod registry;
pub mod risk;
pub mod sandbox_env;
pub mod secret_env;
pub mod shell_text;
pub mod staged;
mod staged_judge;
#[cfg(feature = "test-util")]
pub mod test_util;
pub mod tool;
pub mod visible;

pub use bound::{BoundError, Bounded, OutputBounds, OutputStore, SpillError, bound, bound_checked};
pub use checkpoint::{ChangeRecorder, ChangeSet};
pub use content::{Content, ToolOutput};
pub use context::{CallIdentity, Progress, ToolContext};
pub use event::{Event, EventAck, EventKind, EventPayload, EventSink, SinkError, now_ms};
pub use event_query::{EventQuery, QueryError};
pub use failure::Failure;
pub use gate::{Gate, GateCall, GateError, Judged, PermissionRequest, ResourceKind};
pub use location::{Location, PathError, ResolvedPath};
pub use output_check::{CheckError, Flag, OutputChecks, Redaction};
pub use pipeline::{CallError, CallRequest, CallResult, Engine};
pub use preview::{Preview, PreviewBody, PreviewField};
pub use question::{Question, QuestionChannel, QuestionError};
pub use registry::{
    Catalogue, CatalogueEntry, LookupError, Registration, Registry, RegistryError, ToolSet,
    valid_tool_name,
};
pub use risk::{Decision, DecisionSource, Effect, Risk, RuleRef};
pub use staged::{StagedChange, StagedKind, StagedVerdict, WriteJudge};
pub use tool::{
    PrepareError, PreparedCall, RunError, SchemaError, Tool, ToolError, ToolHandler, ToolSpec,
    ToolTraits, decode_input, handler,
};
