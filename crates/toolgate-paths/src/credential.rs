//! The one answer to "is this a secret": which paths hold credentials.
//!
//! This module states a fact about a path; it decides nothing. The policy raises
//! a request on such a path to `credential`, and the walkers of `list`, `glob`
//! and `grep` leave such files out, both from the same tables below.
//!
//! A path is a credential when
//! - a component is a secret directory (`.ssh`, `.aws`, `.gnupg`,
//!   `.password-store`, `.azure`), or an entry of a secret pair
//!   (`.config/gh`, `.config/gcloud`, `.docker/config.json`, `.kube/config`,
//!   `keyrings/*`, `.cargo/credentials.toml`, `.codex/auth.json`…);
//!
//! Each entry of the tables says where its format is documented.
//! - its file name is a secret by itself (`.env`, `.env.*`, `.netrc`,
//!   `.npmrc`, `.git-credentials`, `id_rsa`, `terraform.tfstate`,
//!   `.dev.vars`…), ends as a private key or key store does (`*.pem`,
//!   `*.key`, `*.p12`, `*.pfx`…), or is shaped as a service-account key
//!   (`service-account*.json`, `*-credentials.json`), except the `.env`
//!   templates whose last suffix is `example`, `sample`, `template`, `dist`
//!   or `defaults`;
//! - it is a system secret (`/etc/shadow`, `/etc/sudoers`, `/proc/*/environ`,
//!   SSH host private keys);
//! - or it is a regular file with more than one link whose device and inode
//!   are those of a known credential file ([`hard_link_of`]).
//!
//! Names are compared without regard to ASCII case (`.ENV`, `ID_RSA`): on a
//! case-insensitive file system they are the same file.
//!
//! ```
//! use std::path::Path;
//! use toolgate_paths::credential::{is_credential, is_credential_name};
//! let home = Path::new("/home/u");
//! assert!(is_credential(Path::new("/home/u/.ssh/id_ed25519"), home).is_some());
//! assert!(is_credential(Path::new("/ws/.ENV"), home).is_some());
//! assert!(is_credential(Path::new("/ws/.env.example"), home).is_none());
//! assert!(is_credential_name(b".npmrc"));
//! assert!(!is_credential_name(b"notes.txt"));
//! ```

use std::collections::HashMap;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Directory names whose whole content is secret, wherever they appear:
/// `(name, where the format is documented)`.
pub const SECRET_DIRS: &[(&str, &str)] = &[
    (".ssh", "ssh(1) FILES"),
    (
        ".aws",
        "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html",
    ),
    (".gnupg", "gpg(1) FILES"),
    (".password-store", "pass(1)"),
    (
        ".azure",
        "https://learn.microsoft.com/cli/azure/azure-cli-configuration",
    ),
];

/// `(directory, entry, where documented)`: the entry inside that directory
/// is secret (`entry = "*"` means anything below it).
pub const SECRET_PAIRS: &[(&str, &str, &str)] = &[
    (
        ".config",
        "gh",
        "https://cli.github.com/manual/gh_auth_login",
    ),
    (
        ".config",
        "gcloud",
        "https://cloud.google.com/sdk/docs/configurations",
    ),
    (
        ".config",
        "github-copilot",
        "GitHub Copilot editor plugins keep their OAuth token in hosts.json / apps.json there",
    ),
    (
        ".docker",
        "config.json",
        "https://docs.docker.com/reference/cli/docker/login/#credential-stores",
    ),
    (
        ".kube",
        "config",
        "https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/",
    ),
    (
        "keyrings",
        "*",
        "GNOME Keyring: ~/.local/share/keyrings/*.keyring",
    ),
    (
        ".claude",
        ".credentials.json",
        "https://docs.anthropic.com/en/docs/claude-code/iam#credential-management",
    ),
    (
        ".codex",
        "auth.json",
        "https://github.com/openai/codex/blob/main/docs/authentication.md",
    ),
    (
        ".cargo",
        "credentials",
        "https://doc.rust-lang.org/cargo/reference/config.html#credentials",
    ),
    (
        ".cargo",
        "credentials.toml",
        "https://doc.rust-lang.org/cargo/reference/config.html#credentials",
    ),
    (
        ".gem",
        "credentials",
        "https://guides.rubygems.org/command-reference/#gem-signin",
    ),
    (
        ".m2",
        "settings.xml",
        "https://maven.apache.org/settings.html#servers",
    ),
    (
        ".m2",
        "settings-security.xml",
        "https://maven.apache.org/guides/mini/guide-encryption.html",
    ),
    (
        ".gradle",
        "gradle.properties",
        "https://docs.gradle.org/current/userguide/build_environment.html#sec:gradle_configuration_properties",
    ),
    (
        ".terraform.d",
        "credentials.tfrc.json",
        "https://developer.hashicorp.com/terraform/cli/commands/login",
    ),
    (
        "huggingface",
        "token",
        "https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables#hfhome",
    ),
    (
        "huggingface",
        "stored_tokens",
        "https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables#hfstoredtokenspath",
    ),
    (
        ".streamlit",
        "secrets.toml",
        "https://docs.streamlit.io/develop/concepts/connections/secrets-management",
    ),
    (
        "etc",
        "npmrc",
        "npm's global config, $PREFIX/etc/npmrc: https://docs.npmjs.com/cli/configuring-npm/npmrc#files",
    ),
    (
        ".fly",
        "config.yml",
        "flyctl keeps its access token in ~/.fly/config.yml",
    ),
    (
        "glab-cli",
        "config.yml",
        "https://docs.gitlab.com/editor_extensions/gitlab_cli/",
    ),
    (
        "rclone",
        "rclone.conf",
        "https://rclone.org/docs/#config-config-file",
    ),
    (
        "composer",
        "auth.json",
        "https://getcomposer.org/doc/articles/authentication-for-private-packages.md",
    ),
    (
        ".composer",
        "auth.json",
        "https://getcomposer.org/doc/articles/authentication-for-private-packages.md",
    ),
    (
        "config",
        "secrets.yml",
        "Rails before 5.2: secret_key_base and API keys in config/secrets.yml",
    ),
];

