//! The command table: what each known command without a read spec is, as
//! data. A program that has a spec (`specs/*.toml`, see [`super::read_spec`])
//! is described by its spec alone, a test keeps it so.
//!
//! One row per command (or family of aliases): its risk when nothing else
//! applies, whether its operands are paths, the flags that raise it, its
//! subcommands, and at most one named check for what a flag list cannot say
//! (a `sed` script, an `awk` program, SQL text…). Commands not in the table are
//! `execute`. Wrappers (`env`, `timeout`, `sudo`…) have their own table because
//! the shell analyser unwraps them before classifying.

use std::sync::LazyLock;

use toolgate_core::Risk::{self, *};

/// How a flag is recognised in an argument list (before `--`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum FlagMatch<'a> {
    /// The token itself, or `token=value`.
    Exact(&'a str),
    /// Any token starting with this text (`-fprint` matches `-fprint0`, `-i.bak`).
    Prefix(&'a str),
    /// A short option letter, alone or in a cluster (`-rf` holds `r` and `f`).
    Short(char),
}

/// A flag that raises the command's risk.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flag {
    pub(crate) at: FlagMatch<'static>,
    pub(crate) risk: Risk,
    pub(crate) why: &'static str,
}

/// Checks that need more than a flag list; implemented in `special.rs`. A
/// spec names one in kebab case (`check = "find-actions"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Check {
    /// `find -exec/-execdir/-ok/-delete/-fprint…`; `-exec` commands are classified too.
    FindActions,
    /// `fd -x/-X`: the command after the flag is classified too.
    FdExec,
    /// `sed` script commands `e`, `w`, `s///e`, `s///w`.
    SedScript,
    /// `awk` programs calling `system()`, pipes, `getline` or redirects.
    AwkProgram,
    /// SQL text with `DROP` or `TRUNCATE`.
    Sql,
    /// `git push` refspecs `+ref` (force) and `:ref` (delete).
    GitPushRefspec,
    /// `git checkout -- …`, `git checkout .`: discards work.
    GitCheckoutDiscard,
    /// `git restore` without `--staged` discards work.
    GitRestore,
    /// `git stash drop/clear` destroy, `list/show` read.
    GitStash,
    /// `git branch`: listing reads, `-D` destroys, anything else writes.
    GitBranch,
    /// `git remote`: listing reads, `add/remove/set-url` write, `show/update` talk to it.
    GitRemote,
    /// `git rebase -x CMD`, `git submodule foreach CMD` run shell code;
    /// `git bisect run CMD ARGS` runs a command.
    GitRunsCode,
    /// `git config`: reading keys reads, setting them can run code later.
    GitConfig,
    /// `tar` modes: `t` reads, `c/x/r/u/A` write.
    TarMode,
    /// `uniq IN OUT`, `xxd IN OUT` write OUT.
    UniqOutput,
    /// Bare `set` prints every variable; `set -e` does not.
    SetBare,
    /// `export -p`, bare `export`/`declare`/`typeset` print the environment.
    ExportPrint,
    /// `date -s` / `hostname NAME` change the system.
    SetsSystem,
    /// Recursive content readers (`grep -r`, `rg --hidden`, `ag -u`): they read
    /// every file below a directory, secrets included.
    RecursiveRead,
    /// `crontab -r` removes every job.
    Crontab,
    /// `git reflog expire/delete` drop the history that undoes mistakes.
    GitReflog,
    /// `ps e` (BSD option) prints every process's environment.
    PsEnv,
}

/// A subcommand row (`git push`, `npm run`…).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sub {
    pub(crate) names: &'static [&'static str],
    pub(crate) risk: Risk,
    pub(crate) flags: &'static [Flag],
    pub(crate) check: Option<Check>,
}

