//! What the machine supports, found by trying it: bubblewrap is run once with
//! the namespaces a confined command uses, the Landlock ABI is asked of the
//! kernel (`LANDLOCK_CREATE_RULESET_VERSION`), and seccomp by `PR_GET_SECCOMP`.
//! Never from the kernel version.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// What the machine can confine, as `toolgate sandbox status` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Support {
    /// Commands can be confined here.
    pub available: bool,
    /// A confined command's writes can be staged (an overlay mounted in a
    /// user namespace) and judged before they land. Without it mode `auto`
    /// asks as `default` does.
    pub staging: bool,
    /// The mechanisms in use, e.g. `bubblewrap 0.8.0 + landlock ABI 7 + seccomp`.
    pub mechanism: String,
    /// What the filesystem view is, in words.
    pub filesystem: String,
    /// What the network is, in words.
    pub network: String,
    /// Why something is missing (empty when everything is there).
    pub reasons: Vec<String>,
    /// The bubblewrap executable that worked.
    #[serde(skip)]
    pub bwrap: Option<PathBuf>,
    /// The kernel's Landlock ABI, when Landlock is enabled.
    #[serde(skip)]
    pub landlock_abi: Option<u32>,
    /// The kernel offers seccomp filters.
    #[serde(skip)]
    pub seccomp: bool,
}

impl Support {
    /// A machine where nothing can be confined, for the reason given (a
    /// non-Linux build, or the caller's own reason).
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Support {
            available: false,
            staging: false,
            mechanism: "none".into(),
            filesystem: "unconfined".into(),
            network: "unconfined".into(),
            reasons: vec![reason.into()],
            bwrap: None,
            landlock_abi: None,
            seccomp: false,
        }
    }
}

/// The kernel's Landlock ABI version, or `None` when Landlock is not built in
/// or not enabled.
pub fn landlock_abi() -> Option<u32> {
    // SAFETY: with a null attribute, size 0 and the VERSION flag, the call
    // only returns the ABI version (or an error); it touches no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    u32::try_from(v).ok().filter(|v| *v > 0)
}

fn find_bwrap() -> Option<PathBuf> {
    // The system's own first: a `bwrap` earlier in PATH (say, in a
    // directory of the location) must not be the one that confines.
    ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| is_executable(p))
        .or_else(|| {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .filter(|d| d.is_absolute())
                .map(|d| d.join("bwrap"))
                .find(|p| is_executable(p))
        })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn bwrap_version(bwrap: &Path) -> String {
    Command::new(bwrap)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "bubblewrap".into())
}

