//! Which config keys and environment variables are known not to run anything.
//!
//! An allowlist, written from git-config(1) and git(1) of git 2.47: a key that
//! is not here, found in a configuration the repository or the command line
//! controls, means the command may run a program (or read or write a file it
//! names) and is not `read`. A key is added only when its documentation shows
//! it names no program, hook, helper, driver, file or editor.

/// Keys as `section.name` (no subsection), `section.*.name` (any subsection)
/// or `section.**` (every key of the section, with or without subsection).
const SAFE_KEYS: &[&str] = &[
    // core: repository layout and on-disk format, all plain values.
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.protecthfs",
    "core.protectntfs",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.checkroundtripencoding",
    "core.symlinks",
    "core.trustctime",
    "core.checkstat",
    "core.quotepath",
    "core.whitespace",
    "core.abbrev",
    "core.compression",
    "core.loosecompression",
    "core.packedgitwindowsize",
    "core.packedgitlimit",
    "core.deltabasecachelimit",
    "core.bigfilethreshold",
    "core.preloadindex",
    "core.untrackedcache",
    "core.splitindex",
    "core.sharedrepository",
    "core.warnambiguousrefs",
    "core.commentchar",
    "core.commentstring",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "core.multipackindex",
    "core.filesreflocktimeout",
    "core.packedrefstimeout",
    "core.fsync",
    "core.fsyncmethod",
    "core.fsyncobjectfiles",
    "core.createobject",
    "core.usereplacerefs",
    "core.fsmonitorhookversion",
    "core.longpaths",
    "core.fscache",
    "core.hidedotfiles",
    "core.maxtreedepth",
    // core.worktree only moves the work tree; its path is judged as a path.
    "core.worktree",
    // Not extensions.partialclone: a promisor remote makes reads fetch.
    "extensions.objectformat",
    "extensions.compatobjectformat",
    "extensions.refstorage",
    "extensions.worktreeconfig",
    "extensions.preciousobjects",
    "extensions.noop",
    "init.defaultbranch",
    "index.version",
    "index.skiphash",
    "index.threads",
    "index.recordendofindexentries",
    "index.recordoffsettable",
    "index.sparse",
    "feature.manyfiles",
    "feature.experimental",
    // Who commits: strings only.
    "user.name",
    "user.email",
    "user.signingkey",
    "user.useconfigonly",
    "author.name",
    "author.email",
    "committer.name",
    "committer.email",
    "commit.gpgsign",
    "commit.status",
    "commit.verbose",
    "commit.cleanup",
    "tag.gpgsign",
    "tag.sort",
    // Remotes and branches: names, URLs and refspecs. (Not receivepack,
    // uploadpack, vcs or proxy, which name programs or reach the network.)
    "remote.*.url",
    "remote.*.pushurl",
    "remote.*.fetch",
    "remote.*.push",
    "remote.*.mirror",
    "remote.*.skipdefaultupdate",
    "remote.*.skipfetchall",
    "remote.*.tagopt",
    "remote.*.prune",
    "remote.*.prunetags",
    "remote.*.followremotehead",
    "remote.pushdefault",
    "branch.*.remote",
    "branch.*.pushremote",
    "branch.*.merge",
    "branch.*.rebase",
    "branch.*.description",
    "branch.autosetupmerge",
    "branch.autosetuprebase",
    "branch.sort",
    "submodule.*.url",
    "submodule.*.active",
    "submodule.*.branch",
    "submodule.*.ignore",
    "submodule.*.fetchrecursesubmodules",
    "submodule.active",
    "submodule.recurse",
    "submodule.fetchjobs",
    "submodule.propagatebranches",
    "worktree.guessremote",
    "lfs.repositoryformatversion",
    "lfs.url",
    "lfs.*.access",
    "lfs.*.locksverify",
    // Behaviour switches with plain values.
    "pull.rebase",
    "pull.ff",
    "pull.twohead",
    "pull.octopus",
    "push.default",
    "push.autosetupremote",
    "push.followtags",
    "push.recursesubmodules",
    "fetch.prune",
    "fetch.prunetags",
    "fetch.recursesubmodules",
    "fetch.writecommitgraph",
    "merge.ff",
    "merge.conflictstyle",
    "merge.renames",
    "merge.renamelimit",
    "merge.autostash",
    "merge.log",
    "merge.stat",
    "rebase.autosquash",
    "rebase.autostash",
    "rebase.updaterefs",
    "rebase.stat",
    "rerere.enabled",
    "rerere.autoupdate",
    "receive.denycurrentbranch",
    "receive.denynonfastforwards",
    "receive.denydeletes",
    "gc.auto",
    "gc.autopacklimit",
    "gc.autodetach",
    "gc.pruneexpire",
    "gc.reflogexpire",
    "gc.reflogexpireunreachable",
    "gc.writecommitgraph",
    "maintenance.auto",
    "maintenance.strategy",
    "status.showuntrackedfiles",
    "status.short",
    "status.branch",
    "status.relativepaths",
    "status.aheadbehind",
    "status.renames",
    "status.renamelimit",
    "status.showstash",
    "status.submodulesummary",
    "status.displaycommentprefix",
    "diff.renames",
    "diff.renamelimit",
    "diff.algorithm",
    "diff.colormoved",
    "diff.colormovedws",
    "diff.mnemonicprefix",
    "diff.noprefix",
    "diff.relative",
    "diff.context",
    "diff.interhunkcontext",
    "diff.indentheuristic",
    "diff.submodule",
    "diff.ignoresubmodules",
    "diff.statgraphwidth",
    "diff.statnamewidth",
    "diff.suppressblankempty",
    "diff.dirstat",
    "log.date",
    "log.decorate",
    "log.abbrevcommit",
    "log.follow",
    "log.graphcolors",
    "log.showroot",
    "log.excludedecoration",
    "log.initialdecorationset",
    "blame.date",
    "blame.coloring",
    "blame.showemail",
    "blame.blankboundary",
    "blame.showroot",
    "grep.linenumber",
    "grep.column",
    "grep.patterntype",
    "grep.extendedregexp",
    "grep.fullname",
    "grep.fallbacktonoindex",
    "grep.threads",
    "i18n.commitencoding",
    "i18n.logoutputencoding",
    "sparse.expectfilesoutsideofpatterns",
    "pack.threads",
    "pack.window",
    "pack.depth",
    "pack.windowmemory",
    "pack.packsizelimit",
    "pack.usebitmaps",
    "pack.writebitmaphashcache",
    "repack.writebitmaps",
    "repack.usedeltabaseoffset",
    "transfer.fsckobjects",
    "fetch.fsckobjects",
    "receive.fsckobjects",
    // Looks: colors and columns are parsed as colors or layouts only.
    "color.**",
    "column.**",
    "advice.**",
];

