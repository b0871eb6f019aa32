//! Programs other than git that load executable settings from the working
//! tree, so that a command people take for a read (`cargo --version`,
//! `yarn --version`, `npm ls`, `make -n`, `python -m pip list`) runs what the
//! repository says.
//!
//! Each function takes the effective directory of the command (absolute),
//! looks where the program looks, and answers `Some(reason)` when the
//! settings found may run a program or code of the repository, `None` when
//! they are known not to. Allowlists where the format has keys; a file that
//! cannot be read or parsed is `Some` (fail closed). None of them runs the
//! program.

use std::path::{Path, PathBuf};

/// Settings files larger than this are not read (fail closed).
const MAX_BYTES: u64 = 1 << 20;

/// Reads a settings file: `Ok(None)` when there is none.
fn read(path: &Path) -> Result<Option<String>, String> {
    // Never waits on a FIFO or a device planted at the name.
    match toolgate_core::small_file::read_text(path, MAX_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: cannot read ({e})", path.display())),
    }
}

/// `dir` and its ancestors, nearest first.
fn upward(dir: &Path) -> impl Iterator<Item = &Path> {
    dir.ancestors()
}

fn at(path: &Path, line: usize) -> String {
    format!("{}:{line}", path.display())
}

/// rustup: `rust-toolchain.toml` or `rust-toolchain`, nearest to `dir`.
/// A `path` toolchain (a directory of binaries, in the repository or reached
/// through `/proc/self/cwd`) makes `cargo`, `rustc` and every proxy run it;
/// a legacy file naming anything but a plain toolchain name is treated the
/// same. `channel`, `components`, `targets` and `profile` only pick (and may
/// download) official toolchains.
pub fn rustup_runs_repo_code(dir: &Path) -> Option<String> {
    for d in upward(dir) {
        let mut found = false;
        // Both names are judged when both exist: which one wins has changed
        // between rustup versions.
        for name in ["rust-toolchain", "rust-toolchain.toml"] {
            let path = d.join(name);
            let text = match read(&path) {
                Ok(Some(t)) => t,
                Ok(None) => continue,
                Err(e) => return Some(e),
            };
            found = true;
            if let Some(why) = judge_rust_toolchain(&path, name, &text) {
                return Some(why);
            }
        }
        if found {
            // rustup stops at the nearest directory holding one.
            return None;
        }
    }
    None
}

fn judge_rust_toolchain(path: &Path, name: &str, text: &str) -> Option<String> {
    let trimmed = text.trim();
    if name == "rust-toolchain" && !trimmed.contains('\n') && !trimmed.contains('=') {
        let plain = !trimmed.is_empty()
            && trimmed
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        return (!plain).then(|| {
            format!(
                "{}: the toolchain is not a plain name (rustup may run it from a path)",
                at(path, 1)
            )
        });
    }
    let value: toml::Table = match toml::from_str(text) {
        Ok(v) => v,
        Err(e) => return Some(format!("{}: cannot parse ({e})", path.display())),
    };
    for (k, v) in &value {
        if k != "toolchain" {
            return Some(format!("{}: unknown key {k}", path.display()));
        }
        let Some(t) = v.as_table() else {
            return Some(format!("{}: toolchain is not a table", path.display()));
        };
        for key in t.keys() {
            if !["channel", "components", "targets", "profile"].contains(&key.as_str()) {
                return Some(format!(
                    "{}: toolchain.{key} {}",
                    path.display(),
                    if key == "path" {
                        "makes cargo and rustc run binaries from that directory"
                    } else {
                        "is not a key known to run nothing"
                    }
                ));
            }
        }
        if let Some(c) = t.get("channel").and_then(|c| c.as_str())
            && (c.contains('/') || c.contains('\\'))
        {
            return Some(format!("{}: channel is a path", path.display()));
        }
    }
    None
}

