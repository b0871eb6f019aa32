//! The filesystem the shell corpus runs against, built in a temporary directory:
//! a workspace that is a git repo with `.env` files and symlinks in and out, a
//! fake home with `.ssh`, `.aws` and other secrets, and a directory outside.
//!
//! The workspace also holds what an attacker would plant in a repository:
//! executables named like system tools (`scripts/ls`, `scripts/cat`,
//! `scripts/git`, and `~/bin/ls` in the home), an `.npmrc` with a token and an
//! editor, a `rust-toolchain.toml` whose `path` points back into the repository,
//! a ripgrep config with `--pre`, sed/awk programs that run commands, file lists
//! naming secrets (`list.txt`, `list0`) and a 40-character file name for glob
//! matching, and `target/leaky/`, a repository of its own (below `target`,
//! which the recursive reads of the workspace skip, so they stay as they
//! are) that tracks `.env`,
//! `id_rsa`, `.npmrc` and `notes.txt`, a hard link to `~/.ssh/id_ed25519`
//! (what `git grep`, `git show`, `git log -p` print). The workspace's own
//! repository ignores `.env` and tracks no secret. Helpers shared by the corpus and property tests live here too:
//! the gate's decision through the public API, JSONL field parsing, the dump of
//! a command's requests (`CORPUS_DUMP=1`), proptest runners and quoting.

#![allow(dead_code)]

pub(crate) use crate::intent;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use intent::{IntentError, builtin_intent};
use serde_json::Value;
use toolgate_core::{Effect, Location, Risk};
use toolgate_policy::check::{CheckOutcome, check};
use toolgate_policy::config::Mode;
use toolgate_policy::policy::{NoApprovals, Policy};
use toolgate_policy::shell::{ShellContext, ShellRequest, analyze};

/// The fixture; dropped with its temporary directory.
pub struct Fixture {
    _dir: tempfile::TempDir,
    /// The workspace root (canonical).
    pub ws: PathBuf,
    /// The fake home (canonical).
    pub home: PathBuf,
    /// A directory outside both (canonical).
    pub out: PathBuf,
    /// The location over `ws`.
    pub location: Location,
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, text).unwrap();
}

