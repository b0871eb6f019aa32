//! git for a test's own repositories.

use std::path::Path;
use std::process::Command;

/// A `git` command in `dir` with a fixed identity, without signing or hooks,
/// and reading none of the user's or the system's configuration
/// (`GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM=1`), so a test's
/// repository is the same on every machine.
pub fn git_command(dir: &Path, args: &[&str]) -> Command {
    let mut git = Command::new("git");
    git.args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    git
}