/// A command row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cmd {
    pub(crate) names: &'static [&'static str],
    /// Risk with no subcommand, or when the command has no subcommands.
    pub(crate) risk: Risk,
    /// Whether operands are file paths (checked for credentials and escapes).
    pub(crate) paths: bool,
    pub(crate) flags: &'static [Flag],
    pub(crate) check: Option<Check>,
    /// Options before the subcommand that take a separate value (`git -C dir`).
    pub(crate) global_value_opts: &'static [&'static str],
    pub(crate) subs: &'static [Sub],
    /// Risk of a subcommand not in `subs` (an alias or plugin may run anything).
    pub(crate) unknown_sub: Risk,
}

const fn flag(at: FlagMatch<'static>, risk: Risk, why: &'static str) -> Flag {
    Flag { at, risk, why }
}

const fn cmd(names: &'static [&'static str], risk: Risk, paths: bool) -> Cmd {
    Cmd {
        names,
        risk,
        paths,
        flags: &[],
        check: None,
        global_value_opts: &[],
        subs: &[],
        unknown_sub: Execute,
    }
}

const fn with_flags(mut c: Cmd, flags: &'static [Flag]) -> Cmd {
    c.flags = flags;
    c
}

const fn with_check(mut c: Cmd, check: Check) -> Cmd {
    c.check = Some(check);
    c
}

const fn with_subs(
    mut c: Cmd,
    global_value_opts: &'static [&'static str],
    subs: &'static [Sub],
    unknown_sub: Risk,
) -> Cmd {
    c.global_value_opts = global_value_opts;
    c.subs = subs;
    c.unknown_sub = unknown_sub;
    c
}

const fn sub(names: &'static [&'static str], risk: Risk) -> Sub {
    Sub {
        names,
        risk,
        flags: &[],
        check: None,
    }
}

const fn sub_f(names: &'static [&'static str], risk: Risk, flags: &'static [Flag]) -> Sub {
    Sub {
        names,
        risk,
        flags,
        check: None,
    }
}

use FlagMatch::{Exact, Prefix, Short};

const RECURSIVE_PERMS: &[Flag] = &[
    flag(Short('R'), Destructive, "recursive permission change"),
    flag(
        Exact("--recursive"),
        Destructive,
        "recursive permission change",
    ),
];

const YQ_FLAGS: &[Flag] = &[
    flag(Short('i'), Write, "yq -i edits files in place"),
    flag(
        Exact("--inplace"),
        Write,
        "yq --inplace edits files in place",
    ),
];

const PAGER_FLAGS: &[Flag] = &[flag(Exact("--pager"), Execute, "--pager runs a program")];

const MAN_FLAGS: &[Flag] = &[
    flag(Short('P'), Execute, "man -P runs a pager program"),
    flag(Exact("--pager"), Execute, "man --pager runs a program"),
    flag(Short('H'), Execute, "man -H runs a browser"),
    flag(Exact("--html"), Execute, "man --html runs a browser"),
];

const ZIP_FLAGS: &[Flag] = &[
    flag(Prefix("-TT"), Execute, "zip -TT runs a test program"),
    flag(
        Exact("--unzip-command"),
        Execute,
        "zip --unzip-command runs a program",
    ),
];

const CARGO_SUBS: &[Sub] = &[
    sub(
        &[
            "build",
            "b",
            "test",
            "t",
            "run",
            "r",
            "bench",
            "check",
            "c",
            "clippy",
            "doc",
            "d",
            "rustc",
            "rustdoc",
            "miri",
            "nextest",
            "expand",
            "llvm-cov",
            "tarpaulin",
            "metadata",
            "tree",
            "fix",
            "package",
            "udeps",
            "machete",
            "insta",
        ],
        Execute,
    ),
    sub(
        &[
            "fmt",
            "clean",
            "new",
            "init",
            "remove",
            "rm",
            "generate-lockfile",
        ],
        Write,
    ),
    sub(
        &[
            "install",
            "uninstall",
            "publish",
            "fetch",
            "update",
            "search",
            "login",
            "add",
            "yank",
            "owner",
            "vendor",
            "info",
        ],
        Network,
    ),
    sub(
        &[
            "version",
            "help",
            "locate-project",
            "pkgid",
            "verify-project",
            "read-manifest",
        ],
        Read,
    ),
    sub(&["logout"], Credential),
];

