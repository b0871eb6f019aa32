//! Where toolgate keeps its data: the builder's directory (the CLI's
//! `--data-dir` or `TOOLGATE_DATA_DIR`), else `$XDG_DATA_HOME/toolgate`, else
//! `~/.local/share/toolgate`.

use std::path::{Path, PathBuf};

use crate::error::BuildError;
use toolgate_store::Durability;

/// The data directory and the files in it.
#[derive(Clone, Debug)]
pub struct DataDir {
    root: PathBuf,
    /// What the checkpoint store syncs ([`DataDir::with_durability`]).
    durability: Durability,
}

impl DataDir {
    /// Picks the directory (`explicit`, else the default above) and creates
    /// it with mode 0700 when it does not exist.
    pub fn locate(explicit: Option<&Path>) -> Result<DataDir, BuildError> {
        let root = match explicit {
            Some(p) => p.to_path_buf(),
            None => default_root()?,
        };
        if root.as_os_str().is_empty() {
            return Err(BuildError::EmptyDataDir);
        }
        create_private_dir(&root).map_err(|source| BuildError::CreateDataDir {
            path: root.clone(),
            source,
        })?;
        Ok(DataDir {
            root,
            durability: Durability::default(),
        })
    }

    /// The same directory, its checkpoint store synced as `durability`
    /// asks (the CLI's `--durability`, as for the audit log): under
    /// [`Durability::Full`] a change set that lands is on the disk before
    /// its first path changes, so a power loss rolls it back or leaves it
    /// whole; under [`Durability::Normal`] (the default) that holds for the
    /// process being killed, not for a power loss, and no change set pays a
    /// sync.
    pub fn with_durability(mut self, durability: Durability) -> DataDir {
        self.durability = durability;
        self
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The audit log.
    pub fn audit_db(&self) -> PathBuf {
        self.root.join("audit.db")
    }

    /// Saved approvals and other state.
    pub fn state_db(&self) -> PathBuf {
        self.root.join("state.db")
    }

    /// What `check` remembers of the sandbox's detection.
    pub fn sandbox_cache(&self) -> PathBuf {
        self.root.join("sandbox-support.json")
    }

    /// The checkpoint store (change sets kept for `toolgate undo`), opened
    /// once per process: opening rolls back change sets a crash cut off.
    pub fn checkpoints(
        &self,
    ) -> Result<
        std::sync::Arc<toolgate_checkpoint::Checkpoints>,
        toolgate_checkpoint::CheckpointError,
    > {
        use std::collections::HashMap;
        use std::sync::{Arc, Mutex};
        static OPEN: Mutex<Option<HashMap<PathBuf, Arc<toolgate_checkpoint::Checkpoints>>>> =
            Mutex::new(None);
        let dir = self.root.join("checkpoints");
        let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
        let map = open.get_or_insert_with(HashMap::new);
        if let Some(store) = map.get(&dir) {
            return Ok(Arc::clone(store));
        }
        let (store, recovered) =
            toolgate_checkpoint::Checkpoints::open_with(&dir, self.durability == Durability::Full)?;
        // Retention like spilled output's: finished sets older than a week
        // go, then the oldest over the size cap. At most once an hour (a
        // stamp file), so short processes such as hooks do not pay for it.
        let stamp = dir.join(".swept");
        let due = std::fs::metadata(&stamp)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_none_or(|age| age > std::time::Duration::from_secs(3600));
        if due {
            if let Err(e) =
                store.sweep(toolgate_checkpoint::KEEP_FOR, toolgate_checkpoint::SIZE_CAP)
            {
                tracing::warn!("sweeping old checkpoints failed: {e}");
            }
            let _ = std::fs::write(&stamp, b"");
        }
        for r in recovered {
            match r.error {
                None => eprintln!(
                    "toolgate: change set {} was cut off by a crash and rolled back ({} paths)",
                    r.id,
                    r.paths.len()
                ),
                Some(e) => eprintln!(
                    "toolgate: change set {} was cut off by a crash; rolling it back failed: {e}",
                    r.id
                ),
            }
        }
        let store = Arc::new(store);
        map.insert(dir, Arc::clone(&store));
        Ok(store)
    }

    /// The trust records of project configs.
    pub fn trust_file(&self) -> PathBuf {
        self.root.join(toolgate_policy::trust::TRUST_FILE_NAME)
    }
}

fn default_root() -> Result<PathBuf, BuildError> {
    if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(xdg).join("toolgate"));
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".local/share/toolgate")),
        None => Err(BuildError::NoDataDir),
    }
}

fn create_private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if path.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
}