/// Git environment variables that name no program and no file, so setting
/// them on the command line is harmless.
const SAFE_GIT_ENV: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS",
    "GIT_FLUSH",
    "GIT_ADVICE",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_NO_LAZY_FETCH",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_NAMESPACE",
    "GIT_MERGE_VERBOSITY",
    "GIT_REFLOG_ACTION",
    "GIT_DEFAULT_HASH",
    "GIT_DEFAULT_REF_FORMAT",
    // Read by discovery here and judged as paths or config, not as names.
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
];

/// Environment variables outside `GIT_*` that make git (or the pager it
/// starts) run a program.
const PROGRAM_ENV: &[&str] = &[
    "PAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    "SSH_ASKPASS",
    "LV",
];

/// Why `key = value`, found in a configuration not the user's own, may run a
/// program; `None` when the key is known not to.
pub fn unsafe_key(key: &str, value: Option<&str>) -> Option<&'static str> {
    let (section, sub, name) = split_key(key);
    let section = section.to_ascii_lowercase();
    let name = name.to_ascii_lowercase();
    // Conditionally safe keys: the value decides.
    match (section.as_str(), sub.is_some(), name.as_str()) {
        ("core", false, "fsmonitor") => {
            return if value.is_some_and(is_false) {
                None
            } else {
                Some("core.fsmonitor runs a hook or program on status, diff and other reads")
            };
        }
        ("alias", _, _) => {
            return if value.is_some_and(|v| v.trim_start().starts_with('!')) {
                Some("an alias starting with ! runs a shell command")
            } else {
                None
            };
        }
        _ => {}
    }
    let safe = SAFE_KEYS.iter().any(|p| {
        let (ps, psub, pname) = split_key(p);
        if ps != section {
            return false;
        }
        match (psub, pname) {
            (_, "**") if psub.is_none() => true,
            (None, n) => sub.is_none() && n == name,
            (Some("*"), n) => sub.is_some() && n == name,
            _ => false,
        }
    });
    if safe {
        None
    } else {
        Some(known_reason(&section, &name))
    }
}

