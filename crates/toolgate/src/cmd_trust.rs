//! `toolgate trust [DIR] [--yes]`, `toolgate trust --list`, `toolgate trust
//! --revoke [DIR]`: a person's consent to one exact project config.
//!
//! Trusting shows what the file would loosen (what it tightens applies
//! anyway), asks on the terminal unless `--yes`, and records the file's path
//! and the sha256 of the bytes shown in the data directory. Any later change
//! to the file makes it untrusted again.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use clap::Args;
use toolgate_policy::policy::Policy;
use toolgate_policy::trust::{TrustStore, config_key, sha256_hex};

use toolgate::DataDir;
use toolgate_policy::policy::PolicySources;

/// `toolgate trust`.
#[derive(Debug, Clone, Args)]
pub struct TrustArgs {
    /// The project directory whose `.toolgate/config.toml` to trust (default:
    /// the current directory).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Trust without asking on the terminal (for scripts).
    #[arg(long, conflicts_with_all = ["list", "revoke"])]
    pub yes: bool,
    /// List the trusted project configs and whether each is unchanged.
    #[arg(long, conflicts_with_all = ["revoke", "dir"])]
    pub list: bool,
    /// Withdraw trust from DIR's project config.
    #[arg(long)]
    pub revoke: bool,
}

/// The project config of `dir` (default: the current directory).
fn project_config(dir: Option<&Path>) -> Result<PathBuf> {
    let location = crate::cli_builder::location(dir)?;
    Ok(location.root().join(".toolgate/config.toml"))
}

/// Runs `toolgate trust`.
pub fn run(args: TrustArgs, data: &DataDir) -> Result<i32> {
    let store = TrustStore::new(data.trust_file());
    if args.list {
        return list(&store);
    }
    let file = project_config(args.dir.as_deref())?;
    if args.revoke {
        let key = config_key(&file);
        return match store.revoke(&key)? {
            Some(r) => {
                println!(
                    "no longer trusted: {} (sha256 {})",
                    r.path,
                    short(&r.sha256)
                );
                Ok(0)
            }
            None => {
                println!("not trusted: {}", key.display());
                Ok(0)
            }
        };
    }
    trust(&file, args.dir.as_deref(), args.yes, &store, data)
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

fn list(store: &TrustStore) -> Result<i32> {
    let records = store.list()?;
    let mut out = std::io::stdout().lock();
    if records.is_empty() {
        writeln!(out, "no trusted project configs")?;
        return Ok(0);
    }
    for r in &records {
        let state = match toolgate_policy::trust::read_config_bytes(Path::new(&r.path)) {
            Ok(bytes) if sha256_hex(&bytes) == r.sha256 => "trusted",
            Ok(_) => "changed since trusted: not trusted",
            Err(_) => "missing",
        };
        writeln!(out, "{}  sha256 {}  {state}", r.path, short(&r.sha256))?;
    }
    Ok(0)
}

fn trust(
    file: &Path,
    dir: Option<&Path>,
    yes: bool,
    store: &TrustStore,
    data: &DataDir,
) -> Result<i32> {
    if !file.is_file() {
        bail!(
            "no project config at {}: there is nothing to trust",
            file.display()
        );
    }
    let location = crate::cli_builder::location(dir)?;
    // Judged as untrusted, against the user and managed layers of this machine.
    // (No trust records: the standard layers, and the data directory protected.)
    let mut sources = PolicySources::standard(location.root());
    sources.data_dir = Some(data.root().to_path_buf());
    let policy = Policy::load(&sources)?;
    if let Some(e) = policy.project_error() {
        return Err(anyhow::Error::new(e.clone()).context("cannot trust a broken config"));
    }
    let project = policy
        .project()
        .ok_or_else(|| anyhow!("no project config at {}", file.display()))?;
    let mut text = format!(
        "Project config {} (sha256 {})\n",
        project.path.display(),
        short(&project.sha256)
    );
    if project.loosening.is_empty() {
        text.push_str("It only tightens the gate: trusting it changes nothing today.\n");
    } else {
        text.push_str(
            "What it tightens applies already. Trusting it also lets these entries loosen the gate:\n",
        );
        for i in &project.loosening {
            let what = i.why.split_once("): ").map_or(i.why.as_str(), |(_, w)| w);
            text.push_str(&format!("  {}  {what}\n", i.rule));
        }
    }
    text.push_str("Any change to the file makes it untrusted again.\n");
    if yes {
        print!("{text}");
    } else {
        let confirmed = toolgate::terminal::confirm(&format!(
            "{text}Trust this exact file? [y/N] "
        ))
        .map_err(|e| {
            let hint = format!("{e}; to trust without asking, run `toolgate trust --yes`");
            anyhow::Error::new(e).context(hint)
        })?;
        if !confirmed {
            println!("not trusted: {}", project.path.display());
            return Ok(1);
        }
    }
    store.trust(&project.path, &project.sha256)?;
    println!(
        "trusted: {} (sha256 {})",
        project.path.display(),
        short(&project.sha256)
    );
    Ok(0)
}
