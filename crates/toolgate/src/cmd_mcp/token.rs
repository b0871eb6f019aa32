//! The bearer token `serve` reads from config (`[serve] token_file` or
//! `token_env`, never from the project layer), checked before it is used.

use std::os::unix::fs::PermissionsExt;

use anyhow::{Context, Result, bail};
use toolgate_mcp::auth::validate_token;
use toolgate_policy::config::{ServeConfig, TokenSource};

/// Reads the configured token. A token file must be a regular file that only
/// its owner can read or write (like an SSH key); its first line is the token.
/// The token must pass the same checks as `--token`.
pub fn read_configured(config: &ServeConfig) -> Result<String> {
    let origin = &config.origin;
    let token = match &config.token {
        TokenSource::File(path) => {
            let shown = path.display();
            let meta = std::fs::metadata(path).with_context(|| {
                format!("cannot read the serve token file {shown} (token_file at {origin})")
            })?;
            if !meta.is_file() {
                bail!(
                    "the serve token file {shown} (token_file at {origin}) is not a regular file"
                );
            }
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                bail!(
                    "the serve token file {shown} (token_file at {origin}) is open to other users \
                     (mode {mode:o}); run `chmod 600 {shown}`"
                );
            }
            let text = std::fs::read_to_string(path).with_context(|| {
                format!("cannot read the serve token file {shown} (token_file at {origin})")
            })?;
            let token = text.lines().next().unwrap_or("").trim().to_string();
            if token.is_empty() {
                bail!("the serve token file {shown} (token_file at {origin}) is empty");
            }
            token
        }
        TokenSource::Env(name) => match std::env::var(name) {
            Ok(v) if !v.trim().is_empty() => v.trim().to_string(),
            Ok(_) => bail!("{name} (token_env at {origin}) is empty"),
            Err(std::env::VarError::NotPresent) => {
                bail!("{name} (token_env at {origin}) is not set in serve's environment")
            }
            Err(std::env::VarError::NotUnicode(_)) => {
                bail!("{name} (token_env at {origin}) is not valid UTF-8")
            }
        },
    };
    validate_token(&token).map_err(|e| {
        let from = format!("{e} (from {})", describe(config));
        anyhow::Error::new(e).context(from)
    })?;
    Ok(token)
}

/// Where the token came from, for the start-up line (never the token itself).
pub fn describe(config: &ServeConfig) -> String {
    match &config.token {
        TokenSource::File(path) => {
            format!("token_file {} (set at {})", path.display(), config.origin)
        }
        TokenSource::Env(name) => format!("token_env {name} (set at {})", config.origin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn file_config(path: &Path) -> ServeConfig {
        ServeConfig {
            token: TokenSource::File(path.to_path_buf()),
            origin: "user.toml:3".into(),
        }
    }

    fn write(path: &Path, text: &str, mode: u32) {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_private_token_file_gives_its_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        write(&path, "0123456789abcdef0123\nignored\n", 0o600);
        assert_eq!(
            read_configured(&file_config(&path)).unwrap(),
            "0123456789abcdef0123"
        );
    }

    #[test]
    fn bad_token_files_are_refused_with_the_reason_and_where_it_was_set() {
        let dir = tempfile::tempdir().unwrap();
        let err = |path: &Path| read_configured(&file_config(path)).unwrap_err().to_string();
        let shared = dir.path().join("shared");
        write(&shared, "0123456789abcdef0123\n", 0o644);
        let e = err(&shared);
        assert!(
            e.contains("open to other users") && e.contains("chmod 600"),
            "{e}"
        );
        assert!(e.contains("user.toml:3"), "{e}");
        let short = dir.path().join("short");
        write(&short, "abc\n", 0o600);
        assert!(
            err(&short).contains("at least 16 characters"),
            "{}",
            err(&short)
        );
        let spaced = dir.path().join("spaced");
        write(&spaced, "0123456789 abcdef0123\n", 0o600);
        assert!(err(&spaced).contains("printable ASCII"), "{}", err(&spaced));
        let empty = dir.path().join("empty");
        write(&empty, "\n", 0o600);
        assert!(err(&empty).contains("is empty"), "{}", err(&empty));
        assert!(err(&dir.path().join("missing")).contains("cannot read"));
        assert!(err(dir.path()).contains("not a regular file"));
    }

    #[test]
    fn an_env_token_must_be_set_and_valid() {
        let config = |name: &str| ServeConfig {
            token: TokenSource::Env(name.into()),
            origin: "user.toml:4".into(),
        };
        let e = read_configured(&config("TOOLGATE_TEST_SURELY_UNSET_VAR"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not set") && e.contains("user.toml:4"), "{e}");
        assert_eq!(
            describe(&config("MY_TOKEN")),
            "token_env MY_TOKEN (set at user.toml:4)"
        );
    }
}