/// A reason for the keys git-config(1) documents as running something;
/// every other key outside the allowlist gets the general one.
fn known_reason(section: &str, name: &str) -> &'static str {
    match (section, name) {
        ("core", "pager") | ("pager", _) => "a pager is a program git runs",
        ("core", "editor") | ("sequence", "editor") => "an editor is a program git runs",
        ("core", "sshcommand") | ("core", "gitproxy") => "names a program git runs to connect",
        ("core", "hookspath") => "moves the hooks git runs",
        ("core", "askpass") | ("credential", _) => "names a credential program git runs",
        ("diff", "external") | ("diff", "command") => "an external diff is a program git runs",
        ("diff", "textconv") => "a textconv filter is a program git runs on diff and log",
        ("filter", _) => "a clean/smudge filter is a program git runs on status and checkout",
        ("merge", "driver") => "a merge driver is a program git runs",
        ("gpg", _) => "a signing program git runs",
        ("log", "showsignature") => "makes git log run the signing program",
        ("uploadpack", _) | ("receive", _) => "names a program or hook git runs",
        ("remote", "receivepack") | ("remote", "uploadpack") | ("remote", "vcs") => {
            "names a program git runs for the remote"
        }
        ("protocol", _) => "can enable transports that run programs",
        ("extensions", "partialclone") | ("remote", "promisor") => {
            "a promisor remote makes git fetch missing objects while it reads (ssh, the network)"
        }
        ("web", "browser") | ("browser", _) | ("man", _) | ("instaweb", _) => {
            "names a program git runs"
        }
        ("include", _) | ("includeif", _) => "includes further configuration",
        _ => "not a key known to run nothing",
    }
}

/// `section`, optional subsection, `name` of a dotted key.
fn split_key(key: &str) -> (&str, Option<&str>, &str) {
    let first = key.find('.').unwrap_or(key.len());
    let last = key.rfind('.').unwrap_or(key.len());
    let section = &key[..first];
    if last <= first {
        return (section, None, key.get(first + 1..).unwrap_or(""));
    }
    (section, Some(&key[first + 1..last]), &key[last + 1..])
}

/// git's boolean false: `false`, `no`, `off`, `0` or empty, any case.
pub fn is_false(v: &str) -> bool {
    let v = v.trim();
    v.is_empty()
        || v.eq_ignore_ascii_case("false")
        || v.eq_ignore_ascii_case("no")
        || v.eq_ignore_ascii_case("off")
        || v == "0"
}