/// File names that are secret wherever they are (besides `.env` and its
/// variants, see [`is_credential_name`]): `(name, where documented)`.
pub const SECRET_FILES: &[(&str, &str)] = &[
    (".env", "https://www.dotenv.org/docs/security/env"),
    (
        ".git-credentials",
        "https://git-scm.com/docs/git-credential-store#_storage_format",
    ),
    (".netrc", "netrc(5)"),
    ("_netrc", "netrc(5), its name on Windows"),
    (
        ".pgpass",
        "https://www.postgresql.org/docs/current/libpq-pgpass.html",
    ),
    (
        ".npmrc",
        "https://docs.npmjs.com/cli/configuring-npm/npmrc#auth-related-configuration",
    ),
    (
        ".pypirc",
        "https://packaging.python.org/specifications/pypirc/",
    ),
    (
        ".htpasswd",
        "https://httpd.apache.org/docs/current/programs/htpasswd.html",
    ),
    ("id_rsa", "ssh-keygen(1) FILES"),
    ("id_dsa", "ssh-keygen(1) FILES"),
    ("id_ecdsa", "ssh-keygen(1) FILES"),
    ("id_ecdsa_sk", "ssh-keygen(1) FILES"),
    ("id_ed25519", "ssh-keygen(1) FILES"),
    ("id_ed25519_sk", "ssh-keygen(1) FILES"),
    (
        "terraform.tfstate",
        "https://developer.hashicorp.com/terraform/language/state/sensitive-data",
    ),
    (
        "terraform.tfstate.backup",
        "https://developer.hashicorp.com/terraform/language/state/sensitive-data",
    ),
    (
        ".dev.vars",
        "https://developers.cloudflare.com/workers/configuration/secrets/#local-development-with-secrets",
    ),
    (
        "credentials.json",
        "https://developers.google.com/workspace/guides/create-credentials (the OAuth client file)",
    ),
    (
        "application_default_credentials.json",
        "https://cloud.google.com/docs/authentication/application-default-credentials",
    ),
    (
        ".vault-token",
        "https://developer.hashicorp.com/vault/docs/commands/token-helper",
    ),
    (
        ".databrickscfg",
        "https://docs.databricks.com/en/dev-tools/auth/config-profiles.html",
    ),
    (".boto", "https://cloud.google.com/storage/docs/boto-gsutil"),
    (
        ".authinfo",
        "https://www.gnu.org/software/emacs/manual/html_mono/auth.html (Emacs auth-source)",
    ),
    (
        "kubeconfig",
        "https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/",
    ),
    ("secring.gpg", "gpg(1) FILES: GnuPG 1's secret keyring"),
    (".s3cfg", "s3cmd(1)"),
    (
        ".secrets",
        "act's default secret file (KEY=value lines): https://nektosact.com/usage/index.html#secrets",
    ),
    (
        ".secrets.toml",
        "Dynaconf's default secrets file: https://www.dynaconf.com/secrets/",
    ),
    (
        "local.settings.json",
        "Azure Functions' local app settings and connection strings, kept out of source control: https://learn.microsoft.com/azure/azure-functions/functions-develop-local#local-settings-file",
    ),
    (
        "keystore.properties",
        "an Android app's signing key store passwords: https://developer.android.com/studio/publish/app-signing#secure-shared-keystore",
    ),
    (
        "serviceAccountKey.json",
        "a Firebase service account's private key, as the Admin SDK's guide names it: https://firebase.google.com/docs/admin/setup#initialize_the_sdk_in_non-google_environments",
    ),
    (
        ".sentryclirc",
        "sentry-cli's config with its auth token: https://docs.sentry.io/cli/configuration/#configuration-file",
    ),
    (
        ".my.cnf",
        "https://dev.mysql.com/doc/refman/8.4/en/option-files.html",
    ),
    (
        ".mylogin.cnf",
        "https://dev.mysql.com/doc/refman/8.4/en/mysql-config-editor.html",
    ),
];

/// File name endings that make a file secret wherever it is: private keys
/// and key stores. `(ending, where documented)`.
pub const SECRET_SUFFIXES: &[(&str, &str)] = &[
    (
        ".pem",
        "RFC 7468 (PEM private keys; certificates share the ending and are judged alike, except a file a confined command created with certificates only)",
    ),
    (
        ".key",
        "the usual name of a PEM private key (openssl-genpkey(1)); Rails' config/master.key",
    ),
    (".p12", "RFC 7292 (PKCS #12 key stores)"),
    (".pfx", "RFC 7292 (PKCS #12 key stores)"),
    (".jks", "keytool(1) (Java key stores)"),
    (".keystore", "keytool(1) (Java and Android key stores)"),
    (".ppk", "PuTTY private keys (puttygen(1))"),
    (
        ".p8",
        "RFC 5208 (PKCS #8 private keys), as Apple's AuthKey_*.p8",
    ),
    (".keytab", "ktutil(1) (Kerberos key tables)"),
    (".kdbx", "KeePass password databases"),
    (
        ".tfstate",
        "https://developer.hashicorp.com/terraform/language/state/sensitive-data",
    ),
    (
        "-credentials.json",
        "service-account key files as gcloud and many guides name them",
    ),
    (
        ".tfvars",
        "Terraform variable definitions, where secrets given to a configuration are written: https://developer.hashicorp.com/terraform/language/values/variables#variable-definitions-tfvars-files",
    ),
    (
        ".tfvars.json",
        "https://developer.hashicorp.com/terraform/language/values/variables#variable-definitions-tfvars-files",
    ),
    (
        ".kubeconfig",
        "a kubeconfig under another name (`admin.kubeconfig`, as kubeadm and many guides write it): https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/",
    ),
];

