//! Decisions run off the event loop: on a runtime with one thread, a call
//! whose decision is slow never holds up another call, and a gate that panics
//! fails its call, not the process. Only what the gate says it judges quickly
//! is judged on the calling task, and a panic there fails the call too.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate_core::test_util::*;
use toolgate_core::*;

/// Only there so a regression fails the test rather than hanging it; no
/// assertion depends on it.
const HANG_GUARD: Duration = Duration::from_secs(20);

/// Allows everything; the decision of the call with id `slow` does not return
/// until the call with id `fast` has completed (or, so that a broken pipeline
/// fails instead of hanging, until a generous limit passes).
fn held_gate(fast_done: mpsc::Receiver<()>) -> Arc<ScriptedGate> {
    let fast_done = Mutex::new(fast_done);
    ScriptedGate::allowing_once(move |call| {
        if call.call_id == "slow" {
            // Blocks its thread, as a long analysis does.
            let _ = fast_done.lock().unwrap().recv_timeout(HANG_GUARD);
        }
    })
}

/// A gate whose analysis panics before it decides anything.
fn panicking_gate() -> Arc<ScriptedGate> {
    ScriptedGate::allowing_once(|_| panic!("the analysis blew up"))
}

/// A gate that says every judgement is quick (as the policy says of file
/// paths), around another.
struct Quick(Arc<ScriptedGate>);

#[async_trait::async_trait]
impl Gate for Quick {
    fn evaluate(
        &self,
        call: &GateCall<'_>,
        requests: Vec<PermissionRequest>,
    ) -> Result<Vec<Judged>, GateError> {
        self.0.evaluate(call, requests)
    }

    async fn resolve(
        &self,
        call: &GateCall<'_>,
        judged: &[Judged],
        cancel: &CancellationToken,
    ) -> Result<Vec<Decision>, GateError> {
        self.0.resolve(call, judged, cancel).await
    }

    fn judges_quickly(&self, _requests: &[PermissionRequest]) -> bool {
        true
    }
}

/// The thread `gate` judged one call on.
async fn judging_thread(
    gate: Arc<dyn Gate>,
    seen: Arc<Mutex<Vec<std::thread::ThreadId>>>,
) -> std::thread::ThreadId {
    let dir = tempfile::tempdir().unwrap();
    one_call(gate, &dir).await.0.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    seen[0]
}

#[tokio::test(flavor = "current_thread")]
async fn only_a_quick_judgement_runs_on_the_calling_task() {
    let here = std::thread::current().id();
    let record = |seen: &Arc<Mutex<Vec<std::thread::ThreadId>>>| {
        let seen = Arc::clone(seen);
        ScriptedGate::allowing_once(move |_| seen.lock().unwrap().push(std::thread::current().id()))
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let slow_kind = judging_thread(record(&seen), Arc::clone(&seen)).await;
    assert_ne!(
        slow_kind, here,
        "a judgement not known to be quick runs on the blocking pool"
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let quick = judging_thread(Arc::new(Quick(record(&seen))), Arc::clone(&seen)).await;
    assert_eq!(quick, here, "a quick judgement runs where the call is");
}

#[tokio::test(flavor = "current_thread")]
async fn a_quick_gate_that_panics_fails_the_call_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (out, runs, sink) = one_call(Arc::new(Quick(panicking_gate())), &dir).await;
    let err = out.unwrap_err();
    assert!(
        matches!(err, CallError::Gate(GateError::Failed(_))),
        "{err}"
    );
    assert!(err.to_string().contains("the analysis blew up"), "{err}");
    assert_eq!(*runs.lock().unwrap(), 0);
    assert!(!sink.kinds().contains(&EventKind::ToolStarted));
}

fn engine(gate: Arc<dyn Gate>, dir: &tempfile::TempDir) -> (Engine, Registry, Arc<MemorySink>) {
    let process = Registry::new();
    let sink = Arc::new(MemorySink::default());
    let engine = Engine::new(
        ToolSet::new(process.clone(), Registry::new()),
        gate,
        sink.clone(),
        Arc::new(DirSpill(dir.path().join("data"))),
    );
    (engine, process, sink)
}

#[tokio::test(flavor = "current_thread")]
async fn a_slow_decision_does_not_delay_another_call_on_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = mpsc::channel();
    let gate = held_gate(rx);
    let (engine, process, _sink) = engine(gate, &dir);
    let (echo, _runs) = Echo::new("e");
    let _g = process.register("echo", echo).unwrap();
    let catalogue = Arc::new(engine.materialize());
    let location = Arc::new(Location::new(dir.path()).unwrap());
    let finished = Arc::new(Mutex::new(Vec::new()));
    let settle = |id: &'static str, done: Option<mpsc::Sender<()>>| {
        let engine = engine.clone();
        let catalogue = Arc::clone(&catalogue);
        let location = Arc::clone(&location);
        let finished = Arc::clone(&finished);
        tokio::spawn(async move {
            let out = engine
                .settle(
                    &catalogue,
                    call("echo", json!({"text": id}), id),
                    location,
                    CancellationToken::new(),
                )
                .await;
            finished.lock().unwrap().push(id);
            if let Some(done) = done {
                let _ = done.send(());
            }
            out.map(|o| o.content)
        })
    };
    // The slow call is first in line; the fast one comes after it.
    let slow = settle("slow", None);
    let fast = settle("fast", Some(tx));
    assert_eq!(fast.await.unwrap().unwrap(), vec![Content::text("e:fast")]);
    assert_eq!(slow.await.unwrap().unwrap(), vec![Content::text("e:slow")]);
    assert_eq!(*finished.lock().unwrap(), vec!["fast", "slow"]);
}

