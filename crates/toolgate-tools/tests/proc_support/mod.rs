//! Shared helpers for the process-tool tests: a workspace, a data dir, a
//! context, and process inspection through /proc.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use toolgate_core::{CallIdentity, Location, ToolContext};
use toolgate_tools::process_tools::ProcessToolsConfig;
use toolgate_tools::session_tools::SessionToolsConfig;
use toolgate_tools::web_tools::WebToolsConfig;

/// A workspace root and a data dir, both temporary.
pub struct Env {
    pub root: tempfile::TempDir,
    pub data: tempfile::TempDir,
    /// Settings of bash.
    pub config: ProcessToolsConfig,
    /// Settings of webfetch and websearch.
    pub web: WebToolsConfig,
    /// Settings of todowrite, question and skill.
    pub session: SessionToolsConfig,
}

impl Env {
    pub fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let config = ProcessToolsConfig {
            data_dir: data.path().to_path_buf(),
            ..ProcessToolsConfig::default()
        };
        let session = SessionToolsConfig {
            data_dir: data.path().to_path_buf(),
            user_skills_dir: None,
            ..SessionToolsConfig::default()
        };
        Env {
            root,
            data,
            config,
            web: WebToolsConfig::default(),
            session,
        }
    }

    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path()).unwrap()
    }

    pub fn location(&self) -> Arc<Location> {
        Arc::new(Location::new(self.root.path()).unwrap())
    }

    pub fn ctx(&self) -> ToolContext {
        self.ctx_with(CancellationToken::new(), "session-1")
    }

    pub fn ctx_with(&self, cancel: CancellationToken, session: &str) -> ToolContext {
        ToolContext::new(
            CallIdentity {
                session_id: session.into(),
                call_id: "call-1".into(),
                ..CallIdentity::default()
            },
            self.location(),
            cancel,
        )
    }
}

/// `(state, pgrp)` of a live process, or `None` when it no longer exists.
pub fn proc_state(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let _ppid = f.next()?;
    Some((state, f.next()?.parse().ok()?))
}

/// Whether `pid` is running (exists and is not a zombie).
pub fn running(pid: i32) -> bool {
    matches!(proc_state(pid), Some((s, _)) if s != 'Z' && s != 'X')
}

/// Live (non-zombie) members of process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| matches!(proc_state(*pid), Some((s, g)) if g == pgid && s != 'Z' && s != 'X'))
        .collect()
}

/// Reads a pid the command wrote to `path`, waiting a little for it.
pub fn read_pid(path: &Path) -> i32 {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
        }
        assert!(Instant::now() < until, "no pid in {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The kind of the first `std::io::Error` in `err`'s chain of causes.
pub fn io_cause_kind(err: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut cause = err.source();
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        cause = e.source();
    }
    None
}
