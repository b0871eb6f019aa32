//! The filesystem the shell corpus runs against, built in a temporary directory:
//! a workspace that is a git repo with `.env` files and symlinks in and out, a
//! fake home with `.ssh`, `.aws` and other secrets, and a directory outside.

#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use toolgate_core::{Effect, Location, Risk};
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
        // Outside: plain files.
        write(&out.join("file.txt"), "outside\n");
        write(&out.join("sub/deep.txt"), "deep\n");
        // Symlinks: inside → inside, inside → outside, inside → secrets.
        symlink(ws.join("src"), ws.join("link_in")).unwrap();
        symlink(&out, ws.join("link_out")).unwrap();
        symlink(out.join("file.txt"), ws.join("link_file_out")).unwrap();
        symlink(home.join(".ssh/id_ed25519"), ws.join("link_key")).unwrap();
        symlink(home.join(".ssh"), ws.join("link_ssh")).unwrap();
        symlink(ws.join(".env"), ws.join("settings.cfg")).unwrap();
        symlink("/etc", ws.join("link_etc")).unwrap();
        symlink(ws.join("data.txt"), ws.join("data_link.txt")).unwrap();
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
        }
    }

    pub fn analyze(&self, command: &str) -> Vec<ShellRequest> {
        analyze(&self.expand(command), &self.ctx(""))
    }
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
    }
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