/// `(start, end, where documented)`: a file name that starts and ends so is
/// secret (`service-account-prod.json`, `.dev.vars.staging`).
pub const SECRET_NAME_SHAPES: &[(&str, &str, &str)] = &[
    (
        "service-account",
        ".json",
        "https://cloud.google.com/iam/docs/keys-create-delete",
    ),
    (
        "client_secret",
        ".json",
        "https://developers.google.com/identity/protocols/oauth2/native-app",
    ),
    (
        ".dev.vars.",
        "",
        "https://developers.cloudflare.com/workers/configuration/secrets/#local-development-with-secrets",
    ),
    (
        ".vault_pass",
        "",
        "an Ansible Vault password file (`.vault_pass`, `.vault_pass.txt`): https://docs.ansible.com/ansible/latest/vault_guide/vault_managing_passwords.html#storing-passwords-in-files",
    ),
    (
        "vault_pass",
        "",
        "an Ansible Vault password file (`vault_pass.txt`): https://docs.ansible.com/ansible/latest/vault_guide/vault_managing_passwords.html#storing-passwords-in-files",
    ),
    (
        "gha-creds-",
        ".json",
        "the credentials file google-github-actions/auth writes into the workspace: https://github.com/google-github-actions/auth#inputs (create_credentials_file)",
    ),
];

/// SSH private key names with something after them (`id_rsa_github`,
/// `id_ed25519-deploy`, `id_rsa.old`): ssh-keygen's default names, which
/// people keep when they add a purpose (ssh-keygen(1) FILES, `-f`). A name
/// ending in [`PUBLIC_KEY_SUFFIX`] is the public half.
pub const PRIVATE_KEY_PREFIXES: &[&str] =
    &["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_xmss"];

/// The ending of a public key (`id_rsa.pub`, `id_rsa-cert.pub`).
pub const PUBLIC_KEY_SUFFIX: &str = ".pub";

/// Endings of a backup or an editor's copy, `(ending, who writes it)`: such a
/// copy of a secret file holds the same secret (`.pgpass.bak`,
/// `.git-credentials.orig`, `.netrc~`).
pub const BACKUP_SUFFIXES: &[(&str, &str)] = &[
    ("~", "Emacs, Vim ('backup'), cp --backup"),
    (".bak", "editors and people"),
    (".orig", "patch(1), git mergetool"),
    (".old", "people, rotation scripts"),
    (".save", "nano(1)"),
    (".backup", "people"),
    (".swp", "Vim swap files"),
    (".swo", "Vim swap files"),
    (".copy", "people"),
];

/// `.env`, and the start of its variants (`.env.local`, `.env_prod`).
pub const ENV_PREFIX: &str = ".env";

/// Last suffixes that make an `.env.*` name a template, not a secret
/// (`.env.example`, `.env.local.sample`).
pub const ENV_TEMPLATE_SUFFIXES: &[&str] = &["example", "sample", "template", "dist", "defaults"];

/// Absolute paths (or directories) outside any home that hold secrets.
pub const SECRET_SYSTEM: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
];

/// Linux's `PATH_MAX`: the longest path, terminating NUL included, that the
/// kernel accepts in one system call.
pub const PATH_MAX: usize = 4096;

/// Why a path is a credential.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CredentialKind {
    /// A component is a secret directory or a secret pair (`.ssh`, `.kube/config`).
    Directory,
    /// The file name is a secret by itself (`.env`, `.npmrc`, `id_rsa`).
    Name,
    /// A system secret (`/etc/shadow`, `/proc/1/environ`, an SSH host key).
    System,
    /// A hard link to the credential file named here.
    HardLink(PathBuf),
}

impl fmt::Display for CredentialKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialKind::Directory => f.write_str("it lies in a directory that holds secrets"),
            CredentialKind::Name => f.write_str("its name is that of a file that holds secrets"),
            CredentialKind::System => f.write_str("it is a system secret"),
            CredentialKind::HardLink(of) => {
                write!(
                    f,
                    "it is a hard link to {}, which holds secrets",
                    of.display()
                )
            }
        }
    }
}

