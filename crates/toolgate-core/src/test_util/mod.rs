//! Shared test fixtures for the ports of this crate, compiled only with the
//! `test-util` feature: a scripted [`Gate`](crate::Gate), in-memory and
//! discarding [`EventSink`](crate::EventSink)s, a directory
//! [`OutputStore`](crate::OutputStore), small tools whose behaviour a test
//! controls, call builders and a temporary workspace.
//!
//! A crate's tests enable it through their dev-dependency:
//!
//! ```toml
//! [dev-dependencies]
//! toolgate-core = { workspace = true, features = ["test-util"] }
//! ```
//!
//! Nothing here belongs in a normal build; the fixtures panic on a poisoned
//! lock or a failed set-up step, as a test should.
//!
//! ```
//! use std::sync::Arc;
//! use toolgate_core::test_util::{DirSpill, Echo, MemorySink, ScriptedGate, TempWorkspace, call};
//! use toolgate_core::{Effect, Engine, EventKind, Registry, ToolSet};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let ws = TempWorkspace::new();
//! let process = Registry::new();
//! let (echo, runs) = Echo::new("v1");
//! let _guard = process.register("echo", echo).unwrap();
//! let sink = Arc::new(MemorySink::default());
//! let engine = Engine::new(
//!     ToolSet::new(process, Registry::new()),
//!     ScriptedGate::new(Effect::Allow, Effect::Allow),
//!     sink.clone(),
//!     Arc::new(DirSpill(ws.data())),
//! );
//! let call = call("echo", serde_json::json!({"text": "hi"}), "c1");
//! let cancel = tokio_util::sync::CancellationToken::new();
//! let out = engine.settle(&engine.materialize(), call, ws.location(), cancel).await.unwrap();
//! assert_eq!(out.structured, Some(serde_json::json!({"text": "v1:hi"})));
//! assert_eq!(*runs.lock().unwrap(), 1);
//! assert_eq!(sink.last().kind, EventKind::ToolCompleted);
//! # });
//! ```

mod calls;
mod gate;
mod sinks;
mod spill;
mod tools;
mod workspace;

pub use calls::{call, identity, stored_event};
pub use gate::ScriptedGate;
pub use sinks::{DiscardSink, MemorySink};
pub use spill::DirSpill;
pub use tools::{Echo, EchoIn, EchoOut, Empty, Liar, LyingOutput, Panicker, Sleeper, Slow, Strict};
pub use workspace::TempWorkspace;

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, going on through a poisoned lock: a test that panicked while
/// holding it has already failed, and its fixture's data is still what it was.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