/// One call of an echo tool through `gate`: its outcome, how often the tool
/// ran, and the events recorded.
async fn one_call(
    gate: Arc<dyn Gate>,
    dir: &tempfile::TempDir,
) -> (
    Result<CallResult, CallError>,
    Arc<std::sync::Mutex<usize>>,
    Arc<MemorySink>,
) {
    let (engine, process, sink) = engine(gate, dir);
    let (echo, runs) = Echo::new("e");
    let _g = process.register("echo", echo).unwrap();
    let catalogue = engine.materialize();
    let location = Arc::new(Location::new(dir.path()).unwrap());
    let out = engine
        .settle(
            &catalogue,
            call("echo", json!({"text": "x"}), "c1"),
            location,
            CancellationToken::new(),
        )
        .await;
    (out, runs, sink)
}

/// One call through a gate that panics: its error, how often the tool ran,
/// and the events recorded.
async fn call_through_a_panicking_gate(
    dir: &tempfile::TempDir,
) -> (CallError, Arc<std::sync::Mutex<usize>>, Arc<MemorySink>) {
    let (out, runs, sink) = one_call(panicking_gate(), dir).await;
    (out.unwrap_err(), runs, sink)
}

#[tokio::test(flavor = "current_thread")]
async fn a_gate_that_panics_fails_the_call_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (err, runs, sink) = call_through_a_panicking_gate(&dir).await;
    assert!(matches!(err, CallError::Gate(_)), "{err}");
    assert!(err.to_string().contains("decision"), "{err}");
    assert_eq!(*runs.lock().unwrap(), 0);
    assert!(!sink.kinds().contains(&EventKind::ToolStarted));
}

/// Whether `err` or one of its causes is an `E`.
fn caused_by<E: std::error::Error + 'static>(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(err);
    while let Some(e) = cause {
        if e.downcast_ref::<E>().is_some() {
            return true;
        }
        cause = e.source();
    }
    false
}

#[tokio::test(flavor = "current_thread")]
async fn a_gate_that_panics_keeps_the_join_error_as_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let (err, _runs, _sink) = call_through_a_panicking_gate(&dir).await;
    let CallError::Gate(gate_error @ GateError::Failed(_)) = &err else {
        panic!("not a failed gate: {err}");
    };
    assert!(caused_by::<tokio::task::JoinError>(gate_error), "{err}");
}