fn eq(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

/// Whether a single name is a secret directory (`.ssh`, `.AWS`).
pub fn is_secret_dir_name(name: &[u8]) -> bool {
    SECRET_DIRS.iter().any(|(d, _)| eq(name, d))
}

/// Whether `name` inside a directory called `parent` is secret by the pair
/// table (`.docker/config.json`, `keyrings/anything`).
pub fn is_secret_pair(parent: &[u8], name: &[u8]) -> bool {
    crate::name_sieve::sieve().may_be_pair_parent(parent) && is_secret_pair_by_table(parent, name)
}

/// [`is_secret_pair`] against every row, without the sieve.
fn is_secret_pair_by_table(parent: &[u8], name: &[u8]) -> bool {
    SECRET_PAIRS
        .iter()
        .any(|(d, entry, _)| eq(parent, d) && (*entry == "*" || eq(name, entry)))
}

/// Whether a file name is a secret by itself: one of [`SECRET_FILES`], one
/// that ends as one of [`SECRET_SUFFIXES`] or is shaped as one of
/// [`SECRET_NAME_SHAPES`], an SSH private key's default name with a purpose
/// after it ([`PRIVATE_KEY_PREFIXES`]), or
/// `.env` followed by a character that is not a letter or a digit (`.env.local`,
/// `.env_prod`), unless its last suffix marks a template
/// ([`ENV_TEMPLATE_SUFFIXES`]); or any of these with a backup's ending
/// ([`BACKUP_SUFFIXES`]). Compares bytes, without regard to ASCII case.
///
/// `.envrc` (direnv) is not one: it is a protected path (a write to it runs
/// code later), judged as such by the policy, and the policy's corpus reads
/// and writes it as an ordinary file otherwise.
pub fn is_credential_name(name: &[u8]) -> bool {
    crate::name_sieve::sieve().may_be_secret_name(name) && is_credential_name_by_table(name)
}

/// [`is_credential_name`] against every row, without the sieve.
pub(crate) fn is_credential_name_by_table(name: &[u8]) -> bool {
    if is_secret_name_itself(name) {
        return true;
    }
    // A backup or an editor's copy of a secret file holds the same secret.
    BACKUP_SUFFIXES.iter().any(|(end, _)| {
        name.len() > end.len()
            && eq(&name[name.len() - end.len()..], end)
            && is_secret_name_itself(&name[..name.len() - end.len()])
    })
}

/// Whether `text`, one word (no whitespace, a single line, at most 4 KiB),
/// names a credential file by its last component (`.env`, `deploy/id_rsa`,
/// a glob such as `**/.npmrc`): where a tool's arguments are scanned for
/// paths by their keys and shapes (MCP tools through a hook or the gateway),
/// a secret file's name is a path whatever key holds it.
///
/// ```
/// use toolgate_paths::credential::names_credential_file;
/// assert!(names_credential_file(".env"));
/// assert!(names_credential_file("deploy/id_rsa"));
/// assert!(names_credential_file("**/.npmrc"));
/// assert!(!names_credential_file("README"));
/// assert!(!names_credential_file("see .env for details"));
/// ```
pub fn names_credential_file(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || t.len() > 4096 || t.chars().any(char::is_whitespace) {
        return false;
    }
    let last = t.trim_end_matches('/').rsplit('/').next().unwrap_or(t);
    !last.is_empty() && is_credential_name(last.as_bytes())
}

/// Whether `name` starts as an SSH private key's default name and goes on
/// with a separator (`id_rsa_github`, `id_ed25519.old`), and is not the
/// public half.
fn is_private_key_name(name: &[u8]) -> bool {
    let public = name.len() > PUBLIC_KEY_SUFFIX.len()
        && eq(
            &name[name.len() - PUBLIC_KEY_SUFFIX.len()..],
            PUBLIC_KEY_SUFFIX,
        );
    !public
        && PRIVATE_KEY_PREFIXES.iter().any(|p| {
            name.len() > p.len()
                && eq(&name[..p.len()], p)
                && matches!(name[p.len()], b'_' | b'-' | b'.')
        })
}

/// [`is_credential_name`] without the backup endings.
fn is_secret_name_itself(name: &[u8]) -> bool {
    if is_private_key_name(name) {
        return true;
    }
    if SECRET_FILES.iter().any(|(s, _)| eq(name, s)) {
        return true;
    }
    let ends = |end: &str| name.len() > end.len() && eq(&name[name.len() - end.len()..], end);
    if SECRET_SUFFIXES.iter().any(|(end, _)| ends(end)) {
        return true;
    }
    let shaped = SECRET_NAME_SHAPES.iter().any(|(start, end, _)| {
        name.len() >= start.len() + end.len()
            && eq(&name[..start.len()], start)
            && (end.is_empty() || ends(end))
    });
    if shaped {
        return true;
    }
    let Some(prefix) = name.get(..ENV_PREFIX.len()) else {
        return false;
    };
    if !eq(prefix, ENV_PREFIX) {
        return false;
    }
    match name.get(ENV_PREFIX.len()) {
        None => true,
        Some(c) if c.is_ascii_alphanumeric() => false,
        Some(_) => !is_env_template(name),
    }
}

/// A name of each kind the tables hold (the files themselves, one name per
/// ending and per shape, `.env` variants): what a glob is compared with to
/// learn whether it may expand to a secret.
pub fn sample_secret_names() -> Vec<String> {
    let mut out: Vec<String> = SECRET_FILES.iter().map(|(n, _)| n.to_string()).collect();
    out.extend(SECRET_SUFFIXES.iter().map(|(end, _)| format!("x{end}")));
    out.extend(
        SECRET_NAME_SHAPES
            .iter()
            .map(|(start, end, _)| format!("{start}x{end}")),
    );
    out.extend([".env.local".to_string(), ".env.production".to_string()]);
    out.extend(PRIVATE_KEY_PREFIXES.iter().map(|p| format!("{p}_x")));
    out.extend(
        BACKUP_SUFFIXES
            .iter()
            .map(|(end, _)| format!(".netrc{end}")),
    );
    out
}

/// `.env.example`, `.env.local.sample`: the part after the last `.` (past the
/// leading one) is a template suffix.
fn is_env_template(name: &[u8]) -> bool {
    match name[1..].iter().rposition(|&b| b == b'.') {
        Some(i) => {
            let suffix = &name[i + 2..];
            ENV_TEMPLATE_SUFFIXES.iter().any(|t| eq(suffix, t))
        }
        None => false,
    }
}

/// Whether a directory entry is a credential, judged by its own name and its
/// parent directory's name: what a walker needs, as it has already judged the
/// directories above. A secret directory is one (everything below it is
/// secret); a directory called `.env` (a Python virtual environment) is not.
pub fn is_credential_entry(parent: Option<&[u8]>, name: &[u8], is_dir: bool) -> bool {
    is_secret_dir_name(name)
        || parent.is_some_and(|p| is_secret_pair(p, name))
        || (!is_dir && is_credential_name(name))
}

/// Whether `path` names a credential by its components (no file system
/// access): see the module documentation. `home` is the user's home directory,
/// for `~/.kube`, `~/.docker` and `~/.config/gh` themselves.
pub fn is_credential(path: &Path, home: &Path) -> Option<CredentialKind> {
    // One pass over the components, without allocating: this runs for every
    // path a command names.
    let mut first: Option<&[u8]> = None;
    let mut prev: Option<&[u8]> = None;
    let mut last: Option<&[u8]> = None;
    for name in crate::path_text::normal_names(path) {
        if is_secret_dir_name(name) {
            return Some(CredentialKind::Directory);
        }
        if prev.is_some_and(|dir| is_secret_pair(dir, name)) {
            return Some(CredentialKind::Directory);
        }
        first.get_or_insert(name);
        prev = Some(name);
        last = Some(name);
    }
    if last.is_some_and(is_credential_name) {
        return Some(CredentialKind::Name);
    }
    // Every system secret lives under `/etc` or `/proc`.
    if path.is_absolute() && matches!(first, Some(b"etc" | b"proc")) && is_system_secret(path) {
        return Some(CredentialKind::System);
    }
    // `~/.kube` itself, `~/.config/gh` itself: the directory holding the secret.
    if last.is_some_and(|l| eq(l, ".kube") || eq(l, ".docker") || eq(l, "gh")) {
        if let Ok(rest) = path.strip_prefix(home) {
            let rest = rest.as_os_str().as_bytes();
            if eq(rest, ".kube") || eq(rest, ".docker") || eq(rest, ".config/gh") {
                return Some(CredentialKind::Directory);
            }
        }
    }
    None
}

fn is_system_secret(path: &Path) -> bool {
    if SECRET_SYSTEM.iter().any(|s| path.starts_with(s)) {
        return true;
    }
    let text = path.as_os_str().as_bytes();
    // Process environments hold every secret the process was given.
    if text.starts_with(b"/proc/") && text.ends_with(b"/environ") {
        return true;
    }
    // SSH host private keys (the `.pub` halves are public).
    if let Some(name) = text.strip_prefix(b"/etc/ssh/") {
        return name.starts_with(b"ssh_host_") && !name.ends_with(b".pub");
    }
    false
}

/// The credential files known by device and inode, for one home and one set
/// of location roots: what a hard link is compared against.
#[derive(Debug, Default)]
pub struct CredentialInodes {
    inodes: HashMap<(u64, u64), PathBuf>,
    /// The directories looked into, as they were: when one changes, the
    /// snapshot is taken again.
    stamps: Vec<(PathBuf, Option<DirStamp>)>,
    /// Whether the scan stopped at its entry budget.
    pub truncated: bool,
}

/// A directory's identity and last change, taken before its entries are
/// read: while it is equal, the directory holds the same names (creating,
/// removing or renaming an entry changes the modification and change times;
/// the change time cannot be set back by a user).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirStamp {
    /// The device.
    pub dev: u64,
    /// The inode.
    pub ino: u64,
    /// The last modification, seconds and nanoseconds since the epoch.
    pub mtime: (i64, i64),
    /// The last status change, seconds and nanoseconds since the epoch.
    pub ctime: (i64, i64),
}

