//! A channel's error keeps what caused it: through `InOrder` and
//! `FirstAnswer`, the combined error still leads to the I/O error of the
//! channel that failed.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::error::Error;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use toolgate_core::Failure;
use toolgate_policy::approvals::{
    Answer, ApprovalChannel, AskPrompt, ChannelError, FirstAnswer, InOrder,
};
use toolgate_policy::test_util::{Nobody, ask_prompt};

/// Fails by reading a file that is not there, as a channel whose state file
/// went missing would.
struct Broken(std::path::PathBuf);

#[async_trait]
impl ApprovalChannel for Broken {
    async fn ask(&self, _prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        let text = std::fs::read_to_string(&self.0)
            .map_err(|e| ChannelError::Failed(Failure::caused("cannot read the page state", e)))?;
        Err(ChannelError::Failed(Failure::new(text)))
    }
}

/// An ask the channels here never read.
fn prompt() -> AskPrompt {
    ask_prompt("c", "bash")
}

/// The first cause of `err` (itself included) that is an `io::Error`.
fn io_cause<'a>(err: &'a (dyn Error + 'static)) -> Option<&'a std::io::Error> {
    let mut cause = Some(err);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        cause = e.source();
    }
    None
}

#[tokio::test]
async fn the_failed_channels_io_error_is_the_cause_of_the_combined_error() {
    let dir = tempfile::tempdir().unwrap();
    let broken = || -> Arc<dyn ApprovalChannel> { Arc::new(Broken(dir.path().join("gone"))) };
    let in_order = InOrder::new(vec![Arc::new(Nobody), broken()], Duration::from_secs(30));
    let first = FirstAnswer(vec![broken(), Arc::new(Nobody)]);
    for err in [
        in_order.ask(&prompt()).await.unwrap_err(),
        first.ask(&prompt()).await.unwrap_err(),
    ] {
        assert!(matches!(err, ChannelError::Failed(_)), "{err}");
        let io = io_cause(&err).unwrap_or_else(|| panic!("no I/O cause: {err}"));
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound, "{err}");
        assert!(
            err.to_string().contains("cannot read the page state"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn with_nobody_to_ask_the_first_reason_is_the_cause() {
    let both = InOrder::new(vec![Arc::new(Nobody), Arc::new(Nobody)], Duration::ZERO);
    let err = both.ask(&prompt()).await.unwrap_err();
    assert!(matches!(err, ChannelError::Unavailable(_)), "{err}");
    let cause = err
        .source()
        .and_then(Error::source)
        .map(ToString::to_string);
    assert_eq!(cause.as_deref(), Some("no one can be asked: no terminal"));
}