const UV_SUBS: &[Sub] = &[
    sub(
        &[
            "pip", "add", "sync", "lock", "tool", "python", "publish", "init", "venv",
        ],
        Network,
    ),
    sub(&["run"], Execute),
    sub(&["remove", "cache"], Write),
    sub(&["version", "help", "tree"], Read),
];

const KUBECTL_SUBS: &[Sub] = &[sub(&["delete", "drain"], Destructive)];

const GH_SUBS: &[Sub] = &[sub(&["auth", "secret"], Credential)];

const AWS_SUBS: &[Sub] = &[sub(&["configure", "sts"], Credential)];

const APT_SUBS: &[Sub] = &[
    sub(
        &[
            "list", "show", "search", "policy", "depends", "rdepends", "showpkg",
        ],
        Read,
    ),
    sub(
        &[
            "install",
            "update",
            "upgrade",
            "full-upgrade",
            "dist-upgrade",
            "download",
            "source",
        ],
        Network,
    ),
    sub(&["remove", "purge", "autoremove"], Destructive),
];

const BREW_SUBS: &[Sub] = &[
    sub(
        &[
            "list", "ls", "info", "search", "deps", "config", "doctor", "--prefix",
        ],
        Read,
    ),
    sub(
        &["install", "update", "upgrade", "fetch", "tap", "reinstall"],
        Network,
    ),
    sub(&["uninstall", "remove", "rm", "cleanup"], Write),
];

const GEM_SUBS: &[Sub] = &[
    sub(&["install", "update", "push", "fetch", "search"], Network),
    sub_f(
        &["list", "info"],
        Read,
        &[
            flag(
                Exact("--remote"),
                Network,
                "`gem list --remote` asks the gem server",
            ),
            flag(Short('r'), Network, "`gem list -r` asks the gem server"),
        ],
    ),
    sub(&["which", "env", "help", "contents"], Read),
    sub(&["uninstall"], Write),
];

const YARN_SUBS: &[Sub] = &[
    sub(
        &[
            "install", "add", "upgrade", "up", "publish", "audit", "outdated", "info", "npm",
            "dlx", "why",
        ],
        Network,
    ),
    sub(&["list", "help", "config", "--version", "versions"], Read),
    sub(&["remove", "init", "link", "unlink"], Write),
    sub(&["run", "test", "start", "exec", "node", "build"], Execute),
];

const SYSTEMCTL_SUBS: &[Sub] = &[sub(
    &["status", "list-units", "show", "is-active", "cat"],
    Read,
)];