impl DirStamp {
    /// The stamp of the entry at `path` (not following a last symbolic
    /// link); `None` when there is none.
    pub fn of(path: &Path) -> Option<DirStamp> {
        std::fs::symlink_metadata(path).ok().map(|m| DirStamp {
            dev: m.dev(),
            ino: m.ino(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

fn stamp(path: &Path) -> Option<DirStamp> {
    DirStamp::of(path)
}

/// Entries one snapshot looks at, at most (home, system and location together).
pub const SNAPSHOT_ENTRY_BUDGET: usize = 16 * 1024;
/// How deep the location roots are searched for credential files.
pub const LOCATION_SCAN_DEPTH: usize = 6;
/// How deep a secret directory (`~/.ssh`, `~/.gnupg`) is searched.
const SECRET_DIR_DEPTH: usize = 4;
/// Snapshots kept, one per (home, roots); when full the cache starts over.
const CACHE_ENTRIES: usize = 16;
/// Directories not searched in a location: large, and generated.
const SKIPPED_DIRS: &[&str] = &[".git", "node_modules", "target"];

/// Where in the home directory the programs of the `"*"` pairs keep their
/// directory (the other pairs are found at `~/DIRECTORY/ENTRY`).
const HOME_PAIR_PLACES: &[(&str, &str)] = &[("keyrings", ".local/share/keyrings")];

/// The home entries below non-secret directories that hold secrets: each
/// pair of [`SECRET_PAIRS`] at `~/DIRECTORY/ENTRY` (or its place in
/// `HOME_PAIR_PLACES`), and the cache-held ones (`~/.cache/huggingface/token`).
fn home_secret_places(home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (dir, entry, _) in SECRET_PAIRS {
        if *entry == "*" {
            if let Some((_, place)) = HOME_PAIR_PLACES.iter().find(|(d, _)| d == dir) {
                out.push(home.join(place));
            }
        } else {
            out.push(home.join(dir).join(entry));
            out.push(home.join(".config").join(dir).join(entry));
            out.push(home.join(".cache").join(dir).join(entry));
        }
    }
    out
}

/// Snapshots by (home, roots).
type SnapshotCache = HashMap<(PathBuf, Vec<PathBuf>), Arc<CredentialInodes>>;

impl CredentialInodes {
    /// The snapshot for `home` and `roots`, from the process-wide cache when
    /// none of the directories it looked into changed since, else taken anew.
    pub fn snapshot(home: &Path, roots: &[&Path]) -> Arc<CredentialInodes> {
        static CACHE: OnceLock<Mutex<SnapshotCache>> = OnceLock::new();
        let cache = CACHE.get_or_init(Mutex::default);
        let key = (
            home.to_path_buf(),
            roots.iter().map(|r| r.to_path_buf()).collect::<Vec<_>>(),
        );
        let found = cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .cloned();
        if let Some(found) = found {
            if found.is_current() {
                return found;
            }
        }
        let fresh = Arc::new(CredentialInodes::scan(home, roots));
        let mut map = cache.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= CACHE_ENTRIES && !map.contains_key(&key) {
            map.clear();
        }
        map.insert(key, Arc::clone(&fresh));
        fresh
    }

    /// Takes a snapshot now, without the cache.
    pub fn scan(home: &Path, roots: &[&Path]) -> CredentialInodes {
        let mut scan = Scan {
            out: CredentialInodes::default(),
            budget: SNAPSHOT_ENTRY_BUDGET,
            home,
        };
        // The home: its own entries by name (a secret directory in full),
        // then the secrets below ordinary directories. Each of those is
        // looked for only where its parent exists: a directory's listing,
        // read once and its stamp kept, says which of its entries exist, so
        // a place below a missing directory costs nothing (making that
        // directory changes a stamped one, which renews the snapshot).
        scan.dir(home, 1, false);
        let mut listings = Listings::default();
        for place in home_secret_places(home) {
            match listings.find(home, &place, &mut scan.out.stamps) {
                Some(true) => scan.dir(&place, SECRET_DIR_DEPTH, true),
                Some(false) => scan.file(&place),
                None => {}
            }
        }
        // System secrets a user could link to from the same file system
        // (`/etc` stamped first, as every directory is before it is read).
        scan.out
            .stamps
            .push((PathBuf::from("/etc"), stamp(Path::new("/etc"))));
        for sys in ["/etc/shadow", "/etc/gshadow", "/etc/sudoers"] {
            scan.file(Path::new(sys));
        }
        scan.dir(Path::new("/etc/ssh"), 1, false);
        for root in roots {
            scan.dir(root, LOCATION_SCAN_DEPTH, false);
        }
        scan.out
    }

    /// Whether every directory looked into is as it was.
    pub fn is_current(&self) -> bool {
        self.stamps.iter().all(|(p, s)| stamp(p) == *s)
    }

    /// The directories the snapshot looked into, each with its stamp as it
    /// was before it was read (`None`: it did not exist): what a copy kept
    /// elsewhere must find unchanged ([`CredentialInodes::from_kept`]).
    pub fn looked_into(&self) -> &[(PathBuf, Option<DirStamp>)] {
        &self.stamps
    }

    /// A snapshot as kept elsewhere (its [`iter`](CredentialInodes::iter)
    /// and [`looked_into`](CredentialInodes::looked_into)); trust it only
    /// when [`is_current`](CredentialInodes::is_current).
    pub fn from_kept(
        files: impl IntoIterator<Item = (u64, u64, PathBuf)>,
        looked_into: Vec<(PathBuf, Option<DirStamp>)>,
    ) -> CredentialInodes {
        CredentialInodes {
            inodes: files
                .into_iter()
                .map(|(dev, ino, path)| ((dev, ino), path))
                .collect(),
            stamps: looked_into,
            truncated: false,
        }
    }

    /// The credential file with this device and inode, if any.
    pub fn get(&self, dev: u64, ino: u64) -> Option<&Path> {
        self.inodes.get(&(dev, ino)).map(PathBuf::as_path)
    }

    /// Whether `meta` (of a file found anywhere) is a hard link to a known
    /// credential file: a regular file with more than one link whose device
    /// and inode match. Returns that file.
    pub fn link_of(&self, meta: &std::fs::Metadata) -> Option<&Path> {
        if !meta.is_file() || meta.nlink() < 2 {
            return None;
        }
        self.get(meta.dev(), meta.ino())
    }

    /// Every credential file the snapshot knows, with its device and inode.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64, &Path)> {
        self.inodes
            .iter()
            .map(|((dev, ino), path)| (*dev, *ino, path.as_path()))
    }

    /// How many credential files the snapshot knows.
    pub fn len(&self) -> usize {
        self.inodes.len()
    }

    /// Whether the snapshot knows no credential file.
    pub fn is_empty(&self) -> bool {
        self.inodes.is_empty()
    }
}

/// Directories' listings, each read once: which entries exist, and whether
/// each is a directory (following a symbolic link, as a path through it
/// would).
#[derive(Default)]
struct Listings {
    read: HashMap<PathBuf, HashMap<Vec<u8>, bool>>,
}

impl Listings {
    /// Whether `place`, below `base`, exists: `Some(true)` a directory,
    /// `Some(false)` anything else, `None` missing. Each directory listed
    /// on the way is stamped into `stamps` (`base` is not: its caller has).
    fn find(
        &mut self,
        base: &Path,
        place: &Path,
        stamps: &mut Vec<(PathBuf, Option<DirStamp>)>,
    ) -> Option<bool> {
        let rel = place.strip_prefix(base).ok()?;
        let mut at = base.to_path_buf();
        let mut found = None;
        for c in rel.components() {
            if found == Some(false) {
                return None;
            }
            if !self.read.contains_key(&at) {
                if at != base {
                    stamps.push((at.clone(), stamp(&at)));
                }
                let names = list(&at);
                self.read.insert(at.clone(), names);
            }
            let dir = *self.read.get(&at)?.get(c.as_os_str().as_bytes())?;
            at.push(c);
            found = Some(dir);
        }
        found
    }
}

/// A directory's entries by name, each with whether it is a directory
/// (a link followed); empty when it cannot be read.
fn list(dir: &Path) -> HashMap<Vec<u8>, bool> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return HashMap::new();
    };
    entries
        .flatten()
        .map(|e| {
            let is_dir = match e.file_type() {
                Ok(t) if t.is_symlink() => std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir()),
                Ok(t) => t.is_dir(),
                Err(_) => false,
            };
            (e.file_name().as_bytes().to_vec(), is_dir)
        })
        .collect()
}

struct Scan<'a> {
    out: CredentialInodes,
    budget: usize,
    home: &'a Path,
}

