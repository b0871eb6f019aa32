//! Fixtures for the tests that run real commands in the sandbox.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use toolgate_sandbox::test_util::scratch_parent;
use toolgate_sandbox::{SandboxSpec, Support};

/// The machine's support; the sandbox tests need it (scripts/setup-sandbox.sh
/// installs bubblewrap), so its absence fails them, naming why.
pub fn support() -> Support {
    let s = toolgate_sandbox::detect();
    assert!(
        s.available,
        "the sandbox is not available here (run scripts/setup-sandbox.sh): {:?}",
        s.reasons
    );
    s
}

/// A location, a fake home with credentials, and a directory outside both,
/// all outside /tmp (the sandbox's /tmp is private) so that a write outside
/// the location meets the read-only host filesystem.
pub struct Fixture {
    _base: tempfile::TempDir,
    pub ws: PathBuf,
    pub home: PathBuf,
    pub outside: PathBuf,
}

impl Fixture {
    pub fn new() -> Self {
        let parent = scratch_parent(Path::new(env!("CARGO_TARGET_TMPDIR"))).unwrap();
        let base = tempfile::tempdir_in(parent).unwrap();
        let root = base.path().canonicalize().unwrap();
        let ws = root.join("ws");
        let home = root.join("home");
        let outside = root.join("outside");
        for d in [&ws, &home, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY MATERIAL\n").unwrap();
        std::fs::write(home.join(".bashrc"), "# rc\n").unwrap();
        std::fs::write(
            home.join(".netrc"),
            "machine x login y password NETRC-SECRET\n",
        )
        .unwrap();
        Fixture {
            _base: base,
            ws,
            home,
            outside,
        }
    }

    pub fn spec(&self) -> SandboxSpec {
        let mut spec = SandboxSpec::for_location(vec![self.ws.clone()], Some(&self.home));
        spec.helper = Some(PathBuf::from(env!("CARGO_BIN_EXE_toolgate-sandbox")));
        spec
    }

    /// Runs `bash -c script` confined by `spec`, with HOME the fake home.
    pub fn run_spec(&self, spec: &SandboxSpec, script: &str) -> Output {
        let mut confined = spec.command(&support(), "bash", ["-c", script]).unwrap();
        let out = confined
            .command
            .env("HOME", &self.home)
            .env("WS", &self.ws)
            .env("OUT", &self.outside)
            .output()
            .unwrap();
        eprintln!(
            "--- {script}\nstatus {}\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    pub fn run(&self, script: &str) -> Output {
        self.run_spec(&self.spec(), script)
    }

    /// Runs `script` with its writes staged; nothing lands. Returns the
    /// output and what the command changed, as the gate would see it.
    pub fn run_staged(&self, script: &str) -> (Output, Vec<toolgate_sandbox::Change>) {
        let (out, staging) = self.run_staged_keeping(script);
        let changes = staging.changes().unwrap();
        (out, changes)
    }

    /// [`Fixture::run_staged`], keeping the staging to land from.
    pub fn run_staged_keeping(&self, script: &str) -> (Output, toolgate_sandbox::Staging) {
        let mut spec = self.spec();
        spec.stage = Some(self.ws.parent().unwrap().join("stage"));
        let mut confined = spec.command(&support(), "bash", ["-c", script]).unwrap();
        let out = confined
            .command
            .env("HOME", &self.home)
            .env("WS", &self.ws)
            .env("OUT", &self.outside)
            .output()
            .unwrap();
        eprintln!(
            "--- (staged) {script}\nstatus {}\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out, confined.staging.take().unwrap())
    }

    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// A landing journal for tests of the sandbox alone: it records nothing
/// (the checkpoint store has its own tests).
pub struct NoJournal;

impl toolgate_sandbox::LandingJournal for NoJournal {
    fn save(&mut self, _: &Path) -> Result<(), String> {
        Ok(())
    }
    fn applying(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn landed(self: Box<Self>) -> Result<String, String> {
        Ok("test".into())
    }
    fn roll_back(self: Box<Self>) -> Result<(), String> {
        Ok(())
    }
}

/// The changed paths, relative to `root`, as strings.
pub fn changed(changes: &[toolgate_sandbox::Change], root: &Path) -> Vec<String> {
    changes
        .iter()
        .map(|c| {
            c.path
                .strip_prefix(root)
                .unwrap_or(&c.path)
                .display()
                .to_string()
        })
        .collect()
}

/// Lands every change of `staging`, as a gate that accepts them all would.
pub fn land_all(staging: &toolgate_sandbox::Staging) {
    let changes = staging.changes().unwrap();
    let all = changes.iter().map(|c| c.path.clone()).collect();
    staging.land(&changes, &all, Box::new(NoJournal)).unwrap();
}