/// Every known command. The first row naming a command wins.
pub(crate) static COMMANDS: &[Cmd] = &[
    // Read-only tools, with the flags that make them unsafe.
    cmd(
        &[
            "less",
            "more",
            "look",
            "exa",
            "eza",
            "lsd",
            "dircolors",
            "iconv",
            "zcat",
            "zless",
            "zgrep",
            "bzcat",
            "xzcat",
            "lsattr",
            "getfacl",
            "namei",
            "source-highlight",
            "tokei",
            "cloc",
            "shellcheck",
            "pr",
            "csplit-dry",
            "[[",
            "ldd",
            "nm",
            "objdump",
            "readelf",
            "size",
            "md5",
            "shasum",
            "numfmt",
            "tsort",
            "ptx",
        ],
        Read,
        true,
    ),
    cmd(
        &[
            "whereis",
            "pgrep",
            "tput",
            "clear",
            "cal",
            "who",
            "w",
            "last",
            "hash",
            "read",
            "getopts",
            "let",
            "local",
            "readonly",
            "lscpu",
            "lsblk",
            "lsof",
            "vmstat",
            "iostat",
            "getconf",
            "unalias",
            "shopt-query",
            "factor",
            "bc",
            "dc",
            "command-v",
            "sync",
            "fc-list",
            "lsb_release",
            "sw_vers",
            "mount-list",
            "bg",
            "fg",
            "complete",
            "compgen",
            "pinky",
            "info",
            "apropos",
            "whatis",
        ],
        Read,
        false,
    ),
    with_check(
        cmd(&["declare", "typeset"], Read, false),
        Check::ExportPrint,
    ),
    cmd(&["printenv"], Credential, false),
    // Readers with a flag that writes or runs something.
    with_flags(cmd(&["yq"], Read, true), YQ_FLAGS),
    with_flags(cmd(&["bat", "batcat"], Read, true), PAGER_FLAGS),
    with_flags(cmd(&["man"], Read, false), MAN_FLAGS),
    with_flags(cmd(&["zip"], Write, true), ZIP_FLAGS),
    cmd(&["su", "runuser", "script"], Execute, true),
    with_check(cmd(&["ugrep"], Read, true), Check::RecursiveRead),
    with_check(cmd(&["ag", "ack"], Read, true), Check::RecursiveRead),
    // Writers.
    cmd(
        &[
            "install", "unlink", "patch", "unzip", "gzip", "gunzip", "bzip2", "bunzip2", "xz",
            "unxz", "zstd", "unzstd", "7z", "split", "csplit", "mktemp", "mkfifo", "chgrp-f",
            "rename", "setfacl", "chattr", "git-lfs", "dos2unix", "unix2dos", "pandoc", "convert",
            "ffmpeg",
        ],
        Write,
        true,
    ),
    with_flags(
        cmd(&["chmod", "chown", "chgrp"], Write, true),
        RECURSIVE_PERMS,
    ),
    // Destructive by themselves.
    cmd(
        &[
            "dd",
            "shred",
            "wipefs",
            "truncate",
            "fdisk",
            "sfdisk",
            "parted",
            "gdisk",
            "mkswap",
            "reboot",
            "shutdown",
            "halt",
            "poweroff",
            "srm",
            "blkdiscard",
        ],
        Destructive,
        true,
    ),
    // Network.
    cmd(
        &[
            "curl",
            "wget",
            "ssh",
            "scp",
            "sftp",
            "rsync",
            "nc",
            "ncat",
            "netcat",
            "socat",
            "telnet",
            "ftp",
            "ping",
            "ping6",
            "dig",
            "nslookup",
            "host",
            "whois",
            "traceroute",
            "tracepath",
            "mtr",
            "http",
            "https",
            "xh",
            "aria2c",
            "websocat",
            "lftp",
            "mosh",
            "nmap",
            "rclone",
            "s3cmd",
            "gsutil",
            "gcloud",
            "az",
            "helm",
            "terraform",
            "ansible",
            "ansible-playbook",
            "pulumi",
            "heroku",
            "vercel",
            "netlify",
            "fly",
            "flyctl",
            "wrangler",
        ],
        Network,
        true,
    ),
    with_subs(cmd(&["kubectl"], Network, true), &[], KUBECTL_SUBS, Network),
    with_subs(
        cmd(&["gh"], Network, true),
        &["-R", "--repo"],
        GH_SUBS,
        Network,
    ),
    with_subs(
        cmd(&["aws"], Network, true),
        &["--profile", "--region"],
        AWS_SUBS,
        Network,
    ),
    with_check(
        cmd(
            &["psql", "mysql", "mariadb", "pg_dump", "mysqldump"],
            Network,
            true,
        ),
        Check::Sql,
    ),
    with_check(cmd(&["sqlite3", "duckdb"], Write, true), Check::Sql),
    // Credentials.
    cmd(
        &[
            "ssh-keygen",
            "ssh-add",
            "ssh-agent",
            "ssh-copy-id",
            "gpg",
            "gpg2",
            "pass",
            "op",
            "security",
            "keyring",
            "secret-tool",
            "passwd",
            "chpasswd",
            "vault",
            "age-keygen",
        ],
        Credential,
        true,
    ),
    // Tools with subcommands.
    with_subs(
        cmd(&["yarn"], Network, true),
        &["--cwd"],
        YARN_SUBS,
        Execute,
    ),
    with_subs(
        cmd(&["bun"], Execute, true),
        &[],
        &[sub(&["install", "add", "i", "update", "publish"], Network)],
        Execute,
    ),
    with_subs(
        cmd(&["cargo"], Read, true),
        &["--manifest-path", "-Z", "--config", "--color"],
        CARGO_SUBS,
        Execute,
    ),
    with_subs(cmd(&["uv"], Read, true), &[], UV_SUBS, Execute),
    cmd(&["tldr"], Network, false),
    with_subs(
        cmd(
            &["apt", "apt-get", "dnf", "yum", "pacman", "apk", "zypper"],
            Read,
            true,
        ),
        &[],
        APT_SUBS,
        Execute,
    ),
    with_subs(cmd(&["brew"], Read, true), &[], BREW_SUBS, Execute),
    with_subs(cmd(&["gem"], Read, true), &[], GEM_SUBS, Execute),
    with_subs(
        cmd(&["systemctl", "launchctl", "service"], Execute, true),
        &[],
        SYSTEMCTL_SUBS,
        Execute,
    ),
    with_check(cmd(&["crontab"], Execute, true), Check::Crontab),
    // Executors: interpreters, build and test runners.
    cmd(
        &[
            "python2",
            "nodejs",
            "deno",
            "ruby",
            "perl",
            "php",
            "lua",
            "luajit",
            "Rscript",
            "julia",
            "java",
            "javac",
            "kotlin",
            "scala",
            "swift",
            "make",
            "gmake",
            "cmake",
            "ninja",
            "meson",
            "bazel",
            "bazelisk",
            "buck",
            "gradle",
            "gradlew",
            "mvn",
            "mvnw",
            "ant",
            "npx",
            "pnpx",
            "bunx",
            "pytest",
            "py.test",
            "tox",
            "nox",
            "jest",
            "vitest",
            "mocha",
            "tsc",
            "ts-node",
            "tsx",
            "eslint",
            "prettier",
            "black",
            "ruff",
            "mypy",
            "pyright",
            "rustc",
            "rustup",
            "gcc",
            "g++",
            "cc",
            "c++",
            "clang",
            "clang++",
            "ld",
            "kill",
            "pkill",
            "killall",
            "xdg-open",
            "open",
            "vim",
            "vi",
            "nvim",
            "nano",
            "emacs",
            "code",
            "tmux",
            "screen",
            "at",
            "batch",
            "mount",
            "umount",
            "sh",
            "bash",
            "zsh",
            "dash",
            "ksh",
            "fish",
            "csh",
            "tcsh",
            "alias",
            "shopt",
            "enable",
            "trap",
            "source",
            ".",
            "eval",
            "osascript",
            "pwsh",
            "powershell",
            "groovy",
            "elixir",
            "erl",
            "ghc",
            "runghc",
            "stack",
            "cabal",
            "dotnet",
            "zig",
            "gdb",
            "lldb",
            "strace",
            "ltrace",
            "valgrind",
            "perf",
            "hyperfine",
            "entr",
            "watchexec",
            "expect",
            "pre-commit",
            "husky",
            "just",
            "task",
            "invoke",
            "rake",
            "bundle",
            "composer",
            "poetry",
            "pdm",
            "hatch",
            "conda",
            "mamba",
            "jupyter",
            "ipython",
            "sqlplus",
        ],
        Execute,
        true,
    ),
];