impl Scan<'_> {
    fn file(&mut self, path: &Path) {
        if let Ok(m) = std::fs::symlink_metadata(path) {
            if m.is_file() {
                self.out
                    .inodes
                    .insert((m.dev(), m.ino()), path.to_path_buf());
            }
        }
    }

    /// Looks into `dir` down to `depth` levels: every regular file when `all`
    /// (inside a secret directory), else the credential files by name.
    fn dir(&mut self, dir: &Path, depth: usize, all: bool) {
        self.out.stamps.push((dir.to_path_buf(), stamp(dir)));
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let parent = dir.file_name().map(|n| n.as_bytes().to_vec());
        for entry in entries.flatten() {
            if self.budget == 0 {
                self.out.truncated = true;
                tracing::debug!(dir = %dir.display(), "credential scan budget spent");
                return;
            }
            self.budget -= 1;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let name = name.as_bytes();
            let path = entry.path();
            if kind.is_dir() {
                if all {
                    if depth > 1 {
                        self.dir(&path, depth - 1, true);
                    }
                } else if is_credential_entry(parent.as_deref(), name, true) {
                    self.dir(&path, SECRET_DIR_DEPTH, true);
                } else if depth > 1 && !SKIPPED_DIRS.iter().any(|s| eq(name, s)) {
                    self.dir(&path, depth - 1, false);
                }
            } else if kind.is_file()
                && (all
                    || is_credential_entry(parent.as_deref(), name, false)
                    || is_credential(&path, self.home).is_some())
            {
                if let Ok(m) = entry.metadata() {
                    self.out.inodes.insert((m.dev(), m.ino()), path);
                }
            }
        }
    }
}

/// Whether `path` is a hard link to a credential file of `home` or of the
/// location `roots` (see [`CredentialInodes`]): one `lstat`; the snapshot is
/// only consulted for a regular file with more than one link. Returns the
/// credential file it is a link to.
pub fn hard_link_of(path: &Path, home: &Path, roots: &[&Path]) -> Option<PathBuf> {
    hard_link_to(path, LinkedFile::at(path)?, home, roots)
}

