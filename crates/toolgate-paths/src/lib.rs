//! The path facts: the one table of places where a write changes the gate or
//! makes later commands run code ([`protected`]), and of places that hold
//! secrets ([`credential`]), with the matcher that reads them.
//!
//! The policy's judgements, the file tools' walkers and the sandbox's mounts
//! all read these tables, so that no second list of the same fact can drift.
//! The crate decides nothing and does no I/O beyond looking at paths
//! (`lstat`, `readlink`, reading a directory to find hard links and aliases)
//! and reading git's ignore files ([`shape`]).
//!
//! ```
//! use std::path::Path;
//! use toolgate_paths::{credential, protected::ProtectedPaths};
//! let home = Path::new("/home/u");
//! assert!(credential::is_credential(Path::new("/home/u/.ssh/id_ed25519"), home).is_some());
//! let facts = ProtectedPaths::new(home, []);
//! assert!(facts.check(Path::new("/ws/.git/hooks/pre-commit")).is_some());
//! ```

pub mod address;
pub mod credential;
pub mod git_config_paths;
pub mod git_dir;
pub mod home;
mod name_sieve;
pub mod named_by;
pub mod path_text;
pub mod protected;
pub mod secret_values;
pub mod shape;
pub mod small_file;