/// A wrapper: runs the command that follows its own options (which its
/// spec in `specs/wrappers.toml` reads).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wrapper {
    pub(crate) names: &'static [&'static str],
    /// Operands before the command (`timeout 5s cmd` has one).
    pub(crate) leading_operands: usize,
    /// `NAME=value` words before the command are assignments (`env A=1 cmd`).
    pub(crate) takes_assignments: bool,
    /// The least risk of anything run through it (`sudo` makes it execute).
    pub(crate) floor: Risk,
    /// With no command left, the wrapper alone has this risk (`env` prints secrets).
    pub(crate) bare: Risk,
}

const fn wrapper(
    names: &'static [&'static str],
    leading_operands: usize,
    floor: Risk,
    bare: Risk,
) -> Wrapper {
    Wrapper {
        names,
        leading_operands,
        takes_assignments: false,
        floor,
        bare,
    }
}

/// Every wrapper the analyser sees through.
pub(crate) static WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["env"],
        leading_operands: 0,
        takes_assignments: true,
        floor: Read,
        bare: Credential,
    },
    wrapper(&["timeout", "gtimeout"], 1, Read, Read),
    wrapper(&["nice"], 0, Read, Read),
    wrapper(&["ionice"], 0, Read, Read),
    wrapper(
        &[
            "nohup",
            "setsid",
            "unbuffer",
            "caffeinate",
            "chronic",
            "coproc",
        ],
        0,
        Read,
        Read,
    ),
    wrapper(&["stdbuf"], 0, Read, Read),
    wrapper(&["time"], 0, Read, Read),
    wrapper(&["command", "builtin"], 0, Read, Read),
    wrapper(&["exec"], 0, Read, Read),
    wrapper(&["xargs", "gxargs"], 0, Read, Read),
    wrapper(&["sudo"], 0, Execute, Execute),
    wrapper(&["doas"], 0, Execute, Execute),
    wrapper(&["watch"], 0, Execute, Execute),
    wrapper(&["flock"], 1, Execute, Execute),
    wrapper(&["taskset"], 1, Read, Read),
    // Multi-call binaries: the applet is the command.
    wrapper(&["busybox", "toybox"], 0, Read, Read),
    wrapper(&["parallel"], 0, Execute, Execute),
    wrapper(&["chrt"], 1, Execute, Execute),
];

