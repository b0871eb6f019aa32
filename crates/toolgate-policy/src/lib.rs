//! # toolgate-policy
//!
//! Rules, config layers, risk classification, shell analysis, the decision tree,
//! approvals and explain: everything that decides whether a tool call of toolgate
//! runs.
//!
//! * [`config`] parses the TOML layers, [`rules`] compiles them once,
//!   [`policy`] is the decision tree over them;
//! * [`expand`] raises a call's base requests by the kind of their resource
//!   (shell analysis of commands; credential paths and paths outside the
//!   location; URLs with credentials), whichever tool asked;
//! * [`actions`] is the vocabulary rules name;
//! * [`gate::PolicyGate`] is the `toolgate_core::Gate` of the settle pipeline,
//!   with saved approvals behind the [`approvals::ApprovalStore`] port and people
//!   behind the [`approvals::ApprovalChannel`] port, over a
//!   [`shared_policy::SharedPolicy`] that a reload swaps;
//! * [`people`] asks a person, for approvals and for the `question` tool's
//!   answers, through the channels in the order of the policy in force;
//! * [`check`] answers `toolgate check` and `toolgate policy explain`.
//!
//! ```
//! use toolgate_core::{Effect, Location, PermissionRequest, Risk};
//! use toolgate_policy::check::check;
//! use toolgate_policy::policy::{NoApprovals, Policy};
//! use toolgate_policy::rules::Layer;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let location = Location::new(dir.path()).unwrap();
//! let config = "[permission.edit]\n\"src/**\" = \"allow\"\n";
//! let policy = Policy::from_texts(location.root(), "/home/u".as_ref(),
//!     &[("project.toml", Layer::Project, config)], None).unwrap();
//! // What a tool's intent gives for writing `src/main.rs`: a path request.
//! let path = location.root().join("src/main.rs").display().to_string();
//! let requests = vec![PermissionRequest::path("edit", path, Risk::Write)];
//! let answer = check(&policy, requests, &location, &NoApprovals);
//! assert_eq!(answer.decision, Effect::Allow);
//! assert_eq!(answer.requests[0].rule.as_deref(), Some("project.toml:2"));
//! ```

#![deny(missing_docs)]

pub mod actions;
pub mod approvals;
pub mod check;
pub mod classify;
pub mod config;
mod dir_watch;
pub mod expand;
pub mod gate;
pub mod git_index;
pub mod git_tracked;
pub mod installs;
pub mod pattern;
pub mod people;
pub mod policy;
pub mod project_key;
pub mod repo_config;
pub mod rules;
pub mod shared_policy;
pub mod shell;
mod stamp;
#[cfg(any(test, feature = "test-util"))]
pub mod test_util;
pub mod trust;
