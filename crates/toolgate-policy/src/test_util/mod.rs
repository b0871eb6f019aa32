//! Shared test stand-ins for the approvals port, compiled only with the
//! `test-util` feature (and for this crate's own tests): prompts built in one
//! line, channels whose answer a test fixes, and git for a test's own
//! repositories. (The fixtures of core's ports are in
//! `toolgate_core::test_util`.)
//!
//! A crate's tests enable it through their dev-dependency:
//!
//! ```toml
//! [dev-dependencies]
//! toolgate-policy = { workspace = true, features = ["test-util"] }
//! ```
//!
//! ```
//! use toolgate_core::Risk;
//! use toolgate_policy::approvals::{Answer, ApprovalChannel};
//! use toolgate_policy::test_util::{RecordingChannel, ask_about};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let channel = RecordingChannel::answering(Answer::Once);
//! let prompt = ask_about("c1", "bash", Risk::Execute, "make", "runs a program");
//! assert_eq!(channel.ask(&prompt).await.unwrap(), Answer::Once);
//! assert_eq!(channel.prompts(), vec![prompt]);
//! # });
//! ```

mod channels;
mod git;
mod prompts;

pub use channels::{Nobody, RecordingChannel};
pub use git::git_command;
pub use prompts::{ask_about, ask_prompt};

/// Waits (at most three seconds, else panics) until `path` last changed
/// long enough ago for the gate's process-wide caches to take its stamp
/// (they skip anything changed within about the last second).
pub fn wait_until_settled(path: &std::path::Path) {
    crate::stamp::wait_until_settled(path);
}

/// How many directory stamps this process answered from its inotify watch
/// instead of an `lstat` so far: a test of the watch checks it moved, so it
/// knows the watch, not `lstat`, answered.
pub fn dir_watch_served() -> u64 {
    crate::dir_watch::served()
}

/// Whether the directory watch answers for `dir` (and every directory above
/// it) as of the last decision, instead of an `lstat`.
pub fn dir_watch_answers_for(dir: &std::path::Path) -> bool {
    crate::dir_watch::would_answer(dir)
}