/// Command name → row, built once from [`COMMANDS`] (the first row naming a
/// command wins).
static BY_NAME: LazyLock<foldhash::HashMap<&'static str, &'static Cmd>> = LazyLock::new(|| {
    let names = COMMANDS.iter().map(|row| row.names.len()).sum();
    let mut map = foldhash::HashMap::with_capacity_and_hasher(names, Default::default());
    for row in COMMANDS {
        for name in row.names {
            map.entry(*name).or_insert(row);
        }
    }
    map
});

/// The row for `name`, if known.
pub(crate) fn lookup(name: &str) -> Option<&'static Cmd> {
    if let Some(found) = BY_NAME.get(name) {
        return Some(found);
    }
    // `mkfs.ext4`, `mkfs.vfat`…: every variant formats a disk.
    if name.starts_with("mkfs") || name.starts_with("mke2fs") {
        return Some(&MKFS);
    }
    // `python3.12`, `pip3.11`…
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if base != name && !base.is_empty() {
        return BY_NAME.get(base).copied();
    }
    None
}

static MKFS: Cmd = cmd(&["mkfs"], Destructive, true);

/// The wrapper row for `name`, if it is one.
pub(crate) fn wrapper_for(name: &str) -> Option<&'static Wrapper> {
    WRAPPERS.iter().find(|w| w.names.contains(&name))
}

/// Interpreters and the options that hand them code inline.
pub(crate) static INLINE_CODE: &[(&[&str], &[&str])] = &[
    (
        &["python", "python2", "python3", "pypy", "pypy3", "ipython"],
        &["-c"],
    ),
    (
        &["node", "nodejs", "bun"],
        &["-e", "--eval", "-p", "--print"],
    ),
    (&["deno"], &["eval"]),
    (&["perl"], &["-e", "-E"]),
    (&["ruby"], &["-e"]),
    (&["php"], &["-r"]),
    (&["lua", "luajit"], &["-e"]),
    (&["Rscript"], &["-e"]),
    (&["julia"], &["-e", "--eval"]),
    (&["osascript"], &["-e"]),
    (
        &["su", "runuser"],
        &["-c", "--command", "--session-command"],
    ),
    (&["script"], &["-c", "--command"]),
    (
        &["pwsh", "powershell"],
        &["-c", "-Command", "-EncodedCommand", "-e"],
    ),
];