/// Why setting `name` on the command line of a git command may run a program
/// or name a file; `None` when it is known not to.
pub fn unsafe_env(name: &str, value: Option<&str>) -> Option<&'static str> {
    if PROGRAM_ENV.contains(&name) {
        return Some("names a program git or its pager runs");
    }
    if name == "HOME" || name == "XDG_CONFIG_HOME" {
        // The global config moves with them; judged as config, not here.
        return None;
    }
    if !name.starts_with("GIT_") {
        return None;
    }
    if name.starts_with("GIT_CONFIG_KEY_") || name.starts_with("GIT_CONFIG_VALUE_") {
        return None;
    }
    if name.starts_with("GIT_TRACE") {
        // A number is a file descriptor, a boolean switches; a path is written.
        return match value {
            Some(v) if v.bytes().all(|b| b.is_ascii_digit()) || is_false(v) => None,
            Some(v) if v.eq_ignore_ascii_case("true") => None,
            _ => Some("GIT_TRACE* with a path writes that file"),
        };
    }
    if SAFE_GIT_ENV.contains(&name) {
        return None;
    }
    Some(match name {
        "GIT_PAGER" => "a pager is a program git runs",
        "GIT_EDITOR" | "GIT_SEQUENCE_EDITOR" => "an editor is a program git runs",
        "GIT_EXTERNAL_DIFF" => "an external diff is a program git runs",
        "GIT_EXEC_PATH" => "git runs its subcommands from this directory",
        "GIT_ASKPASS" => "names a credential program git runs",
        _ if name.starts_with("GIT_SSH") => "names a program git runs to connect",
        _ => "not a git variable known to run nothing",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_of_a_fresh_git_init_are_safe() {
        for k in [
            "core.repositoryformatversion",
            "core.filemode",
            "core.bare",
            "core.logallrefupdates",
            "core.ignorecase",
            "core.precomposeunicode",
            "remote.origin.url",
            "remote.origin.fetch",
            "branch.main.remote",
            "branch.main.merge",
            "user.name",
            "color.diff.meta",
            "color.ui",
            "advice.detachedHead",
            "extensions.worktreeConfig",
        ] {
            assert_eq!(unsafe_key(k, Some("x")), None, "{k}");
        }
    }

    #[test]
    fn keys_that_run_programs_are_not_safe() {
        for k in [
            "core.pager",
            "pager.log",
            "core.editor",
            "sequence.editor",
            "core.sshcommand",
            "diff.external",
            "diff.evil.textconv",
            "diff.evil.command",
            "filter.x.clean",
            "filter.x.smudge",
            "filter.x.process",
            "merge.x.driver",
            "core.hookspath",
            "gpg.program",
            "gpg.ssh.program",
            "credential.helper",
            "credential.https://x.helper",
            "uploadpack.packobjectshook",
            "core.askpass",
            "core.gitproxy",
            "protocol.ext.allow",
            "remote.o.receivepack",
            "remote.o.uploadpack",
            "browser.x.cmd",
            "web.browser",
            "man.x.cmd",
            "instaweb.httpd",
            "log.showsignature",
            // `git log -p` fetched a missing blob: ran ssh to the remote.
            "extensions.partialclone",
            "remote.origin.promisor",
            "difftool.x.cmd",
            "mergetool.x.cmd",
            "sendemail.smtpserver",
            "core.attributesfile",
            "core.excludesfile",
            "help.autocorrect",
            "submodule.x.update",
            "remote.o.vcs",
            "user",
            // A two-level allowlisted name under a subsection is another key.
            "core.x.filemode",
            "remote.url",
        ] {
            assert!(unsafe_key(k, Some("x")).is_some(), "{k}");
        }
    }

    #[test]
    fn fsmonitor_is_safe_only_when_false() {
        for v in ["false", "FALSE", "no", "off", "0", ""] {
            assert_eq!(unsafe_key("core.fsmonitor", Some(v)), None, "{v}");
        }
        for v in [Some("true"), Some("touch /tmp/x"), None, Some("1")] {
            assert!(unsafe_key("core.fsmonitor", v).is_some(), "{v:?}");
        }
    }

    #[test]
    fn only_bang_aliases_run_commands() {
        assert_eq!(unsafe_key("alias.st", Some("status -sb")), None);
        assert!(unsafe_key("alias.x", Some("!touch /tmp/m")).is_some());
        assert!(unsafe_key("alias.x", Some("  !sh")).is_some());
    }

    #[test]
    fn environment_variables() {
        for (n, v) in [
            ("GIT_AUTHOR_NAME", "x"),
            ("GIT_TRACE", "1"),
            ("GIT_TRACE", "2"),
            ("GIT_TRACE_PACKET", "true"),
            ("LANG", "C"),
            ("GIT_DIR", "/x"),
        ] {
            assert_eq!(unsafe_env(n, Some(v)), None, "{n}");
        }
        for (n, v) in [
            ("GIT_PAGER", "x"),
            ("GIT_EXTERNAL_DIFF", "x"),
            ("GIT_SSH_COMMAND", "x"),
            ("GIT_SSH", "x"),
            ("GIT_ASKPASS", "x"),
            ("GIT_EDITOR", "x"),
            ("GIT_EXEC_PATH", "/x"),
            ("GIT_TRACE", "/tmp/out"),
            ("GIT_PROXY_COMMAND", "x"),
            ("GIT_ALLOW_PROTOCOL", "ext"),
            ("GIT_INDEX_FILE", "/x"),
            ("PAGER", "x"),
            ("LESSOPEN", "|x %s"),
            ("GIT_SOMETHING_NEW", "x"),
        ] {
            assert!(unsafe_env(n, Some(v)).is_some(), "{n}");
        }
    }
}