/// Cargo config keys known to run nothing (dotted, `*` for one segment).
const CARGO_SAFE: &[&str] = &[
    "alias.*",
    "build.jobs",
    "build.target",
    "build.target-dir",
    "build.incremental",
    "build.pipelining",
    "term.*",
    "net.retry",
    "net.offline",
    "http.timeout",
    "http.low-speed-limit",
    "http.multiplexing",
    "http.check-revoke",
    "http.debug",
    "registry.default",
    "registries.*.index",
    "registries.*.protocol",
    "source.*.replace-with",
    "source.*.registry",
    "source.*.directory",
    "source.*.local-registry",
    "source.*.git",
    "source.*.branch",
    "source.*.tag",
    "source.*.rev",
    "cargo-new.vcs",
    "future-incompat-report.frequency",
    "profile.*.opt-level",
    "profile.*.debug",
    "profile.*.debug-assertions",
    "profile.*.overflow-checks",
    "profile.*.lto",
    "profile.*.panic",
    "profile.*.incremental",
    "profile.*.codegen-units",
    "profile.*.strip",
    "profile.*.split-debuginfo",
    "profile.*.inherits",
];

fn cargo_key_safe(key: &[&str]) -> bool {
    CARGO_SAFE.iter().any(|p| {
        let parts: Vec<&str> = p.split('.').collect();
        if parts.last() == Some(&"*") && parts.len() == 2 {
            // `alias.*`, `term.*`: any key under the table.
            return key.first() == Some(&parts[0]);
        }
        parts.len() == key.len() && parts.iter().zip(key).all(|(p, k)| *p == "*" || p == k)
    })
}

fn flatten<'a>(prefix: &mut Vec<&'a str>, v: &'a toml::Value, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) if !(prefix.len() == 1 && prefix[0] == "alias") => {
            for (k, v) in t {
                prefix.push(k);
                flatten(prefix, v, out);
                prefix.pop();
            }
        }
        _ => {
            if !cargo_key_safe(prefix) {
                out.push(prefix.join("."));
            }
        }
    }
}

/// cargo: `.cargo/config.toml` and `.cargo/config` in `dir` and every
/// ancestor (cargo merges them all). Keys outside an allowlist —
/// `build.rustc`, `build.rustc-wrapper`, `build.rustdoc`, `target.*.runner`,
/// `target.*.linker`, `*.rustflags` (`-C linker=`), `[env]`,
/// `credential-provider`, `include`… — can run programs even for
/// `cargo metadata` or `cargo tree` (cargo runs `rustc -vV`).
pub fn cargo_runs_repo_code(dir: &Path) -> Option<String> {
    for d in upward(dir) {
        for name in ["config.toml", "config"] {
            let path = d.join(".cargo").join(name);
            let text = match read(&path) {
                Ok(Some(t)) => t,
                Ok(None) => continue,
                Err(e) => return Some(e),
            };
            let table: toml::Table = match toml::from_str(&text) {
                Ok(t) => t,
                Err(e) => return Some(format!("{}: cannot parse ({e})", path.display())),
            };
            let mut bad = Vec::new();
            for (k, v) in &table {
                flatten(&mut vec![k.as_str()], v, &mut bad);
            }
            if let Some(first) = bad.first() {
                return Some(format!(
                    "{}: {first} is not a cargo setting known to run nothing",
                    path.display()
                ));
            }
        }
    }
    None
}

/// `.npmrc` keys known to run nothing; also every `//host/:…` (per-registry
/// auth, a credential question, not a program) and `@scope:registry`.
const NPM_SAFE: &[&str] = &[
    "registry",
    "save-exact",
    "save-prefix",
    "save",
    "engine-strict",
    "fund",
    "audit",
    "audit-level",
    "package-lock",
    "package-lock-only",
    "legacy-peer-deps",
    "strict-peer-deps",
    "loglevel",
    "progress",
    "color",
    "lockfile-version",
    "update-notifier",
    "ignore-scripts",
    "always-auth",
    "strict-ssl",
    "fetch-retries",
    "fetch-timeout",
    "prefer-offline",
    "prefer-online",
    "offline",
    "install-links",
    "omit",
    "include",
    "workspaces-update",
    "auto-install-peers",
    "shamefully-hoist",
    "strict-peer-dependencies",
    "node-linker",
    "public-hoist-pattern",
    "hoist-pattern",
    "link-workspace-packages",
    "prefer-workspace-packages",
    "resolution-mode",
    "dedupe-peer-dependents",
    "use-lockfile-v6",
    "manage-package-manager-versions",
];

