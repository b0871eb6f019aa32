//! An output store that spills into a directory, as the store crate does.

use std::path::PathBuf;

use crate::{OutputStore, SpillError};

/// Spills the full text of call `ID` to `DIR/tool-output/ID.txt`, creating
/// the directory; a failure to write is the spill's error.
pub struct DirSpill(pub PathBuf);

impl OutputStore for DirSpill {
    fn spill(&self, call_id: &str, text: &str) -> Result<PathBuf, SpillError> {
        let dir = self.0.join("tool-output");
        let path = dir.join(format!("{call_id}.txt"));
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|source| SpillError {
                path: path.clone(),
                source,
            })?;
        Ok(path)
    }
}