/// Runs bubblewrap once with every namespace a confined command gets.
fn try_bwrap(bwrap: &Path) -> Result<(), String> {
    let out = Command::new(bwrap)
        .args(crate::sandbox_spec::NAMESPACE_ARGS)
        .arg("--unshare-net")
        .args([
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--",
            "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bwrap.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} failed to create the sandbox namespaces ({}): {}",
            bwrap.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn probe() -> Support {
    let mut reasons = Vec::new();
    let bwrap = match find_bwrap() {
        None => {
            reasons.push(
                "bubblewrap (`bwrap`) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
                    .to_string(),
            );
            None
        }
        Some(b) => match try_bwrap(&b) {
            Ok(()) => Some(b),
            Err(e) => {
                reasons.push(e);
                None
            }
        },
    };
    let seccomp = crate::seccomp::available();
    if !seccomp {
        reasons.push("the kernel offers no seccomp filters".into());
    }
    let landlock = landlock_abi();
    if landlock.is_none() {
        reasons.push(
            "Landlock is not enabled in this kernel (the namespaces still confine; Landlock is the second wall)"
                .into(),
        );
    }
    let available = bwrap.is_some() && seccomp;
    let staging = match &bwrap {
        Some(b) => match crate::stage::probe(b) {
            Ok(()) => true,
            Err(e) => {
                reasons.push(format!(
                    "writes cannot be staged ({e}); mode `auto` asks as `default` does"
                ));
                false
            }
        },
        None => false,
    };
    let mechanism = match &bwrap {
        Some(b) => {
            let mut m = bwrap_version(b);
            if let Some(abi) = landlock {
                m.push_str(&format!(" + landlock ABI {abi}"));
            }
            if seccomp {
                m.push_str(" + seccomp");
            }
            m
        }
        None => "none".into(),
    };
    let (filesystem, network) = if available {
        (
            "the system read-only; the home directory empty but for toolchains and caches; credential files and host sockets masked; writes to the location staged and judged before they land".into(),
            "none but a proxy to the hosts the call's allowed requests named and [sandbox] allow_domains".into(),
        )
    } else {
        ("unconfined".into(), "unconfined".into())
    };
    Support {
        available,
        staging,
        mechanism,
        filesystem,
        network,
        reasons,
        bwrap,
        landlock_abi: landlock,
        seccomp,
    }
}

/// The machine's support, probed once per process.
pub fn detect() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(probe).clone()
}

/// What [`detect_cached`] keeps between processes: the result of
/// bubblewrap's trial run, and everything it depends on that is cheap to
/// read again (the executable's path, size and modification time, the user,
/// the boot, the Landlock ABI, seccomp).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CacheKey {
    bwrap: PathBuf,
    size: u64,
    mtime_ns: i128,
    euid: u32,
    boot_id: String,
    landlock_abi: Option<u32>,
    seccomp: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CacheEntry {
    key: CacheKey,
    available: bool,
    staging: bool,
    mechanism: String,
    filesystem: String,
    network: String,
    reasons: Vec<String>,
}

fn cache_key() -> Option<CacheKey> {
    use std::os::unix::fs::MetadataExt;
    let bwrap = find_bwrap()?;
    let meta = std::fs::metadata(&bwrap).ok()?;
    let mtime_ns = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    Some(CacheKey {
        bwrap,
        size: meta.size(),
        mtime_ns,
        // SAFETY: geteuid has no preconditions and cannot fail.
        euid: unsafe { libc::geteuid() },
        boot_id,
        landlock_abi: landlock_abi(),
        seccomp: crate::seccomp::available(),
    })
}

/// [`detect`] for short-lived processes that only need to know (`toolgate
/// check`): the result of bubblewrap's trial run is kept in `cache` (a file
/// in the caller's data directory) and reused while the bubblewrap
/// executable (path, size, modification time), the user, the boot, the
/// Landlock ABI and seccomp are unchanged, so no process is spawned. It
/// tells; it confines nothing. A process that runs commands confined may
/// trust a cached "available" (were it wrong, bubblewrap fails and nothing
/// runs), but must probe again with [`detect`] before acting on a cached
/// "not available", which would run commands unconfined. A cache that
/// cannot be read or written is ignored.
pub fn detect_cached(cache: &Path) -> Support {
    let Some(key) = cache_key() else {
        // No bubblewrap: nothing to spawn, so nothing worth caching.
        return detect();
    };
    let hit = std::fs::read(cache)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<CacheEntry>(&bytes).ok())
        .filter(|entry| entry.key == key);
    if let Some(entry) = hit {
        return Support {
            available: entry.available,
            staging: entry.staging,
            mechanism: entry.mechanism,
            filesystem: entry.filesystem,
            network: entry.network,
            reasons: entry.reasons,
            bwrap: entry.available.then(|| key.bwrap.clone()),
            landlock_abi: key.landlock_abi,
            seccomp: key.seccomp,
        };
    }
    let support = detect();
    let entry = CacheEntry {
        key,
        available: support.available,
        staging: support.staging,
        mechanism: support.mechanism.clone(),
        filesystem: support.filesystem.clone(),
        network: support.network.clone(),
        reasons: support.reasons.clone(),
    };
    if let Err(e) = write_cache(cache, &entry) {
        tracing::debug!("sandbox detection not cached in {}: {e}", cache.display());
    }
    support
}

/// Writes the cache whole or not at all (a temporary file renamed over it).
fn write_cache(cache: &Path, entry: &CacheEntry) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    let tmp = cache.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, cache).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_detection_agrees_with_a_fresh_probe_and_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("sandbox-support.json");
        let fresh = detect();
        let first = detect_cached(&cache);
        assert_eq!(first.available, fresh.available);
        if cache_key().is_none() {
            assert!(!cache.exists(), "nothing is cached without bubblewrap");
            return;
        }
        assert!(cache.exists(), "the trial run's result is kept");
        // A cache whose key no longer matches (another bubblewrap) is
        // probed again and rewritten, not believed.
        let mut entry: CacheEntry =
            serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();
        entry.key.size += 1;
        entry.available = !fresh.available;
        std::fs::write(&cache, serde_json::to_vec(&entry).unwrap()).unwrap();
        assert_eq!(detect_cached(&cache).available, fresh.available);
        let again: CacheEntry = serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();
        assert_eq!(Some(again.key.clone()), cache_key());
        // A matching entry is believed as it is: no trial run.
        let mut entry = again;
        entry.reasons = vec!["from the cache".into()];
        std::fs::write(&cache, serde_json::to_vec(&entry).unwrap()).unwrap();
        assert_eq!(
            detect_cached(&cache).reasons,
            vec!["from the cache".to_string()]
        );
        // A broken cache is ignored.
        std::fs::write(&cache, b"{not json").unwrap();
        assert_eq!(detect_cached(&cache).available, fresh.available);
    }
}