/// Options whose value chooses code an interpreter or runner evaluates,
/// beyond [`INLINE_CODE`]'s inline code: a module to run or preload
/// (`python -m`, `node -r`, `perl -M`, `ruby -r`), text `make` evaluates as
/// a makefile (`--eval`, `-E`). The analyser judges the command as it
/// would without them (the program runs code either way); an approval is
/// never saved for a command that gives one, nor covers it.
pub(crate) static CODE_OPTIONS: &[(&[&str], &[&str])] = &[
    (
        &["python", "python2", "python3", "pypy", "pypy3", "ipython"],
        &["-m"],
    ),
    (
        &["node", "nodejs", "bun"],
        &[
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
        ],
    ),
    (&["perl"], &["-M", "-m"]),
    (&["ruby"], &["-r"]),
    (&["php"], &["-d"]),
    (&["make", "gmake"], &["--eval", "-E"]),
];

/// Shells: `-c` code is parsed recursively, stdin is opaque.
pub(crate) static SHELLS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "csh",
    "tcsh",
    "busybox-sh",
];

/// The shells whose `-c` code the analyser reads with bash's grammar: bash
/// and the POSIX shells, whose language is a subset of it. Code for any other
/// shell of [`SHELLS`] (zsh's glob qualifiers run code, fish and csh have
/// grammars of their own) is opaque.
pub(crate) static BASH_GRAMMAR_SHELLS: &[&str] = &["sh", "bash", "dash", "ash", "busybox-sh"];

/// Programs that run whatever arrives on stdin (a pipe into them is opaque).
pub(crate) static STDIN_RUNNERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "node",
    "nodejs",
    "deno",
    "bun",
    "ruby",
    "perl",
    "php",
    "lua",
    "luajit",
    "Rscript",
    "julia",
    "osascript",
    "pwsh",
    "powershell",
    "source",
    ".",
    "eval",
    "ipython",
    "irb",
    "ghci",
    "groovy",
];

/// Environment variables that make any program load or run other code.
pub(crate) static CODE_LOADING_VARS: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_TEMPLATE_DIR",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "RUSTC_WRAPPER",
    "RUSTC",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "BROWSER",
    "TAR_OPTIONS",
    "GREP_OPTIONS",
    "ZDOTDIR",
    // The shell's own: hashed command paths (`BASH_CMDS[ls]=./x`), aliases,
    // names PATH lookup skips, and GLOBIGNORE (any value turns on dotglob:
    // `*` then matches `.env`).
    "BASH_CMDS",
    "BASH_ALIASES",
    "EXECIGNORE",
    "GLOBIGNORE",
];

/// Whether setting `var` can make a program run other code: the list above,
/// and variables that point programs at other configuration (`HOME` moves
/// `~/.gitconfig`, `XDG_CONFIG_HOME`, `GIT_*`, `*_CONFIG*`, `*RC`…). Used for
/// assignments that last (bare `VAR=x`), where a later command is raised.
pub(crate) fn loads_code(var: &str) -> bool {
    CODE_LOADING_VARS.contains(&var)
        || var == "HOME"
        || var.starts_with("GIT_")
        || var.starts_with("XDG_")
        || var.starts_with("NPM_CONFIG_")
        || var.starts_with("npm_config_")
        || var.starts_with("PIP_")
        || var.contains("CONFIG")
        || var.ends_with("RC")
        || var.ends_with("_OPTS")
        || var.ends_with("_OPTIONS")
        || var.ends_with("_FLAGS")
        || var.ends_with("_HOME")
}