/// npm and pnpm: the project's `.npmrc` (in the nearest ancestor holding
/// `package.json` or `node_modules`, npm's local prefix). Keys outside an
/// allowlist — `script-shell`, `shell`, `editor` (`npm config edit`),
/// `browser`/`viewer` (`npm docs`, `npm help`), `node-options`
/// (`--require` in every node npm starts), `git`, `userconfig`/`globalconfig`
/// (more config), `init-module`, `onload-script`… — may run programs.
pub fn npm_runs_repo_code(dir: &Path) -> Option<String> {
    let root = upward(dir)
        .find(|d| d.join("package.json").exists() || d.join("node_modules").exists())
        .unwrap_or(dir);
    let path = root.join(".npmrc");
    let text = match read(&path) {
        Ok(Some(t)) => t,
        Ok(None) => return None,
        Err(e) => return Some(e),
    };
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.starts_with('[') {
            return Some(format!("{}: sections are not understood", at(&path, i + 1)));
        }
        let key = line.split('=').next().unwrap_or("").trim();
        let key = key.trim_end_matches("[]");
        let safe = key.starts_with("//")
            || (key.starts_with('@') && key.ends_with(":registry"))
            || NPM_SAFE.contains(&key);
        if !safe {
            return Some(format!(
                "{}: {key} is not an npm setting known to run nothing",
                at(&path, i + 1)
            ));
        }
    }
    None
}

/// `.yarnrc.yml` (Yarn 2+) top-level keys known to run nothing.
const YARN_BERRY_SAFE: &[&str] = &[
    "nodeLinker",
    "npmRegistryServer",
    "npmScopes",
    "npmAlwaysAuth",
    "npmAuthToken",
    "npmAuthIdent",
    "enableGlobalCache",
    "enableTelemetry",
    "enableImmutableInstalls",
    "enableProgressBars",
    "enableColors",
    "enableScripts",
    "enableStrictSsl",
    "compressionLevel",
    "checksumBehavior",
    "defaultSemverRangePrefix",
    "pnpMode",
    "nmMode",
    "nmHoistingLimits",
    "logFilters",
    "networkConcurrency",
    "httpTimeout",
    "httpRetry",
    "preferInteractive",
    "supportedArchitectures",
    "packageExtensions",
    "cacheFolder",
    "globalFolder",
    "enableHardenedMode",
    "approvedGitRepositories",
];

/// `.yarnrc` (Yarn 1) keys known to run nothing.
const YARN_CLASSIC_SAFE: &[&str] = &[
    "registry",
    "save-prefix",
    "network-timeout",
    "disable-self-update-check",
    "lastUpdateCheck",
    "ignore-engines",
    "strict-ssl",
    "version-tag-prefix",
    "version-git-message",
    "email",
    "username",
];

/// yarn: `.yarnrc.yml` (Yarn 2+) and `.yarnrc` (Yarn 1) in `dir` and its
/// ancestors. `yarnPath` / `yarn-path` make every yarn command, even
/// `yarn --version`, run that JavaScript file; `plugins` load JavaScript;
/// anything outside the allowlists is treated the same.
pub fn yarn_runs_repo_code(dir: &Path) -> Option<String> {
    for d in upward(dir) {
        let path = d.join(".yarnrc.yml");
        match read(&path) {
            Ok(Some(text)) => {
                for (i, line) in text.lines().enumerate() {
                    if line.trim().is_empty()
                        || line.trim_start().starts_with('#')
                        || line.starts_with([' ', '\t'])
                        || line.starts_with("- ")
                        || line == "---"
                    {
                        continue;
                    }
                    let Some((key, _)) = line.split_once(':') else {
                        return Some(format!("{}: not understood", at(&path, i + 1)));
                    };
                    let key = key.trim().trim_matches(['"', '\'']);
                    if !YARN_BERRY_SAFE.contains(&key) {
                        return Some(format!(
                            "{}: {key} {}",
                            at(&path, i + 1),
                            if key == "yarnPath" {
                                "makes every yarn command run that file"
                            } else {
                                "is not a yarn setting known to run nothing"
                            }
                        ));
                    }
                }
            }
            Ok(None) => {}
            Err(e) => return Some(e),
        }
        let path = d.join(".yarnrc");
        match read(&path) {
            Ok(Some(text)) => {
                for (i, line) in text.lines().enumerate() {
                    let line = line.trim();
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    let key = line
                        .split(|c: char| c.is_whitespace())
                        .next()
                        .unwrap_or("")
                        .trim_matches('"');
                    let safe = YARN_CLASSIC_SAFE.contains(&key)
                        || (key.starts_with('@') && key.ends_with(":registry"));
                    if !safe {
                        return Some(format!(
                            "{}: {key} is not a yarn setting known to run nothing",
                            at(&path, i + 1)
                        ));
                    }
                }
            }
            Ok(None) => {}
            Err(e) => return Some(e),
        }
    }
    None
}

