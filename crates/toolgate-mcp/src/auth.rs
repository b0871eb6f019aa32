//! The bearer token of the HTTP transport: generated at start unless one is
//! configured, and written with mode 0600 into the data directory.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::ServeError;

/// The file in the data directory that holds the current `serve` token.
pub const TOKEN_FILE: &str = "serve-token";

/// A fresh random token: 32 bytes from the OS, hex-encoded.
pub fn generate_token() -> Result<String, ServeError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        ServeError::io(
            "generating a bearer token",
            std::io::Error::other(e.to_string()),
        )
    })?;
    Ok(hex::encode(bytes))
}

/// Writes `token` to `data_dir/serve-token`, readable by the owner only, and
/// returns the path.
pub fn write_token_file(data_dir: &Path, token: &str) -> Result<PathBuf, ServeError> {
    let path = data_dir.join(TOKEN_FILE);
    let context = || format!("writing the token to {}", path.display());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| ServeError::io(context(), e))?;
    // `mode` applies only when the file is created; tighten an existing one.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|e| ServeError::io(context(), e))?;
    file.write_all(token.as_bytes())
        .and_then(|()| file.write_all(b"\n"))
        .and_then(|()| file.sync_all())
        .map_err(|e| ServeError::io(context(), e))?;
    Ok(path)
}

/// Checks a configured token: long enough to resist guessing, and printable.
pub fn validate_token(token: &str) -> Result<(), ServeError> {
    if token.len() < 16 {
        return Err(ServeError::Config(format!(
            "the bearer token must be at least 16 characters (got {})",
            token.len()
        )));
    }
    if !token.chars().all(|c| c.is_ascii_graphic()) {
        return Err(ServeError::Config(
            "the bearer token must be printable ASCII without spaces".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_hex() {
        let a = generate_token().unwrap();
        let b = generate_token().unwrap();
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(validate_token(&a).is_ok());
    }

    #[test]
    fn token_file_is_private_even_if_it_existed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TOKEN_FILE);
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let written = write_token_file(dir.path(), "t0ken-t0ken-t0ken").unwrap();
        assert_eq!(written, path);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "t0ken-t0ken-t0ken\n"
        );
    }

    #[test]
    fn token_file_in_a_regular_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, "").unwrap();
        let err = write_token_file(&file, "t0ken-t0ken-t0ken").unwrap_err();
        assert!(err.to_string().contains("writing the token to"), "{err}");
    }

    #[test]
    fn weak_tokens_are_refused() {
        assert!(validate_token("short").is_err());
        assert!(validate_token("has a space in it....").is_err());
    }
}
