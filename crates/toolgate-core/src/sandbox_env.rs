//! The environment a confined command gets: an allowlist, so that nothing of
//! toolgate's own environment (tokens, credentials, whatever a variable
//! holds) reaches it unless a person names it.
//!
//! ```
//! use toolgate_core::sandbox_env::sandbox_env_allows;
//! assert!(sandbox_env_allows("PATH", &[]));
//! assert!(sandbox_env_allows("LC_ALL", &[]));
//! assert!(!sandbox_env_allows("AWS_SECRET_ACCESS_KEY", &[]));
//! assert!(sandbox_env_allows("CARGO_TARGET_DIR", &["CARGO_TARGET_DIR".to_string()]));
//! ```

/// The variables a confined command inherits, besides `LC_*` and what
/// `[sandbox] env` names.
pub const SANDBOX_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TZ", "TMPDIR", "PWD",
];

/// Whether a confined command inherits the variable `name`: one of
/// [`SANDBOX_ENV`], a locale variable (`LC_*`), or one of `extra` (the
/// person's `[sandbox] env`).
pub fn sandbox_env_allows(name: &str, extra: &[String]) -> bool {
    SANDBOX_ENV.contains(&name) || name.starts_with("LC_") || extra.iter().any(|e| e == name)
}