/// Whether the shell inherited `var` from the environment toolgate runs in
/// (the user exported it): bash exports every inherited variable, so a plain
/// `VAR=x` in the line reaches every later program (`MANOPT`, `LESS`,
/// `PYTHONUSERBASE`: `PYTHONUSERBASE=./ub; pip list` ran `./ub`'s `.pth`).
pub(crate) fn inherited(var: &str) -> bool {
    // Only names bash can set; `getenv` is never asked about `=` or NUL.
    !var.is_empty()
        && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && std::env::var_os(var).is_some()
}

/// Whether a lasting assignment (`VAR=x` alone, `read VAR`, `for VAR in`,
/// `unset VAR`) may change what later programs read or run: the variable
/// loads code, or it is inherited and not known to only change formatting.
pub(crate) fn lasting_assignment_matters(var: &str) -> bool {
    loads_code(var) || (!env_is_harmless(var) && inherited(var))
}

/// An assignment (`NAME=value`) that points a client at a daemon on another
/// host (`DOCKER_HOST=tcp://…`): the command talks to the network.
pub(crate) fn points_at_a_host(assignment: &str) -> bool {
    let Some((name, value)) = assignment.split_once('=') else {
        return false;
    };
    matches!(name, "DOCKER_HOST" | "CONTAINER_HOST" | "PODMAN_HOST")
        && !value.starts_with("unix://")
}

/// Variables known only to change how a program formats what it prints. A
/// command that only reads stays read with these set in front of it
/// (`LC_ALL=C sort`); any other assignment in front of a command, or given to
/// `env`, or exported, may change what it reads or runs, so it is not proven
/// read.
pub(crate) fn env_is_harmless(var: &str) -> bool {
    const HARMLESS: &[&str] = &[
        "LANG",
        "LANGUAGE",
        "TZ",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "TERM",
        "COLORTERM",
        "LS_COLORS",
        "GREP_COLOR",
        "GREP_COLORS",
        "TIME_STYLE",
        "QUOTING_STYLE",
        "BLOCK_SIZE",
        "BLOCKSIZE",
        "DF_BLOCK_SIZE",
        "DU_BLOCK_SIZE",
        "LS_BLOCK_SIZE",
        "POSIXLY_CORRECT",
        "TABSIZE",
        "RUST_BACKTRACE",
        "RUST_LOG",
        "CI",
        "DEBIAN_FRONTEND",
    ];
    HARMLESS.contains(&var) || var.starts_with("LC_")
}

/// Searchers whose first operand is a pattern, not a path (unless `-e`/`-f`
/// give the pattern).
pub(crate) static PATTERN_FIRST: &[&str] = &[
    "grep", "egrep", "fgrep", "zgrep", "ugrep", "rg", "ripgrep", "fd", "fdfind",
];

/// Commands whose operands are paths only up to the first expression word.
pub(crate) static EXPRESSION_AFTER_PATHS: &[&str] = &["find", "gfind"];

/// Options of any command whose value is a glob, not a path.
pub(crate) static GLOB_OPTIONS: &[&str] = &[
    "--exclude",
    "--exclude-dir",
    "--include",
    "--include-dir",
    "--ignore",
    "--ignore-dir",
];

/// Options of the searchers in [`PATTERN_FIRST`] whose value is a pattern,
/// type, count or depth, not a path. Only options that take a value in every
/// one of them: skipping a word that is really a path would hide it.
pub(crate) static SEARCH_OPTIONS: &[&str] = &[
    "-e",
    "--regexp",
    "--iglob",
    "--type-add",
    "-t",
    "--type",
    "--type-not",
    "-m",
    "--max-count",
    "-A",
    "-B",
    "-C",
    "--context",
    "--after-context",
    "--before-context",
    "--extension",
    "-d",
    "--max-depth",
    "--depth",
];

/// Commands whose list of operands is fed to `rm`-like destruction under `xargs`.
pub(crate) static DELETERS: &[&str] = &["rm", "shred", "unlink", "srm", "rmdir", "truncate"];
