//! Commands that only say what a program is: `PROGRAM --version` and
//! `PROGRAM --help` of a known program, and `printenv NAME` of variables
//! known to hold no secret.
//!
//! A known program given `--version` or `--help` alone prints its version or
//! its usage and exits, before it reads any file, with one exception: a
//! program that, at its start, switches to a version or loads settings that
//! the project names ([`LOADS_THE_PROJECT_AT_START`]). Those stay asked.
//!
//! `ls` and `stat` only look at a file they are given
//! ([`LOOKS_AT_ENTRIES`]).

use toolgate_core::Risk;
use toolgate_core::sandbox_env::sandbox_env_allows;

use super::{Verdict, read_spec, table};

/// Programs that only look at the entries their operands name: of a file
/// they print its metadata (`ls -la .env`, `stat .env`), never its content,
/// so a secret file named by its plain path inside the location is only
/// looked at, not read. A directory operand is still judged as a read (its
/// names are listed: `ls ~/.ssh`).
pub(crate) const LOOKS_AT_ENTRIES: &[&str] = &["ls", "dir", "vdir", "stat"];

/// The words that make a known program say what it is and exit.
pub(crate) const ABOUT_WORDS: &[&str] = &["--version", "--help"];

/// Programs that, even for `--version`, first switch to a version or load
/// settings the project names, which may run a program of the project:
/// `(name, why)`.
pub(crate) const LOADS_THE_PROJECT_AT_START: &[(&str, &str)] = &[
    (
        "cargo",
        "rustup runs the toolchain `rust-toolchain.toml` names, by path too",
    ),
    (
        "rustc",
        "rustup runs the toolchain `rust-toolchain.toml` names, by path too",
    ),
    (
        "rustdoc",
        "rustup runs the toolchain `rust-toolchain.toml` names, by path too",
    ),
    (
        "rustfmt",
        "rustup runs the toolchain `rust-toolchain.toml` names, by path too",
    ),
    (
        "cargo-clippy",
        "rustup runs the toolchain `rust-toolchain.toml` names, by path too",
    ),
    (
        "clippy-driver",
        "rustup runs the toolchain `rust-toolchain.toml` names, by path too",
    ),
    (
        "rust-analyzer",
        "rustup runs the toolchain `rust-toolchain.toml` names, by path too",
    ),
    (
        "rustup",
        "`rustup --version` also runs the active toolchain's rustc",
    ),
    (
        "yarn",
        "Yarn runs the file `.yarnrc.yml`'s `yarnPath` names",
    ),
    (
        "pnpm",
        "pnpm downloads and runs the version `package.json`'s `packageManager` names",
    ),
    (
        "corepack",
        "corepack downloads and runs the version `package.json`'s `packageManager` names",
    ),
    (
        "mvn",
        "`.mvn/jvm.config` and `.mvn/extensions.xml` load into Maven's JVM",
    ),
    (
        "gradle",
        "`gradle.properties` sets the JVM's options (`-javaagent`)",
    ),
    ("sbt", "`.jvmopts` and `.sbtopts` set the JVM's options"),
    (
        "bazel",
        "bazelisk runs the version `.bazelversion` names; `.bazelrc` is read at start",
    ),
    (
        "bazelisk",
        "bazelisk runs the version `.bazelversion` names",
    ),
    ("mise", "mise loads the project's `mise.toml`"),
    ("asdf", "asdf runs the plugins `.tool-versions` names"),
];

/// `PROGRAM --version` or `PROGRAM --help` of a program this classifier
/// knows (by name, not by a path), that loads nothing of the project at
/// its start and is not destructive or a printer of secrets by itself.
pub(crate) fn about_program(argv: &[&str]) -> Option<Verdict> {
    let [first, word] = argv else {
        return None;
    };
    if first.contains('/') || !ABOUT_WORDS.contains(word) {
        return None;
    }
    let name = *first;
    if LOADS_THE_PROJECT_AT_START.iter().any(|(n, _)| *n == name) {
        return None;
    }
    let known = match table::lookup(name) {
        Some(row) => row.risk < Risk::Credential,
        None => read_spec::lookup(name).is_some(),
    };
    if !known {
        return None;
    }
    let what = if *word == "--version" {
        "version"
    } else {
        "usage"
    };
    let mut verdict = Verdict::new(
        Risk::Read,
        format!("`{name} {word}` prints the program's {what} and exits"),
        false,
    );
    verdict.files = Some(Vec::new());
    Some(verdict)
}

/// `printenv NAME…` where every name is one a confined command inherits
/// ([`sandbox_env_allows`]: `PATH`, `HOME`, `LANG`, `LC_*`…): the same
/// allowlist as the sandbox's environment, so it prints nothing a confined
/// command could not see.
pub(crate) fn printenv_harmless(argv: &[&str]) -> Option<Verdict> {
    let [first, names @ ..] = argv else {
        return None;
    };
    if *first != "printenv" || names.is_empty() {
        return None;
    }
    let harmless = names
        .iter()
        .all(|n| !n.starts_with('-') && sandbox_env_allows(n, &[]));
    if !harmless {
        return None;
    }
    let mut verdict = Verdict::new(
        Risk::Read,
        format!(
            "`printenv {}` prints variables that hold no secret",
            names.join(" ")
        ),
        false,
    );
    verdict.files = Some(Vec::new());
    Some(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risk(cmd: &str) -> Option<Risk> {
        let argv: Vec<&str> = cmd.split(' ').collect();
        about_program(&argv)
            .or_else(|| printenv_harmless(&argv))
            .map(|v| v.risk)
    }

    #[test]
    fn version_and_help_of_known_programs_are_read() {
        for cmd in [
            "npm --version",
            "node --version",
            "python3 --version",
            "git --version",
            "docker --version",
            "go --version",
            "make --version",
            "curl --version",
            "tar --help",
            "grep --help",
            "sed --version",
            "ls --help",
        ] {
            assert_eq!(risk(cmd), Some(Risk::Read), "{cmd}");
        }
    }

    #[test]
    fn programs_that_load_the_project_at_start_are_not() {
        for cmd in [
            "cargo --version",
            "rustc --version",
            "rustup --version",
            "yarn --version",
            "pnpm --version",
            "mvn --version",
            "frobnicate --version",
            "./scripts/x.sh --version",
            "/usr/bin/env --version --x",
            "printenv --version",
            "npm --version x",
        ] {
            assert_eq!(risk(cmd), None, "{cmd}");
        }
    }

    #[test]
    fn printenv_of_harmless_names_only() {
        for cmd in ["printenv PATH", "printenv HOME LANG", "printenv LC_ALL"] {
            assert_eq!(risk(cmd), Some(Risk::Read), "{cmd}");
        }
        for cmd in [
            "printenv",
            "printenv AWS_SECRET_ACCESS_KEY",
            "printenv PATH GITHUB_TOKEN",
            "printenv -0 PATH",
            "printenv DATABASE_URL",
        ] {
            assert_eq!(risk(cmd), None, "{cmd}");
        }
    }
}
