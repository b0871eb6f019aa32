//! A user's world in a temporary directory, for tests that run the real
//! `toolgate` binary: a workspace `ws` and a home `home` (both created), and
//! a data directory `data` (left for toolgate to create).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The temporary directory (removed when dropped) and its places, all
/// canonical so that paths the binary prints compare equal.
pub struct CliEnv {
    _dir: tempfile::TempDir,
    /// The canonical temporary directory that holds everything.
    pub base: PathBuf,
    /// The workspace, and the directory the binary runs in.
    pub ws: PathBuf,
    /// The data directory (`TOOLGATE_DATA_DIR`).
    pub data: PathBuf,
    /// The home directory (`HOME`).
    pub home: PathBuf,
}

impl CliEnv {
    /// A world in the system's temporary directory.
    pub fn new() -> CliEnv {
        CliEnv::in_dir(&std::env::temp_dir())
    }

    /// A world in a new directory under `parent`.
    pub fn in_dir(parent: &Path) -> CliEnv {
        let dir = tempfile::tempdir_in(parent).unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (ws, home) = (base.join("ws"), base.join("home"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        CliEnv {
            _dir: dir,
            data: base.join("data"),
            base,
            ws,
            home,
        }
    }

    /// Writes `text` to `path`, creating the directories it needs.
    pub fn write(&self, path: impl AsRef<Path>, text: &str) {
        let path = path.as_ref();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, text).unwrap();
    }

    /// `toolgate ARGS` in the workspace, isolated (see [`isolate`]), with
    /// nothing on stdin.
    pub fn command<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        c.args(args).current_dir(&self.ws).stdin(Stdio::null());
        isolate(&mut c, &self.data, &self.home);
        c
    }
}

/// Points `cmd` at the data directory `data` and the home `home`, and away
/// from the user's own data, configuration, managed layer and log setting.
pub fn isolate<'a>(cmd: &'a mut Command, data: &Path, home: &Path) -> &'a mut Command {
    cmd.env("TOOLGATE_DATA_DIR", data)
        .env("HOME", home)
        .env("TOOLGATE_MANAGED_CONFIG", home.join("no-managed.toml"))
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TOOLGATE_LOG")
}