/// A regular file with more than one link, by device and inode: the only kind
/// of entry that can be a hard link to a credential file. A caller that has
/// `lstat`ed the path already makes one with [`LinkedFile::of`] and asks
/// [`hard_link_to`], saving the second `lstat` of [`hard_link_of`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkedFile {
    dev: u64,
    ino: u64,
}

impl LinkedFile {
    /// The identity of `meta` (an `lstat` answer) when it is a regular file
    /// with more than one link; `None` for anything that cannot be a hard link
    /// to a credential.
    pub fn of(meta: &std::fs::Metadata) -> Option<LinkedFile> {
        (meta.is_file() && meta.nlink() >= 2).then(|| LinkedFile {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    /// [`LinkedFile::of`] the entry at `path`, by one `lstat`.
    pub fn at(path: &Path) -> Option<LinkedFile> {
        LinkedFile::of(&std::fs::symlink_metadata(path).ok()?)
    }
}

/// [`hard_link_of`] for a path already `lstat`ed: the credential file of `home`
/// or of `roots` that `file` (the entry at `path`) is a link to.
pub fn hard_link_to(
    path: &Path,
    file: LinkedFile,
    home: &Path,
    roots: &[&Path],
) -> Option<PathBuf> {
    let snapshot = CredentialInodes::snapshot(home, roots);
    let of = snapshot.get(file.dev, file.ino)?;
    // The credential file itself is judged by its own name.
    (of != path).then(|| of.to_path_buf())
}

/// The user's home directory, from `HOME` (empty when unset: nothing is below it).
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The PEM labels of public material: a file made of these blocks alone
/// (a CA bundle, a certificate chain) holds no secret (RFC 7468 section 5,
/// 6 and 9).
const PUBLIC_PEM_LABELS: &[&[u8]] = &[b"CERTIFICATE", b"TRUSTED CERTIFICATE", b"X509 CRL"];

/// Whether `bytes` are certificates only: PEM text with at least one block,
/// every block's label public ([`PUBLIC_PEM_LABELS`]), and nothing shaped as
/// a private key anywhere (`PRIVATE KEY` in any case, an OpenSSH or PuTTY
/// key's header). Text around the blocks is allowed (a bundle's comments).
///
/// A file named as a secret by its ending (`cacert.pem`) is judged by this
/// when a confined command created it: pip's vendored CA bundle did not land
/// in a new virtualenv, and pip could not verify TLS there.
///
/// ```
/// use toolgate_paths::credential::holds_only_certificates;
/// let cert = b"# ISRG Root X1\n-----BEGIN CERTIFICATE-----\nMIIF\n-----END CERTIFICATE-----\n";
/// assert!(holds_only_certificates(cert));
/// let key = b"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
/// assert!(!holds_only_certificates(key));
/// ```
pub fn holds_only_certificates(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let upper = text.to_ascii_uppercase();
    if upper.contains("PRIVATE KEY") || upper.contains("PUTTY-USER-KEY-FILE") {
        return false;
    }
    let mut blocks = 0usize;
    for line in upper.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("-----BEGIN ") else {
            continue;
        };
        let Some(label) = rest.strip_suffix("-----") else {
            return false;
        };
        if !PUBLIC_PEM_LABELS.contains(&label.as_bytes()) {
            return false;
        }
        blocks += 1;
    }
    // `-----BEGIN` anywhere else than at a line's start is not PEM a
    // parser reads as a block; refuse it rather than guess.
    blocks > 0 && upper.matches("-----BEGIN").count() == blocks
}

#[cfg(test)]
mod tests {
    #[test]
    fn certificates_only_is_proved_from_the_blocks() {
        let cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        assert!(holds_only_certificates(cert.as_bytes()));
        let bundle = format!(
            "# comment\n{cert}\n# another\n{cert}-----BEGIN X509 CRL-----\nx\n-----END X509 CRL-----\n"
        );
        assert!(holds_only_certificates(bundle.as_bytes()));
        for secret in [
            format!("{cert}-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n"),
            format!(
                "{cert}-----BEGIN ENCRYPTED PRIVATE KEY-----\nx\n-----END ENCRYPTED PRIVATE KEY-----\n"
            ),
            format!(
                "{cert}-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----\n"
            ),
            format!("{cert}-----BEGIN EC PARAMETERS-----\nBggq\n-----END EC PARAMETERS-----\n"),
            format!("{cert}PuTTY-User-Key-File-3: ssh-ed25519\n"),
            format!("{cert}# private key: -----BEGIN X-----\n"),
            format!("{cert}-----begin private key-----\n"),
            "no blocks at all\n".to_string(),
            String::new(),
        ] {
            assert!(!holds_only_certificates(secret.as_bytes()), "{secret}");
        }
        assert!(!holds_only_certificates(
            b"\xff\xfe-----BEGIN CERTIFICATE-----"
        ));
    }

    use super::*;

    #[test]
    fn names() {
        for secret in [
            ".env",
            ".ENV",
            ".Env.Local",
            ".env.production",
            ".env_prod",
            ".env\u{1}",
            ".npmrc",
            ".netrc",
            "_netrc",
            ".git-credentials",
            "ID_RSA",
            "id_ed25519",
            ".env.example.bak",
            "server.pem",
            "PRIVATE.KEY",
            "master.key",
            "cert.p12",
            "store.PFX",
            "release.keystore",
            "terraform.tfstate",
            "terraform.tfstate.backup",
            "prod.tfstate",
            ".dev.vars",
            ".dev.vars.staging",
            "service-account.json",
            "service-account-prod.json",
            "my-project-credentials.json",
            "client_secret_123.apps.googleusercontent.com.json",
            "credentials.json",
            ".pgpass",
            ".pypirc",
            ".vault-token",
            ".my.cnf",
        ] {
            assert!(is_credential_name(secret.as_bytes()), "{secret}");
        }
        for plain in [
            ".env.example",
            ".ENV.EXAMPLE",
            ".env.sample",
            ".env.template",
            ".env.dist",
            ".env.defaults",
            ".env.local.example",
            ".envrc",
            ".envrc.md",
            ".environment",
            "env",
            "id_rsa.pub",
            "notes.txt",
            "",
            ".en",
            ".key",
            "keys.rs",
            "pem.rs",
            "service-account.md",
            "credentials.rs",
            "monkey.txt",
            "dev.vars",
        ] {
            assert!(!is_credential_name(plain.as_bytes()), "{plain}");
        }
        assert!(is_credential_name(b".env\xff"));
        assert!(is_credential_name(b".env.\xffexample"));
        assert!(!is_credential_name(b"\xff.env"));
    }

    #[test]
    fn entries() {
        assert!(is_credential_entry(Some(b"ws"), b".SSH", true));
        assert!(is_credential_entry(Some(b".docker"), b"config.json", false));
        assert!(is_credential_entry(
            Some(b"keyrings"),
            b"login.keyring",
            false
        ));
        assert!(!is_credential_entry(Some(b"ws"), b".env", true));
        assert!(is_credential_entry(Some(b"ws"), b".env", false));
        assert!(!is_credential_entry(Some(b"ws"), b"config.json", false));
    }

    #[test]
    fn paths() {
        let home = Path::new("/home/u");
        for secret in [
            "/home/u/.ssh",
            "/home/u/.SSH/id_rsa",
            "/home/u/.kube",
            "/home/u/.config/gh",
            "/ws/.Docker/Config.json",
            "/etc/shadow",
            "/proc/12/environ",
            "/home/u/.claude/.credentials.json",
            "/home/u/.codex/auth.json",
            "/home/u/.config/github-copilot/hosts.json",
            "/home/u/.cargo/credentials.toml",
            "/home/u/.cargo/credentials",
            "/home/u/.gem/credentials",
            "/home/u/.m2/settings.xml",
            "/home/u/.gradle/gradle.properties",
            "/home/u/.terraform.d/credentials.tfrc.json",
            "/home/u/.azure/msal_token_cache.json",
            "/home/u/.password-store/x.gpg",
            "/home/u/.local/share/keyrings/login.keyring",
            "/home/u/.cache/huggingface/token",
            "/ws/config/master.key",
            "/ws/config/credentials/production.key",
            "/ws/certs/tls.pem",
            "/ws/infra/terraform.tfstate",
            "/ws/.npmrc",
            "/ws/sub/.NPMRC",
        ] {
            assert!(is_credential(Path::new(secret), home).is_some(), "{secret}");
        }
        for plain in [
            "/ws/src/main.rs",
            "/etc/ssh/ssh_host_rsa_key.pub",
            "/ws/.kube",
            "/home/u/.claude/settings.json",
            "/home/u/.codex/config.toml",
            "/home/u/.cargo/config.toml",
            "/ws/config/routes.rb",
            "/ws/src/keys.rs",
        ] {
            assert!(is_credential(Path::new(plain), home).is_none(), "{plain}");
        }
    }

    #[test]
    fn a_snapshot_finds_home_and_location_credentials_and_sees_changes() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(ws.join("config")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
        std::fs::write(ws.join("config/.env"), "T=1").unwrap();
        std::fs::write(ws.join("plain.txt"), "x").unwrap();
        let snap = CredentialInodes::snapshot(&home, &[&ws]);
        let ino = |p: &Path| {
            let m = std::fs::metadata(p).unwrap();
            (m.dev(), m.ino())
        };
        let (d, i) = ino(&home.join(".ssh/id_rsa"));
        assert_eq!(snap.get(d, i), Some(home.join(".ssh/id_rsa").as_path()));
        let (d, i) = ino(&ws.join("config/.env"));
        assert!(snap.get(d, i).is_some());
        let (d, i) = ino(&ws.join("plain.txt"));
        assert!(snap.get(d, i).is_none());
        // Cached while nothing changed.
        assert!(Arc::ptr_eq(
            &snap,
            &CredentialInodes::snapshot(&home, &[&ws])
        ));
        // A new key is seen.
        std::fs::write(home.join(".ssh/id_ed25519"), "KEY2").unwrap();
        let again = CredentialInodes::snapshot(&home, &[&ws]);
        let (d, i) = ino(&home.join(".ssh/id_ed25519"));
        assert!(again.get(d, i).is_some());
        // A hard link is found; the file itself is not its own link.
        std::fs::hard_link(home.join(".ssh/id_rsa"), ws.join("notes.txt")).unwrap();
        assert_eq!(
            hard_link_of(&ws.join("notes.txt"), &home, &[&ws]),
            Some(home.join(".ssh/id_rsa"))
        );
        assert_eq!(hard_link_of(&home.join(".ssh/id_rsa"), &home, &[&ws]), None);
        assert_eq!(hard_link_of(&ws.join("plain.txt"), &home, &[&ws]), None);
    }

    /// Names the table missed (review s35): variable definitions, keys kept
    /// under a purpose's name, backups of secret files, and the files of a
    /// few tools; their public or harmless neighbours stay readable.
    #[test]
    fn keys_under_other_names_backups_and_variable_files_are_secrets() {
        for name in [
            "terraform.tfvars",
            "prod.auto.tfvars",
            "x.tfvars.json",
            "id_rsa_github",
            "ID_ED25519-deploy",
            "id_ecdsa.old",
            ".pgpass.bak",
            ".git-credentials.orig",
            ".netrc~",
            "id_rsa.swp",
            "master.key.bak",
            "gha-creds-1a2b3c.json",
            "admin.kubeconfig",
            ".secrets",
            ".sentryclirc",
        ] {
            assert!(is_credential_name(name.as_bytes()), "{name}");
        }
        for name in [
            "id_rsa.pub",
            "id_rsa-cert.pub",
            "id_ed25519_deploy.pub",
            "id_rsax",
            "variables.tf",
            "README.old",
            "main.rs.orig",
            "notes~",
            "kubeconfig.md",
        ] {
            assert!(!is_credential_name(name.as_bytes()), "{name}");
        }
    }
}