/// Writes an executable script.
fn write_exec(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(path, text);
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// What the planted executables do: touch a marker (a real attack would do worse).
const PLANTED: &str = "#!/bin/sh\ntouch \"$(dirname \"$0\")/../pwned\"\n";

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        let home = base.join("home");
        let out = base.join("outside");
        for d in [&ws, &home, &out] {
            fs::create_dir_all(d).unwrap();
        }
        // The workspace: a git repo with sources, secrets and templates.
        write(&ws.join("src/main.rs"), "fn main() {}\n");
        write(&ws.join("src/lib.rs"), "\n");
        write(&ws.join("README.md"), "# demo\n");
        write(&ws.join("Cargo.toml"), "[package]\nname = \"demo\"\n");
        write(&ws.join("package.json"), "{}\n");
        write(&ws.join("data.txt"), "a\nb\n");
        write(&ws.join("build.sh"), "echo build\n");
        write(&ws.join("notes/todo.md"), "- x\n");
        write(&ws.join("notes/deep/er/.env.staging"), "TOKEN=secret\n");
        write(&ws.join(".env"), "TOKEN=secret\n");
        write(&ws.join(".env.local"), "TOKEN=secret\n");
        write(&ws.join(".env.production"), "TOKEN=secret\n");
        write(&ws.join(".env.example"), "TOKEN=\n");
        write(&ws.join(".env.sample"), "TOKEN=\n");
        write(&ws.join(".env.template"), "TOKEN=\n");
        write(&ws.join("config/.env"), "TOKEN=secret\n");
        write(
            &ws.join(".git-credentials"),
            "https://u:p@example.invalid\n",
        );
        fs::create_dir_all(ws.join("target")).unwrap();
        // Everyday files for the benign corpus.
        write(&ws.join("src/util.rs"), "pub fn util() {}\n");
        write(&ws.join("tests/it.rs"), "#[test]\nfn it() {}\n");
        write(&ws.join("docs/guide.md"), "# guide\n\nTODO: write\n");
        write(&ws.join("a.txt"), "one\ntwo\n");
        write(&ws.join("b.txt"), "one\nthree\n");
        write(&ws.join("Cargo.lock"), "version = 4\n");
        write(&ws.join(".gitignore"), "target/\n.env\n");
        // What an attacker plants in a repository.
        write_exec(&ws.join("scripts/ls"), PLANTED);
        write_exec(&ws.join("scripts/cat"), PLANTED);
        write_exec(&ws.join("scripts/git"), PLANTED);
        write_exec(&ws.join("scripts/x.sh"), PLANTED);
        write(
            &ws.join(".npmrc"),
            "//registry.npmjs.org/:_authToken=npm_SECRETTOKEN\neditor=./scripts/x.sh\n",
        );
        write(
            &ws.join("rust-toolchain.toml"),
            "[toolchain]\npath = \"/proc/self/cwd/scripts\"\n",
        );
        write(&ws.join("rgconfig"), "--pre=./scripts/x.sh\n");
        write(&ws.join("script.sed"), "1e touch pwned\n");
        write(&ws.join("prog.awk"), "BEGIN { system(\"touch pwned\") }\n");
        write(
            &ws.join("list.txt"),
            &format!(".env\n{}\n", home.join(".ssh/id_ed25519").display()),
        );
        write(&ws.join("list0"), ".env\0");
        write(
            &ws.join("Makefile"),
            "X := $(shell touch pwned)\nall:\n\techo all\n",
        );
        write(&ws.join(format!("long/{}", "a".repeat(40))), "x\n");
        init_git(&ws);
        // The home: secrets in their usual places.
        write(&home.join(".ssh/id_ed25519"), "KEY\n");
        write(&home.join(".ssh/config"), "Host *\n");
        write(&home.join(".aws/credentials"), "[default]\n");
        write(&home.join(".config/gh/hosts.yml"), "github.com:\n");
        write(&home.join(".netrc"), "machine x\n");
        write(&home.join(".docker/config.json"), "{}\n");
        write(&home.join(".kube/config"), "apiVersion: v1\n");
        write(&home.join(".bashrc"), "# rc\n");
        write(&home.join("notes.txt"), "hi\n");
        write_exec(&home.join("bin/ls"), PLANTED);
        write_exec(&home.join("bin/git"), PLANTED);
        // Outside: plain files.
        write(&out.join("file.txt"), "outside\n");
        write(&out.join("sub/deep.txt"), "deep\n");
        write_exec(&out.join("bin/ls"), PLANTED);
        // Symlinks: inside → inside, inside → outside, inside → secrets.
        symlink(ws.join("src"), ws.join("link_in")).unwrap();
        symlink(&out, ws.join("link_out")).unwrap();
        symlink(out.join("file.txt"), ws.join("link_file_out")).unwrap();
        symlink(home.join(".ssh/id_ed25519"), ws.join("link_key")).unwrap();
        symlink(home.join(".ssh"), ws.join("link_ssh")).unwrap();
        symlink(ws.join(".env"), ws.join("settings.cfg")).unwrap();
        symlink("/etc", ws.join("link_etc")).unwrap();
        symlink(ws.join("data.txt"), ws.join("data_link.txt")).unwrap();
        symlink(ws.join("scripts"), ws.join("bin_link")).unwrap();
        // A directory holding a link to a key under an everyday name.
        fs::create_dir_all(ws.join("linkdir")).unwrap();
        symlink(home.join(".ssh/id_ed25519"), ws.join("linkdir/README.md")).unwrap();
        // And one holding a link to a directory outside.
        fs::create_dir_all(ws.join("linkdir_out")).unwrap();
        symlink(&out, ws.join("linkdir_out/o")).unwrap();
        // Hard links: one to a key (outside, so the recursive reads of the
        // workspace stay as they are), one between two ordinary files.
        fs::hard_link(home.join(".ssh/id_ed25519"), out.join("key_link.txt")).unwrap();
        fs::hard_link(ws.join("data.txt"), ws.join("data_hard.txt")).unwrap();
        leaky_repo(&ws.join("target/leaky"), &home);
        let location = Location::new(&ws).unwrap();
        Fixture {
            _dir: dir,
            ws,
            home,
            out,
            location,
        }
    }

    /// Replaces `{ws}`, `{home}` and `{out}` with the fixture's paths.
    pub fn expand(&self, text: &str) -> String {
        text.replace("{ws}", &self.ws.to_string_lossy())
            .replace("{home}", &self.home.to_string_lossy())
            .replace("{out}", &self.out.to_string_lossy())
    }

    /// The shell context for a command run in `ws/<sub>`.
    pub fn ctx(&self, sub: &str) -> ShellContext<'_> {
        let cwd = if sub.is_empty() {
            self.ws.clone()
        } else {
            self.ws.join(sub)
        };
        ShellContext {
            location: &self.location,
            cwd,
            home: self.home.clone(),
            inherited_env: true,
        }
    }

    pub fn analyze(&self, command: &str) -> Vec<ShellRequest> {
        analyze(&self.expand(command), &self.ctx(""))
    }

    /// [`Fixture::expand`] over every string of a JSON value.
    pub fn expand_json(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.expand(s)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.expand_json(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.expand_json(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// The built-in default policy (no config files) over the fixture, in `mode`.
    pub fn policy(&self, mode: Option<Mode>) -> Policy {
        Policy::from_texts(&self.ws, &self.home, &[], mode)
            .unwrap_or_else(|e| panic!("the built-in default policy does not load: {e}"))
    }

    /// The gate's answer for calling `tool` with `input` (placeholders already
    /// expanded) in the workspace, through the public API: intent → expand →
    /// judge → strictest. `Err` when the intent refuses the input.
    pub fn check_call(
        &self,
        policy: &Policy,
        tool: &str,
        input: &Value,
    ) -> Result<CheckOutcome, IntentError> {
        let requests = builtin_intent(tool, input, &self.location)?;
        Ok(check(policy, requests, &self.location, &NoApprovals))
    }

    /// The gate's decision for running `command` (with placeholders) with the
    /// bash tool in the workspace root.
    pub fn bash_decision(&self, policy: &Policy, command: &str) -> Effect {
        let input = serde_json::json!({ "command": self.expand(command) });
        match self.check_call(policy, "bash", &input) {
            Ok(outcome) => outcome.decision,
            Err(e) => panic!("bash intent for {command:?} failed: {e}"),
        }
    }

    /// Prints the analyser's requests for `command` (for `CORPUS_DUMP=1`).
    pub fn dump(&self, label: &str, command: &str) {
        println!("{label} {command:?}");
        for r in &self.analyze(command) {
            println!("    {}", describe(r));
        }
    }
}

/// Whether `CORPUS_DUMP` is set: the corpus tests print every command's requests.
pub fn dumping() -> bool {
    std::env::var_os("CORPUS_DUMP").is_some()
}

/// A risk named in a corpus file.
pub fn parse_risk(s: &str) -> Risk {
    serde_json::from_value(Value::String(s.to_string()))
        .unwrap_or_else(|e| panic!("bad risk {s:?}: {e}"))
}

/// A decision named in a corpus file.
pub fn parse_effect(s: &str) -> Effect {
    serde_json::from_value(Value::String(s.to_string()))
        .unwrap_or_else(|e| panic!("bad decision {s:?}: {e}"))
}

/// A proptest runner with `cases` cases; `PROP_CASES=N` runs N instead (for
/// longer hunts).
pub fn runner(cases: u32) -> proptest::test_runner::TestRunner {
    let cases = std::env::var("PROP_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })
}

/// `s` in single quotes, for the shell.
pub fn single_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `s` in double quotes, for the shell.
pub fn double_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A command that is one simple command (so a prefix wrapper wraps all of it).
pub fn is_simple(c: &str) -> bool {
    !c.contains([';', '&', '|', '(', ')', '{', '}', '`', '<', '>', '!', '\n'])
        && !c.contains("$(")
        && !c.starts_with("if ")
        && !c.starts_with("for ")
        && !c.starts_with("while ")
        && !c.starts_with("until ")
        && !c.starts_with("case ")
        && !c.starts_with("select ")
        && !c.starts_with("function ")
        && !c.starts_with("coproc ")
        && !c.starts_with("[[")
        && !c.contains('=')
}

/// A repository that tracks secrets, two commits deep (best effort, as for
/// the workspace's: without git, the rows about it fail loudly).
fn leaky_repo(dir: &Path, home: &Path) {
    write(&dir.join("src/main.rs"), "fn main() {}\n");
    write(&dir.join(".env"), "TOKEN=BEGIN\n");
    write(&dir.join("id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    write(
        &dir.join(".npmrc"),
        "//registry.npmjs.org/:_authToken=npm_SECRET\n",
    );
    fs::hard_link(home.join(".ssh/id_ed25519"), dir.join("notes.txt")).unwrap();
    let git = |args: &[&str]| git_in(dir, args);
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "src"]);
    git(&["commit", "-q", "-m", "first"]);
    git(&["add", "-f", ".env", "id_rsa", ".npmrc", "notes.txt"]);
    git(&["commit", "-q", "-m", "secrets"]);
}

/// Runs git in `dir` with a fixed identity and no hooks, signing or user
/// config. Best effort: the analysis never runs git, it reads what git wrote.
fn git_in(dir: &Path, args: &[&str]) {
    let _ = toolgate_policy::test_util::git_command(dir, args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

fn init_git(ws: &Path) {
    let ran = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(ws)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ran {
        // No git binary: the layout is enough for path classification.
        write(&ws.join(".git/HEAD"), "ref: refs/heads/main\n");
        fs::create_dir_all(ws.join(".git/objects")).unwrap();
        return;
    }
    // Two commits of the sources (never the secrets), so `HEAD~1` means
    // something to the benign corpus. Best effort: the analysis does not run git.
    let git = |args: &[&str]| git_in(ws, args);
    git(&["add", "src", "README.md", "Cargo.toml", "data.txt", "a.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    git(&[
        "add",
        "tests",
        "docs",
        "b.txt",
        ".gitignore",
        "package.json",
    ]);
    git(&["commit", "-q", "-m", "second"]);
}

/// The default policy's effect for one request: read → allow; write, execute,
/// network, destructive → ask; credential → deny; opaque → at least ask.
pub fn default_effect(r: &ShellRequest) -> Effect {
    let base = match r.request.risk {
        Risk::Read => Effect::Allow,
        Risk::Write | Risk::Execute | Risk::Network | Risk::Destructive => Effect::Ask,
        Risk::Credential => Effect::Deny,
    };
    if r.opaque {
        base.max(Effect::Ask)
    } else {
        base
    }
}

/// The strictest default effect over a command's requests.
pub fn default_decision(requests: &[ShellRequest]) -> Effect {
    Effect::strictest(requests.iter().map(default_effect))
}

/// The highest risk over a command's requests.
pub fn max_risk(requests: &[ShellRequest]) -> Risk {
    requests
        .iter()
        .map(|r| r.request.risk)
        .max()
        .unwrap_or(Risk::Read)
}

/// Asserts that `command` is at least asked by default; its requests.
pub fn assert_asked(fx: &Fixture, command: &str) -> Vec<ShellRequest> {
    let parts = fx.analyze(command);
    assert!(
        default_decision(&parts) >= Effect::Ask,
        "{command:?} allowed:\n  {}",
        summary(&parts)
    );
    parts
}

/// Asserts that `command` is allowed by default.
pub fn assert_allowed(fx: &Fixture, command: &str) {
    let parts = fx.analyze(command);
    assert_eq!(
        default_decision(&parts),
        Effect::Allow,
        "{command:?}:\n  {}",
        summary(&parts)
    );
}

/// Asserts that `command`'s requests read a credential and are denied by
/// default.
pub fn assert_denied_credential(command: &str, parts: &[ShellRequest]) {
    assert_eq!(
        max_risk(parts),
        Risk::Credential,
        "{command:?}:\n  {}",
        summary(parts)
    );
    assert_eq!(default_decision(parts), Effect::Deny, "{command:?}");
}

/// One line per request, for assertion messages.
pub fn summary(parts: &[ShellRequest]) -> String {
    parts
        .iter()
        .map(|p| {
            format!(
                "{} {:?} {:?}{} ({})",
                p.request.action,
                p.request.resource,
                p.request.risk,
                if p.opaque { " opaque" } else { "" },
                p.reason
            )
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

/// `test` of the file whose `module_path!()` is `module`, as the harness
/// names it (below the file's module in `tests/all.rs`): for a test that
/// runs itself again in a child process.
pub fn harness_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_, module)) => format!("{module}::{test}"),
        None => test.to_string(),
    }
}

/// One of the analyser's requests on one line: action, resource, risk, the
/// pattern "always" would save, whether it is opaque, and why.
pub fn describe(r: &ShellRequest) -> String {
    format!(
        "{} {:?} {} save={:?} opaque={} — {}",
        r.request.action,
        r.request.resource,
        r.request.risk,
        r.request.save_pattern,
        r.opaque,
        r.reason
    )
}
