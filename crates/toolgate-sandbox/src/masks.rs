//! The paths a confined command may not change or read, as this crate's
//! defaults.
//!
//! These lists are deliberately small and kept in this one module so that the
//! caller can pass its own (a shared protected-path table and credential
//! classifier) through [`SandboxSpec`](crate::SandboxSpec) instead: the
//! mechanism in the rest of the crate only ever sees absolute paths.

/// Paths inside each location root that stay read-only in the sandbox. A
/// trailing `/` names a directory. Ordinary git work (`.git/objects`,
/// `.git/index`, `.git/refs`, `.git/HEAD`, `.git/logs`) stays writable.
pub const PROTECTED_IN_LOCATION: &[&str] = &[
    ".git/config",
    ".git/hooks/",
    ".toolgate/",
    ".envrc",
    ".direnv/",
    ".claude/",
    ".codex/",
    ".gemini/",
    ".cursor/",
    ".mcp.json",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".github/workflows/",
    ".gitlab-ci.yml",
];

/// Files and directories under the home directory that run code or change
/// the gate when written (read-only with the rest of the file system): a
/// hard link to one of their files inside the location is made read-only
/// too. A trailing `/` names a directory.
pub const PROTECTED_IN_HOME: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".gitconfig",
    ".config/git/",
    ".config/fish/",
    ".ssh/config",
    ".config/systemd/user/",
    ".config/autostart/",
    ".config/toolgate/",
    ".local/share/toolgate/",
];

/// Credential files and directories under the home directory that are masked
/// (replaced by an empty file or directory) in the sandbox. A trailing `/`
/// names a directory.
pub const CREDENTIALS_IN_HOME: &[&str] = &[
    ".ssh/",
    ".aws/",
    ".gnupg/",
    ".config/gh/",
    ".docker/config.json",
    ".kube/",
    ".netrc",
    ".git-credentials",
    ".npmrc",
];

/// `.env` files that are templates, not secrets: left readable.
const ENV_TEMPLATES: &[&str] = &[".env.example", ".env.sample", ".env.template"];

/// Whether a file name inside the location is an environment file holding
/// secrets (`.env`, `.env.local`, `.env.production`, …), so masked.
/// `.envrc` is a direnv script, not a secrets file: it is protected
/// (read-only), not masked.
pub fn is_env_secret_file(name: &str) -> bool {
    let is_env = name == ".env"
        || name.starts_with(".env.")
        || name.starts_with(".env-")
        || name.starts_with(".env_");
    is_env && !ENV_TEMPLATES.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_files() {
        for secret in [".env", ".env.local", ".env.production", ".env-dev"] {
            assert!(is_env_secret_file(secret), "{secret}");
        }
        for not in [
            ".envrc",
            ".env.example",
            ".env.sample",
            ".env.template",
            "env",
            "a.env",
        ] {
            assert!(!is_env_secret_file(not), "{not}");
        }
    }
}