/// go: the nearest `go.work` and `go.mod`. A `toolchain` directive (and,
/// with the default `GOTOOLCHAIN=auto`, a `go` line newer than the installed
/// go) makes any go command, even `go version` and `go env`, download and
/// run another toolchain. The installed version is read from `GOROOT/VERSION`
/// of the `go` first on `path_var` (no program runs); unknown → `Some`.
pub fn go_runs_other_toolchain(dir: &Path, path_var: Option<&str>) -> Option<String> {
    let installed = installed_go(path_var);
    for name in ["go.work", "go.mod"] {
        let Some(path) = upward(dir).map(|d| d.join(name)).find(|p| p.exists()) else {
            continue;
        };
        let text = match read(&path) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(e) => return Some(e),
        };
        for (i, line) in text.lines().enumerate() {
            let mut words = line.split_whitespace();
            match (words.next(), words.next()) {
                (Some("toolchain"), Some(t)) if t != "default" => {
                    return Some(format!(
                        "{}: toolchain {t}: go may download and run another toolchain",
                        at(&path, i + 1)
                    ));
                }
                (Some("go"), Some(v)) => {
                    let newer = match &installed {
                        Some(have) => version_newer(v, have),
                        None => true,
                    };
                    if newer {
                        return Some(format!(
                            "{}: go {v} is newer than the installed go ({}): go may download and run another toolchain",
                            at(&path, i + 1),
                            installed.as_deref().unwrap_or("unknown")
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// `1.22.1` from `GOROOT/VERSION` (`go1.22.1 …`) of the `go` on `PATH`.
fn installed_go(path_var: Option<&str>) -> Option<String> {
    let go = path_var?
        .split(':')
        .map(|d| PathBuf::from(d).join("go"))
        .find(|p| p.is_file())?;
    let real = std::fs::canonicalize(go).ok()?;
    let root = real.parent()?.parent()?;
    let text = std::fs::read_to_string(root.join("VERSION")).ok()?;
    let first = text.lines().next()?.trim();
    Some(first.strip_prefix("go")?.to_string())
}

/// Whether go version `want` (`1.23`, `1.23.4`, `1.24rc1`) is newer than `have`.
fn version_newer(want: &str, have: &str) -> bool {
    let nums = |v: &str| -> Vec<u64> {
        v.split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .take(3)
            .map(|s| s.parse().unwrap_or(u64::MAX))
            .collect()
    };
    let (w, h) = (nums(want), nums(have));
    for i in 0..3 {
        let (a, b) = (
            w.get(i).copied().unwrap_or(0),
            h.get(i).copied().unwrap_or(0),
        );
        if a != b {
            return a > b;
        }
    }
    // Same numbers: a pre-release of the installed one is not newer.
    false
}

/// make: `make -n`, `-q`, `-p` and `--dry-run` still expand the makefile, so
/// `$(shell …)` runs, and recipe lines with `+` or `$(MAKE)` run, and included
/// makefiles may be remade. Any makefile in `dir` (GNU make's names) means
/// make runs repository code for every invocation.
pub fn make_runs_repo_code(dir: &Path) -> Option<String> {
    ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.exists())
        .map(|p| {
            format!(
                "{}: make evaluates the makefile (including $(shell …)) even with -n",
                p.display()
            )
        })
}

/// Bundler: every command that loads the bundle (`bundle list`, `show`,
/// `exec`, `check`…) evaluates the `Gemfile` (Ruby code) found from `dir`
/// upward, or the one `.bundle/config` names with `BUNDLE_GEMFILE`.
pub fn bundler_runs_repo_code(dir: &Path) -> Option<String> {
    for d in upward(dir) {
        for name in ["Gemfile", "gems.rb", ".bundle/config"] {
            let p = d.join(name);
            if p.exists() {
                return Some(format!(
                    "{}: bundler evaluates the Gemfile, which is Ruby code",
                    p.display()
                ));
            }
        }
    }
    None
}

/// `python -m MODULE` puts the current directory first on `sys.path`, so a
/// `MODULE.py` or `MODULE/` package in `dir` runs instead of the installed
/// module (`python -m pip list`, `python -m pytest --version`).
pub fn python_module_shadowed(dir: &Path, module: &str) -> Option<String> {
    let top = module.split('.').next().unwrap_or(module);
    if top.is_empty() || top.contains('/') {
        return Some(format!("module name {module:?} is not understood"));
    }
    [format!("{top}.py"), top.to_string(), format!("{top}.pth")]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.exists())
        .map(|p| format!("{}: python -m {module} runs this instead", p.display()))
}

/// Version files read by shims (pyenv `.python-version`, asdf/mise
/// `.tool-versions`, rbenv `.ruby-version`, nodenv `.node-version`) from `dir`
/// upward: a version that is not a plain name (a path, `..`, asdf's `path:`
/// or `ref:` which builds from source) makes the shim run a program the
/// repository chose.
pub fn version_file_runs_repo_code(dir: &Path) -> Option<String> {
    for d in upward(dir) {
        for name in [
            ".python-version",
            ".tool-versions",
            ".ruby-version",
            ".node-version",
        ] {
            let path = d.join(name);
            let text = match read(&path) {
                Ok(Some(t)) => t,
                Ok(None) => continue,
                Err(e) => return Some(e),
            };
            for (i, line) in text.lines().enumerate() {
                let line = line.split('#').next().unwrap_or("").trim();
                let words: Vec<&str> = line.split_whitespace().collect();
                let versions = if name == ".tool-versions" {
                    words.get(1..).unwrap_or(&[])
                } else {
                    &words[..]
                };
                for v in versions {
                    let plain = v
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b))
                        && !v.contains("..");
                    if !plain {
                        return Some(format!(
                            "{}: version {v} is not a plain name",
                            at(&path, i + 1)
                        ));
                    }
                }
            }
        }
    }
    None
}

/// Maven: `.mvn/jvm.config` (JVM options such as `-javaagent:`, applied to
/// every `mvn` run, even `mvn -v`), `.mvn/extensions.xml` (jars loaded at
/// start) and `.mvn/maven.config` (more options), in the nearest ancestor
/// holding `.mvn`.
pub fn maven_runs_repo_code(dir: &Path) -> Option<String> {
    let d = upward(dir).find(|d| d.join(".mvn").is_dir())?;
    for name in ["jvm.config", "extensions.xml", "maven.config"] {
        let p = d.join(".mvn").join(name);
        match read(&p) {
            Ok(Some(t)) if !t.trim().is_empty() => {
                return Some(format!(
                    "{}: maven loads it on every run (options, agents, extensions)",
                    p.display()
                ));
            }
            Ok(_) => {}
            Err(e) => return Some(e),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let p = std::fs::canonicalize(t.path()).unwrap();
        (t, p)
    }

    fn put(dir: &Path, name: &str, text: &str) {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn rust_toolchain_path_runs_repo_binaries() {
        let (_t, d) = ws();
        put(
            &d,
            "rust-toolchain.toml",
            "[toolchain]\npath = \"/proc/self/cwd/tc\"\n",
        );
        std::fs::create_dir_all(d.join("src")).unwrap();
        let why = rustup_runs_repo_code(&d.join("src")).unwrap();
        assert!(why.contains("toolchain.path"), "{why}");
    }

    #[test]
    fn rust_toolchain_legacy_path_and_bad_toml() {
        let (_t, d) = ws();
        put(&d, "rust-toolchain", "./my-toolchain\n");
        assert!(rustup_runs_repo_code(&d).is_some());
        put(&d, "rust-toolchain", "[toolchain\n");
        assert!(rustup_runs_repo_code(&d).is_some());
    }

    #[test]
    fn rust_toolchain_channel_is_safe() {
        let (_t, d) = ws();
        put(
            &d,
            "rust-toolchain.toml",
            "[toolchain]\nchannel = \"1.85.0\"\ncomponents = [\"clippy\"]\nprofile = \"minimal\"\n",
        );
        assert_eq!(rustup_runs_repo_code(&d), None);
        put(&d, "rust-toolchain.toml", "");
        put(&d, "rust-toolchain", "nightly-2025-01-01\n");
        assert_eq!(rustup_runs_repo_code(&d), None);
    }

    #[test]
    fn cargo_config_wrapper_runner_linker_and_env() {
        for text in [
            "[build]\nrustc-wrapper = \"./w.sh\"\n",
            "[build]\nrustc = \"./r\"\n",
            "[target.x86_64-unknown-linux-gnu]\nrunner = \"./x\"\n",
            "[target.'cfg(unix)']\nlinker = \"./x\"\n",
            "[build]\nrustflags = [\"-C\", \"linker=./x\"]\n",
            "[env]\nRUSTC_WRAPPER = \"./x\"\n",
            "[registry]\ncredential-provider = \"./x\"\n",
            "include = \"other.toml\"\n",
            "[build\n",
        ] {
            let (_t, d) = ws();
            put(&d, ".cargo/config.toml", text);
            std::fs::create_dir_all(d.join("crates/a")).unwrap();
            assert!(
                cargo_runs_repo_code(&d.join("crates/a")).is_some(),
                "{text}"
            );
        }
    }

    #[test]
    fn cargo_config_aliases_and_target_dir_are_safe() {
        let (_t, d) = ws();
        put(
            &d,
            ".cargo/config.toml",
            "[alias]\nxtask = \"run -p xtask --\"\n[build]\ntarget-dir = \"t\"\njobs = 2\n[term]\ncolor = \"always\"\n[profile.release]\nlto = true\n",
        );
        assert_eq!(cargo_runs_repo_code(&d), None);
    }

    #[test]
    fn npmrc_script_shell_editor_node_options() {
        for line in [
            "script-shell=./evil.sh",
            "editor=./x",
            "node-options=--require ./x.js",
            "git=./fake-git",
            "browser=./x",
            "userconfig=./more",
            "[section]",
        ] {
            let (_t, d) = ws();
            put(&d, "package.json", "{}");
            put(
                &d,
                ".npmrc",
                &format!("registry=https://r.example/\n{line}\n"),
            );
            std::fs::create_dir_all(d.join("lib")).unwrap();
            let why = npm_runs_repo_code(&d.join("lib")).unwrap();
            assert!(why.contains(".npmrc:2"), "{line}: {why}");
        }
    }

    #[test]
    fn npmrc_registry_and_auth_are_safe() {
        let (_t, d) = ws();
        put(&d, "package.json", "{}");
        put(
            &d,
            ".npmrc",
            "; c\nregistry=https://r.example/\n@me:registry=https://s.example/\n//r.example/:_authToken=${TOKEN}\nsave-exact=true\n",
        );
        assert_eq!(npm_runs_repo_code(&d), None);
    }

    #[test]
    fn yarn_path_runs_a_file_for_every_command() {
        let (_t, d) = ws();
        put(
            &d,
            ".yarnrc.yml",
            "nodeLinker: node-modules\nyarnPath: .yarn/releases/evil.cjs\n",
        );
        let why = yarn_runs_repo_code(&d).unwrap();
        assert!(
            why.contains("yarnPath") && why.contains(".yarnrc.yml:2"),
            "{why}"
        );
        let (_t, d) = ws();
        put(&d, ".yarnrc.yml", "plugins:\n  - path: x.cjs\n");
        assert!(yarn_runs_repo_code(&d).is_some());
        let (_t, d) = ws();
        put(&d, ".yarnrc", "yarn-path \"./evil.js\"\n");
        assert!(yarn_runs_repo_code(&d).is_some());
    }

    #[test]
    fn yarn_ordinary_settings_are_safe() {
        let (_t, d) = ws();
        put(
            &d,
            ".yarnrc.yml",
            "# c\nnodeLinker: node-modules\nnpmScopes:\n  me:\n    npmRegistryServer: https://x\nenableTelemetry: false\n",
        );
        put(&d, ".yarnrc", "registry \"https://r.example\"\n");
        assert_eq!(yarn_runs_repo_code(&d), None);
    }

    #[test]
    fn go_toolchain_directive_downloads_and_runs() {
        let (_t, d) = ws();
        put(&d, "go.mod", "module x\n\ngo 1.21\n\ntoolchain go1.99.0\n");
        let why = go_runs_other_toolchain(&d, None).unwrap();
        assert!(
            why.contains("go.mod:3") || why.contains("go.mod:5"),
            "{why}"
        );
    }

    #[test]
    fn go_line_compared_with_the_installed_go() {
        let (_t, d) = ws();
        // A fake GOROOT: bin/go and VERSION, found through the PATH given.
        put(&d, "goroot/VERSION", "go1.22.5\ntime x\n");
        put(&d, "goroot/bin/go", "");
        let path = d.join("goroot/bin").display().to_string();
        put(&d, "m/go.mod", "module x\n\ngo 1.21\n");
        assert_eq!(go_runs_other_toolchain(&d.join("m"), Some(&path)), None);
        put(&d, "m/go.mod", "module x\n\ngo 1.23\n");
        assert!(go_runs_other_toolchain(&d.join("m"), Some(&path)).is_some());
        // Installed version unknown: fail closed.
        assert!(go_runs_other_toolchain(&d.join("m"), None).is_some());
        assert!(version_newer("1.22.6", "1.22.5") && !version_newer("1.22", "1.22.5"));
    }

    #[test]
    fn make_dry_run_still_runs_the_makefile() {
        let (_t, d) = ws();
        assert_eq!(make_runs_repo_code(&d), None);
        put(
            &d,
            "Makefile",
            "X := $(shell touch /tmp/m)\nall:\n\t@echo\n",
        );
        assert!(make_runs_repo_code(&d).is_some());
    }

    #[test]
    fn gemfile_is_ruby_code() {
        let (_t, d) = ws();
        assert_eq!(bundler_runs_repo_code(&d), None);
        put(&d, "Gemfile", "system('touch /tmp/m')\n");
        std::fs::create_dir_all(d.join("app")).unwrap();
        assert!(bundler_runs_repo_code(&d.join("app")).is_some());
    }

    #[test]
    fn python_dash_m_shadowed_by_the_working_tree() {
        let (_t, d) = ws();
        assert_eq!(python_module_shadowed(&d, "pip"), None);
        put(&d, "pip.py", "import os\n");
        assert!(python_module_shadowed(&d, "pip").is_some());
        put(&d, "pytest/__init__.py", "");
        assert!(python_module_shadowed(&d, "pytest").is_some());
        assert!(python_module_shadowed(&d, "json.tool").is_none());
    }

    #[test]
    fn version_files_with_paths() {
        let (_t, d) = ws();
        put(&d, ".python-version", "3.12.1\n");
        put(
            &d,
            ".tool-versions",
            "nodejs 20.11.0\npython 3.12.1 system\n",
        );
        assert_eq!(version_file_runs_repo_code(&d), None);
        put(&d, ".python-version", "../../../tmp/evil\n");
        assert!(version_file_runs_repo_code(&d).is_some());
        put(&d, ".python-version", "3.12.1\n");
        put(&d, ".tool-versions", "nodejs path:/tmp/x\n");
        assert!(version_file_runs_repo_code(&d).is_some());
        put(&d, ".tool-versions", "ruby ref:v3.3.0\n");
        assert!(version_file_runs_repo_code(&d).is_some());
    }

    #[test]
    fn maven_jvm_config_agent() {
        let (_t, d) = ws();
        std::fs::create_dir_all(d.join(".mvn")).unwrap();
        assert_eq!(maven_runs_repo_code(&d), None);
        put(&d, ".mvn/jvm.config", "-javaagent:./x.jar\n");
        assert!(maven_runs_repo_code(&d).is_some());
    }
}
