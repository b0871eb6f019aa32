//! Real files in temporary directories; `git` runs only to set up fixtures.

use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

use super::*;

struct Fx {
    _tmp: TempDir,
    ws: PathBuf,
    home: PathBuf,
    other: PathBuf,
}

fn fx() -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (ws, home, other) = (base.join("ws"), base.join("home"), base.join("other"));
    for d in [&ws, &home, &other] {
        std::fs::create_dir_all(d).unwrap();
    }
    Fx {
        _tmp: tmp,
        ws,
        home,
        other,
    }
}

impl Fx {
    fn location(&self) -> Location {
        Location::new(&self.ws).unwrap()
    }

    fn inv(&self, cwd: &Path) -> GitInvocation {
        GitInvocation {
            process_env: ProcessEnv::fixed([("HOME", self.home.to_str().unwrap())]),
            ..GitInvocation::new(cwd, &self.home)
        }
    }

    fn run(&self, inv: &GitInvocation) -> RepoConfig {
        inspect(inv, &self.location())
    }
}

/// A minimal git directory by hand, with `config` holding `text`.
fn git_dir(dir: &Path, config: &str) {
    std::fs::create_dir_all(dir.join("objects")).unwrap();
    std::fs::create_dir_all(dir.join("refs/heads")).unwrap();
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(dir.join("config"), config).unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn keys_of(r: &RepoConfig) -> Vec<&str> {
    r.findings.iter().map(|f| f.key.as_str()).collect()
}

const FSMONITOR: &str =
    "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch /tmp/marker\"\n";

#[test]
fn fsmonitor_in_repo_config_runs_a_program() {
    let f = fx();
    git_dir(&f.ws.join(".git"), FSMONITOR);
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(r.git_dir.as_deref(), Some(f.ws.join(".git").as_path()));
    assert_eq!(keys_of(&r), ["core.fsmonitor"]);
    let why = r.may_run_program().unwrap();
    assert!(
        why.contains(&format!("{}:3", f.ws.join(".git/config").display())),
        "{why}"
    );
    assert!(r.outside.is_empty(), "{:?}", r.outside);
}

#[test]
fn fsmonitor_found_from_a_subdirectory() {
    let f = fx();
    git_dir(&f.ws.join(".git"), FSMONITOR);
    std::fs::create_dir_all(f.ws.join("src/deep")).unwrap();
    let r = f.run(&f.inv(&f.ws.join("src/deep")));
    assert_eq!(keys_of(&r), ["core.fsmonitor"]);
}

#[test]
fn fsmonitor_false_is_safe() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "[core]\n\tfsmonitor = false\n");
    assert_eq!(f.run(&f.inv(&f.ws)).may_run_program(), None);
}

/// A partial clone: `git log -p -1` with a blob missing fetched it from the
/// promisor remote, running `ssh attacker.example git-upload-pack '/x'`.
#[test]
fn a_promisor_remote_makes_reads_fetch() {
    let f = fx();
    git_dir(
        &f.ws.join(".git"),
        "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tpartialclone = origin\n\
         [remote \"origin\"]\n\turl = ssh://attacker.example/x\n\tpromisor = true\n",
    );
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(
        keys_of(&r),
        ["extensions.partialclone", "remote.origin.promisor"]
    );
    assert!(r.may_run_program().is_some());
    // The other extensions of a fresh repository stay known.
    git_dir(
        &f.ws.join(".git"),
        "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n",
    );
    assert_eq!(f.run(&f.inv(&f.ws)).may_run_program(), None);
}

/// `objects/info/alternates` naming another repository's objects: `git
/// cat-file -p SHA` printed a blob of that repository, outside the location.
#[test]
fn alternates_outside_are_read() {
    let f = fx();
    git_dir(
        &f.ws.join(".git"),
        "[core]\n\trepositoryformatversion = 0\n",
    );
    std::fs::create_dir_all(f.ws.join(".git/objects/info")).unwrap();
    std::fs::create_dir_all(f.other.join("objects")).unwrap();
    std::fs::write(
        f.ws.join(".git/objects/info/alternates"),
        format!("{}\n", f.other.join("objects").display()),
    )
    .unwrap();
    let r = f.run(&f.inv(&f.ws));
    assert!(
        r.outside.contains(&f.other.join("objects")),
        "{:?}",
        r.outside
    );
}

#[test]
fn ordinary_git_init_repo_is_safe() {
    let f = fx();
    git(&f.ws, &["init", "-q", "-b", "main"]);
    git(&f.ws, &["config", "user.name", "Someone"]);
    git(&f.ws, &["config", "user.email", "s@example.com"]);
    git(
        &f.ws,
        &["remote", "add", "origin", "https://example.com/r.git"],
    );
    git(&f.ws, &["config", "branch.main.remote", "origin"]);
    git(&f.ws, &["config", "branch.main.merge", "refs/heads/main"]);
    git(&f.ws, &["config", "alias.st", "status -sb"]);
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(r.may_run_program(), None, "{:?}", r.findings);
    assert!(r.files.iter().any(|c| c.scope == Scope::Local && c.exists));
    assert!(r.outside.is_empty());
}

#[test]
fn no_repository_is_no_finding() {
    let f = fx();
    let r = f.run(&f.inv(&f.ws));
    // /tmp may itself sit in no repository; at least nothing of ours is judged.
    assert!(r.git_dir.is_none() || !r.git_dir.as_ref().unwrap().starts_with(&f.ws));
}

#[test]
fn pager_editor_and_friends_in_repo_config() {
    for (section, line) in [
        ("[core]", "pager = less"),
        ("[pager]", "log = sh -c x"),
        ("[core]", "editor = vim"),
        ("[core]", "sshCommand = ssh -o ProxyCommand=x"),
        ("[diff]", "external = x"),
        ("[diff \"evil\"]", "textconv = x"),
        ("[diff.evil]", "command = x"),
        ("[filter \"f\"]", "clean = x"),
        ("[filter \"f\"]", "process = x"),
        ("[merge \"m\"]", "driver = x"),
        ("[alias]", "x = !touch /tmp/m"),
        ("[core]", "hooksPath = /tmp/h"),
        ("[gpg]", "program = x"),
        ("[log]", "showSignature = true"),
        ("[credential]", "helper = x"),
        ("[uploadpack]", "packObjectsHook = x"),
        ("[core]", "askPass = x"),
        ("[protocol \"ext\"]", "allow = always"),
        ("[remote \"o\"]", "uploadpack = x"),
        ("[web]", "browser = x"),
        ("[man \"x\"]", "cmd = x"),
        ("[something]", "new = x"),
    ] {
        let f = fx();
        git_dir(&f.ws.join(".git"), &format!("{section}\n\t{line}\n"));
        let r = f.run(&f.inv(&f.ws));
        assert_eq!(r.findings.len(), 1, "{section} {line}: {:?}", r.findings);
        assert!(
            r.findings[0].origin.ends_with("config:2"),
            "{:?}",
            r.findings
        );
    }
}

#[test]
fn include_path_target_with_pager() {
    let f = fx();
    std::fs::write(f.ws.join("inc.cfg"), "[core]\n\tpager = evil\n").unwrap();
    git_dir(&f.ws.join(".git"), "[include]\n\tpath = ../inc.cfg\n");
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(keys_of(&r), ["core.pager"]);
    assert!(
        r.findings[0].origin.ends_with("inc.cfg:2"),
        "{:?}",
        r.findings
    );
    assert!(
        r.files
            .iter()
            .any(|c| c.scope == Scope::Include && !c.conditional)
    );
}

#[test]
fn include_if_targets_count_whatever_the_condition() {
    let f = fx();
    std::fs::write(f.ws.join("a.cfg"), "[core]\n\tfsmonitor = x\n").unwrap();
    std::fs::write(f.ws.join("b.cfg"), "[diff]\n\texternal = x\n").unwrap();
    git_dir(
        &f.ws.join(".git"),
        "[includeIf \"onbranch:nope\"]\n\tpath = ../a.cfg\n[includeIf \"gitdir:/nowhere/\"]\n\tpath = ../b.cfg\n",
    );
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(keys_of(&r), ["core.fsmonitor", "diff.external"]);
    assert!(r.files.iter().filter(|c| c.conditional).count() == 2);
}

#[test]
fn include_cycle_is_bounded_and_fails_closed() {
    let f = fx();
    std::fs::write(f.ws.join("loop.cfg"), "[include]\n\tpath = loop.cfg\n").unwrap();
    git_dir(&f.ws.join(".git"), "[include]\n\tpath = ../loop.cfg\n");
    let r = f.run(&f.inv(&f.ws));
    assert!(r.may_run_program().is_some());
    assert!(r.files.len() <= MAX_FILES + 4);
}

#[test]
fn include_outside_the_location_is_reported() {
    let f = fx();
    std::fs::write(f.other.join("x.cfg"), "[user]\n\tname = x\n").unwrap();
    git_dir(
        &f.ws.join(".git"),
        &format!("[include]\n\tpath = {}\n", f.other.join("x.cfg").display()),
    );
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(r.may_run_program(), None);
    assert_eq!(r.outside, [f.other.join("x.cfg")]);
}

#[test]
fn missing_include_is_skipped_like_git() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "[include]\n\tpath = ../nope.cfg\n");
    assert_eq!(f.run(&f.inv(&f.ws)).may_run_program(), None);
}

#[test]
fn git_dir_env_points_outside() {
    let f = fx();
    git_dir(&f.other.join("repo.git"), "[core]\n\tbare = true\n");
    let mut inv = f.inv(&f.ws);
    let target = f.other.join("repo.git").display().to_string();
    inv.assignments.push(("GIT_DIR".into(), Some(target)));
    let r = f.run(&inv);
    assert_eq!(
        r.git_dir.as_deref(),
        Some(f.other.join("repo.git").as_path())
    );
    assert!(
        r.outside.contains(&f.other.join("repo.git")),
        "{:?}",
        r.outside
    );
    assert_eq!(r.may_run_program(), None);
}

#[test]
fn git_dir_env_outside_with_fsmonitor() {
    let f = fx();
    git_dir(&f.other.join("g"), FSMONITOR);
    let mut inv = f.inv(&f.ws);
    inv.assignments
        .push(("GIT_DIR".into(), Some("../other/g".into())));
    let r = f.run(&inv);
    assert_eq!(keys_of(&r), ["core.fsmonitor"]);
    assert!(r.outside.contains(&f.other.join("g")));
}

#[test]
fn git_dir_in_the_process_env_is_followed() {
    let f = fx();
    git_dir(&f.other.join("g"), FSMONITOR);
    let mut inv = f.inv(&f.ws);
    inv.process_env = ProcessEnv::fixed([
        ("HOME", f.home.to_str().unwrap()),
        ("GIT_DIR", f.other.join("g").to_str().unwrap()),
    ]);
    assert_eq!(keys_of(&f.run(&inv)), ["core.fsmonitor"]);
}

#[test]
fn git_dir_known_only_at_run_time_fails_closed() {
    let f = fx();
    let mut inv = f.inv(&f.ws);
    inv.assignments.push(("GIT_DIR".into(), None));
    assert!(f.run(&inv).may_run_program().unwrap().contains("GIT_DIR"));
}

#[test]
fn git_dir_option_and_dash_c_directory() {
    let f = fx();
    git_dir(&f.other.join("r/.git"), FSMONITOR);
    let mut inv = f.inv(&f.ws);
    inv.global_args = vec!["-C".into(), "../other/r".into()];
    let r = f.run(&inv);
    assert_eq!(keys_of(&r), ["core.fsmonitor"]);
    assert_eq!(r.start_dir.as_deref(), Some(f.other.join("r").as_path()));
    assert!(r.outside.contains(&f.other.join("r")));

    let mut inv = f.inv(&f.ws);
    inv.global_args = vec![format!("--git-dir={}", f.other.join("r/.git").display())];
    assert_eq!(keys_of(&f.run(&inv)), ["core.fsmonitor"]);
    let mut inv = f.inv(&f.ws);
    inv.global_args = vec!["--git-dir".into(), "../other/r/.git".into()];
    assert_eq!(keys_of(&f.run(&inv)), ["core.fsmonitor"]);
}

#[test]
fn work_tree_outside_is_reported() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "[core]\n\tworktree = ../../other\n");
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(r.may_run_program(), None);
    assert!(r.outside.contains(&f.other), "{:?}", r.outside);
    let mut inv = f.inv(&f.ws);
    inv.global_args = vec!["--work-tree=../other".into()];
    git_dir(&f.ws.join(".git"), "");
    assert!(f.run(&inv).outside.contains(&f.other));
}

#[test]
fn worktree_gitdir_file_followed() {
    let f = fx();
    let main = f.other.join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    git(&main, &["commit", "-q", "--allow-empty", "-m", "x"]);
    let wt = f.ws.join("wt");
    git(&main, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    std::fs::write(
        main.join(".git/config"),
        "[core]\n\tbare = false\n[core]\n\tfsmonitor = x\n",
    )
    .unwrap();
    let r = f.run(&f.inv(&wt));
    assert_eq!(
        r.git_dir.as_deref(),
        Some(main.join(".git/worktrees/wt").as_path())
    );
    assert_eq!(r.common_dir.as_deref(), Some(main.join(".git").as_path()));
    assert_eq!(keys_of(&r), ["core.fsmonitor"]);
    assert!(r.findings[0].origin.ends_with(".git/config:4"));
    assert!(r.outside.contains(&main.join(".git")));
}

#[test]
fn config_worktree_is_read() {
    let f = fx();
    git_dir(
        &f.ws.join(".git"),
        "[extensions]\n\tworktreeConfig = true\n",
    );
    std::fs::write(f.ws.join(".git/config.worktree"), "[core]\n\tpager = x\n").unwrap();
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(keys_of(&r), ["core.pager"]);
    assert!(r.findings[0].origin.ends_with("config.worktree:2"));
}

#[test]
fn submodule_config_with_fsmonitor() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "[core]\n\tbare = false\n");
    git_dir(&f.ws.join(".git/modules/libs/x"), FSMONITOR);
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(keys_of(&r), ["core.fsmonitor"]);
    assert!(r.files.iter().any(|c| c.scope == Scope::Submodule));
}

#[test]
fn invalid_dot_git_directory_is_passed_like_git() {
    let f = fx();
    git_dir(&f.ws.join(".git"), FSMONITOR);
    // A `.git` without HEAD below: git keeps walking up, so do we.
    std::fs::create_dir_all(f.ws.join("sub/.git")).unwrap();
    assert_eq!(
        keys_of(&f.run(&f.inv(&f.ws.join("sub")))),
        ["core.fsmonitor"]
    );
}

#[test]
fn bare_repository_found_from_inside() {
    let f = fx();
    git_dir(&f.ws.join("r.git"), FSMONITOR);
    assert_eq!(
        keys_of(&f.run(&f.inv(&f.ws.join("r.git")))),
        ["core.fsmonitor"]
    );
}

#[test]
fn command_line_config_is_judged() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    let mut inv = f.inv(&f.ws);
    inv.global_args = vec!["-c".into(), "core.fsmonitor=touch /tmp/m".into()];
    assert_eq!(keys_of(&f.run(&inv)), ["core.fsmonitor"]);
    inv.global_args = vec!["-c".into(), "color.ui=never".into()];
    assert_eq!(f.run(&inv).may_run_program(), None);
    inv.global_args = vec!["--config-env=core.pager=P".into()];
    assert_eq!(keys_of(&f.run(&inv)), ["core.pager"]);
    inv.global_args = vec!["-c".into(), "include.path=/x".into()];
    assert_eq!(keys_of(&f.run(&inv)), ["include.path"]);
    inv.global_args = vec!["--exec-path=/tmp".into()];
    assert_eq!(keys_of(&f.run(&inv)), ["--exec-path"]);
    inv.global_args = vec!["--frobnicate".into()];
    assert!(f.run(&inv).may_run_program().is_some());
}

#[test]
fn config_count_on_the_command_line_is_judged() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    let mut inv = f.inv(&f.ws);
    for (k, v) in [
        ("GIT_CONFIG_COUNT", "2"),
        ("GIT_CONFIG_KEY_0", "user.name"),
        ("GIT_CONFIG_VALUE_0", "x"),
        ("GIT_CONFIG_KEY_1", "core.fsmonitor"),
        ("GIT_CONFIG_VALUE_1", "touch /tmp/m"),
    ] {
        inv.assignments.push((k.into(), Some(v.into())));
    }
    let r = f.run(&inv);
    assert_eq!(keys_of(&r), ["core.fsmonitor"]);
    assert_eq!(r.findings[0].origin, "GIT_CONFIG_KEY_1");
}

#[test]
fn config_parameters_on_the_command_line_are_judged() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    let mut inv = f.inv(&f.ws);
    inv.assignments.push((
        "GIT_CONFIG_PARAMETERS".into(),
        Some("'user.name'='it'\\''s' 'core.pager'='x'".into()),
    ));
    assert_eq!(keys_of(&f.run(&inv)), ["core.pager"]);
    inv.assignments = vec![(
        "GIT_CONFIG_PARAMETERS".into(),
        Some("'diff.external=x'".into()),
    )];
    assert_eq!(keys_of(&f.run(&inv)), ["diff.external"]);
    inv.assignments = vec![("GIT_CONFIG_PARAMETERS".into(), Some("'unterminated".into()))];
    assert!(f.run(&inv).may_run_program().is_some());
}

#[test]
fn the_users_own_environment_config_is_trusted() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    let mut inv = f.inv(&f.ws);
    inv.process_env = ProcessEnv::fixed([
        ("HOME", f.home.to_str().unwrap()),
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "core.pager"),
        ("GIT_CONFIG_VALUE_0", "delta"),
        ("GIT_PAGER", "delta"),
    ]);
    assert_eq!(f.run(&inv).may_run_program(), None);
}

#[test]
fn pager_and_external_diff_variables_on_the_command_line() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    for name in [
        "GIT_PAGER",
        "GIT_EXTERNAL_DIFF",
        "GIT_SSH_COMMAND",
        "PAGER",
        "GIT_EXEC_PATH",
    ] {
        let mut inv = f.inv(&f.ws);
        inv.assignments.push((name.into(), Some("x".into())));
        assert_eq!(keys_of(&f.run(&inv)), [name]);
    }
    let mut inv = f.inv(&f.ws);
    inv.assignments
        .push(("GIT_AUTHOR_NAME".into(), Some("x".into())));
    assert_eq!(f.run(&inv).may_run_program(), None);
}

#[test]
fn unparseable_config_fails_closed() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "[core]\n\tpager = \"unterminated\n");
    let why = f.run(&f.inv(&f.ws)).may_run_program().unwrap();
    assert!(why.contains("cannot parse"), "{why}");
}

#[test]
fn unreadable_config_fails_closed() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    std::fs::remove_file(f.ws.join(".git/config")).unwrap();
    std::fs::create_dir(f.ws.join(".git/config")).unwrap();
    let why = f.run(&f.inv(&f.ws)).may_run_program().unwrap();
    assert!(why.contains("not a regular file"), "{why}");
}

#[test]
fn oversized_config_fails_closed() {
    let f = fx();
    let big = format!(
        "[user]\n\tname = {}\n",
        "x".repeat(MAX_CONFIG_BYTES as usize)
    );
    git_dir(&f.ws.join(".git"), &big);
    assert!(f.run(&f.inv(&f.ws)).may_run_program().is_some());
}

#[test]
fn global_config_of_the_user_is_trusted_but_listed() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    std::fs::write(f.home.join(".gitconfig"), "[core]\n\tpager = delta\n").unwrap();
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(r.may_run_program(), None);
    assert!(
        r.files
            .iter()
            .any(|c| c.scope == Scope::Global && c.trusted && c.exists)
    );
    assert!(r.outside.is_empty());
}

#[test]
fn global_config_include_into_the_location_is_judged() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    std::fs::write(f.ws.join("team.cfg"), "[core]\n\tfsmonitor = x\n").unwrap();
    std::fs::write(
        f.home.join(".gitconfig"),
        format!("[include]\n\tpath = {}\n", f.ws.join("team.cfg").display()),
    )
    .unwrap();
    assert_eq!(keys_of(&f.run(&f.inv(&f.ws))), ["core.fsmonitor"]);
}

#[test]
fn global_config_named_by_the_command_line_is_judged() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    std::fs::write(f.other.join("g.cfg"), "[core]\n\tpager = x\n").unwrap();
    for var in ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"] {
        let mut inv = f.inv(&f.ws);
        inv.assignments.push((
            var.into(),
            Some(f.other.join("g.cfg").display().to_string()),
        ));
        let r = f.run(&inv);
        assert_eq!(keys_of(&r), ["core.pager"], "{var}");
        assert!(r.outside.contains(&f.other.join("g.cfg")));
    }
}

#[test]
fn home_on_the_command_line_moves_the_global_config() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    std::fs::write(f.other.join(".gitconfig"), "[core]\n\tfsmonitor = x\n").unwrap();
    let mut inv = f.inv(&f.ws);
    inv.assignments
        .push(("HOME".into(), Some(f.other.display().to_string())));
    assert_eq!(keys_of(&f.run(&inv)), ["core.fsmonitor"]);
    std::fs::create_dir_all(f.other.join("x/git")).unwrap();
    std::fs::write(f.other.join("x/git/config"), "[core]\n\tpager = x\n").unwrap();
    let mut inv = f.inv(&f.ws);
    inv.assignments.push((
        "XDG_CONFIG_HOME".into(),
        Some(f.other.join("x").display().to_string()),
    ));
    assert_eq!(keys_of(&f.run(&inv)), ["core.pager"]);
}

#[test]
fn cache_sees_a_rewrite_of_the_same_size() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "[core]\n\tfsmonitor = false\n");
    assert_eq!(f.run(&f.inv(&f.ws)).may_run_program(), None);
    // Same length, same second: the stamp (inode, ctime in ns) still differs.
    std::fs::write(f.ws.join(".git/config"), "[core]\n\tfsmonitor = fals3\n").unwrap();
    assert_eq!(keys_of(&f.run(&f.inv(&f.ws))), ["core.fsmonitor"]);
}

#[test]
fn symlinked_config_is_judged_where_it_points() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    std::fs::write(f.other.join("c"), "[core]\n\tpager = x\n").unwrap();
    std::fs::remove_file(f.ws.join(".git/config")).unwrap();
    std::os::unix::fs::symlink(f.other.join("c"), f.ws.join(".git/config")).unwrap();
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(keys_of(&r), ["core.pager"]);
    assert!(r.outside.contains(&f.other.join("c")));
}

#[test]
fn parser_agrees_with_git_on_tricky_files() {
    let f = fx();
    let texts = [
        "[Core]\n\tFileMode = false\n[remote \"Or\\\"ig\\\\in\"]\n\turl = x ; c\n",
        "[a.B]\nc\nd = \"x;y\" # z\ne = a\\\n\tb\n[f \"g\"] h = i\n",
        "\u{feff}; c\n# c\n[x]\r\n\tq = \"  lead\"  trail  \r\n\tr = \\t\\n\\b\n",
        "[s]\n\tv = one   two\t three\n\tw =\n\tx = \"\"\n",
        "[include]\n\tpath = a\n[includeIf \"gitdir:/x/\"]\n\tpath = b\n",
    ];
    for text in texts {
        let file = f.other.join("t.cfg");
        std::fs::write(&file, text).unwrap();
        let out = Command::new("git")
            .args(["config", "--no-includes", "-z", "--list", "-f"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{text:?}");
        let theirs: Vec<(String, Option<String>)> = out
            .stdout
            .split(|&b| b == 0)
            .filter(|r| !r.is_empty())
            .map(|r| {
                let r = String::from_utf8_lossy(r);
                match r.split_once('\n') {
                    Some((k, v)) => (k.to_string(), Some(v.to_string())),
                    None => (r.to_string(), None),
                }
            })
            .collect();
        let ours: Vec<(String, Option<String>)> = git_config_syntax::parse(text.as_bytes())
            .unwrap()
            .into_iter()
            .map(|e| (e.key, e.value))
            .collect();
        assert_eq!(ours, theirs, "{text:?}");
    }
}

#[test]
fn git_common_dir_env_is_followed() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    git_dir(&f.other.join("common"), FSMONITOR);
    let mut inv = f.inv(&f.ws);
    inv.assignments.push((
        "GIT_COMMON_DIR".into(),
        Some(f.other.join("common").display().to_string()),
    ));
    let r = f.run(&inv);
    assert_eq!(keys_of(&r), ["core.fsmonitor"]);
    assert!(r.outside.contains(&f.other.join("common")));
}

#[test]
fn checked_out_submodule_with_its_own_git_directory() {
    let f = fx();
    git_dir(&f.ws.join(".git"), "");
    std::fs::write(
        f.ws.join(".gitmodules"),
        "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = https://example.com/lib\n",
    )
    .unwrap();
    git_dir(&f.ws.join("vendor/lib/.git"), FSMONITOR);
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(keys_of(&r), ["core.fsmonitor"]);
    assert!(r.findings[0].origin.contains("vendor/lib/.git/config"));
}

#[test]
fn real_submodule_through_git() {
    let f = fx();
    let lib = f.other.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q", "-b", "main"]);
    git(&lib, &["commit", "-q", "--allow-empty", "-m", "x"]);
    git(&f.ws, &["init", "-q", "-b", "main"]);
    git(
        &f.ws,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            lib.to_str().unwrap(),
            "sub",
        ],
    );
    assert_eq!(f.run(&f.inv(&f.ws)).may_run_program(), None);
    let sub_config = f.ws.join(".git/modules/sub/config");
    let mut c = std::fs::read_to_string(&sub_config).unwrap();
    c.push_str("[core]\n\tfsmonitor = x\n");
    std::fs::write(&sub_config, c).unwrap();
    assert_eq!(keys_of(&f.run(&f.inv(&f.ws))), ["core.fsmonitor"]);
}

#[test]
fn embedded_repository_added_without_gitmodules() {
    // `git add sub` of a repository records a gitlink and no `.gitmodules`
    // entry; `git status` still runs a status in `sub`, with its config.
    let f = fx();
    git(&f.ws, &["init", "-q", "-b", "main"]);
    let sub = f.ws.join("vendor/lib");
    std::fs::create_dir_all(&sub).unwrap();
    git(&sub, &["init", "-q", "-b", "main"]);
    git(&sub, &["commit", "-q", "--allow-empty", "-m", "x"]);
    git(&f.ws, &["add", "vendor/lib"]);
    assert!(!f.ws.join(".gitmodules").exists());
    assert_eq!(f.run(&f.inv(&f.ws)).may_run_program(), None);
    let config = sub.join(".git/config");
    let mut c = std::fs::read_to_string(&config).unwrap();
    c.push_str("[core]\n\tfsmonitor = x\n");
    std::fs::write(&config, c).unwrap();
    let r = f.run(&f.inv(&f.ws));
    assert_eq!(keys_of(&r), ["core.fsmonitor"]);
    assert!(r.findings[0].origin.contains("vendor/lib/.git/config"));
}

#[test]
fn nested_embedded_repository_is_followed() {
    let f = fx();
    git(&f.ws, &["init", "-q", "-b", "main"]);
    let sub = f.ws.join("a");
    let nested = sub.join("b");
    std::fs::create_dir_all(&nested).unwrap();
    git(&nested, &["init", "-q", "-b", "main"]);
    git(&nested, &["commit", "-q", "--allow-empty", "-m", "x"]);
    git(&sub, &["init", "-q", "-b", "main"]);
    git(&sub, &["add", "b"]);
    git(&sub, &["commit", "-q", "-m", "x"]);
    git(&f.ws, &["add", "a"]);
    assert_eq!(f.run(&f.inv(&f.ws)).may_run_program(), None);
    let config = nested.join(".git/config");
    let mut c = std::fs::read_to_string(&config).unwrap();
    c.push_str("[core]\n\tfsmonitor = x\n");
    std::fs::write(&config, c).unwrap();
    assert_eq!(keys_of(&f.run(&f.inv(&f.ws))), ["core.fsmonitor"]);
}

#[test]
fn a_git_directory_planted_where_none_was_found_is_found() {
    // The attack on the cache of directories without a repository: judge a
    // command once (the location is remembered as holding no `.git`), plant
    // a repository with an fsmonitor, and judge again.
    let f = fx();
    let sub = f.ws.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    wait_until_settled(&sub);
    wait_until_settled(&f.ws);
    let before = f.run(&f.inv(&sub));
    assert!(before.may_run_program().is_none(), "{before:?}");
    assert!(
        NO_REPOSITORY
            .get_at(&sub, Stamp::of(&std::fs::metadata(&sub).unwrap()))
            .is_some()
    );
    git_dir(&f.ws.join(".git"), FSMONITOR);
    let after = f.run(&f.inv(&sub));
    assert_eq!(keys_of(&after), ["core.fsmonitor"]);
    // A bare repository planted in the remembered directory itself.
    std::fs::remove_dir_all(f.ws.join(".git")).unwrap();
    git_dir(&sub, FSMONITOR);
    let bare = f.run(&f.inv(&sub));
    assert_eq!(bare.git_dir.as_deref(), Some(sub.as_path()));
    assert_eq!(keys_of(&bare), ["core.fsmonitor"]);
}

#[test]
fn a_directory_changed_just_now_is_not_remembered() {
    let f = fx();
    let r = f.run(&f.inv(&f.ws));
    assert!(r.git_dir.is_none() || !r.git_dir.as_ref().unwrap().starts_with(&f.ws));
    let stamp = Stamp::of(&std::fs::metadata(&f.ws).unwrap());
    assert!(NO_REPOSITORY.get_at(&f.ws, stamp).is_none());
}

#[test]
fn a_config_rewritten_at_once_with_the_same_size_is_read_anew() {
    // Two writes in one clock tick can leave the same stamp: a file written
    // within the last second is not cached.
    let f = fx();
    git_dir(&f.ws.join(".git"), "[core]\n\tfsmonitor = false\n");
    assert!(f.run(&f.inv(&f.ws)).may_run_program().is_none());
    // Same length as the line above.
    std::fs::write(f.ws.join(".git/config"), "[core]\n\tfsmonitor = ./evi\n").unwrap();
    assert_eq!(keys_of(&f.run(&f.inv(&f.ws))), ["core.fsmonitor"]);
}

#[test]
fn a_gitfile_a_symlink_or_a_swapped_directory_in_a_remembered_place_is_found() {
    let f = fx();
    let sub = f.ws.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    wait_until_settled(&sub);
    wait_until_settled(&f.ws);
    assert!(f.run(&f.inv(&sub)).may_run_program().is_none());
    // 1. A gitfile pointing at a repository elsewhere.
    git_dir(&f.other.join("r.git"), FSMONITOR);
    std::fs::write(
        sub.join(".git"),
        format!("gitdir: {}\n", f.other.join("r.git").display()),
    )
    .unwrap();
    assert_eq!(keys_of(&f.run(&f.inv(&sub))), ["core.fsmonitor"]);
    std::fs::remove_file(sub.join(".git")).unwrap();
    wait_until_settled(&sub);
    assert!(f.run(&f.inv(&sub)).may_run_program().is_none());
    // 2. A symlink `.git` to a repository.
    std::os::unix::fs::symlink(f.other.join("r.git"), sub.join(".git")).unwrap();
    assert_eq!(keys_of(&f.run(&f.inv(&sub))), ["core.fsmonitor"]);
    std::fs::remove_file(sub.join(".git")).unwrap();
    wait_until_settled(&sub);
    assert!(f.run(&f.inv(&sub)).may_run_program().is_none());
    // 3. The remembered directory replaced by another that holds a repository.
    let repl = f.ws.join("repl");
    git_dir(&repl.join(".git"), FSMONITOR);
    std::fs::remove_dir_all(&sub).unwrap();
    std::fs::rename(&repl, &sub).unwrap();
    assert_eq!(keys_of(&f.run(&f.inv(&sub))), ["core.fsmonitor"]);
}

#[test]
fn an_invocation_is_the_same_survey_only_with_the_same_directory_options_and_environment() {
    let home = Path::new("/home/u");
    let a = GitInvocation::new(Path::new("/p"), home);
    assert!(a.same_survey(&GitInvocation::new(Path::new("/p"), home)));
    assert!(!a.same_survey(&GitInvocation::new(Path::new("/q"), home)));
    assert!(!a.same_survey(&GitInvocation::new(Path::new("/p"), Path::new("/home/v"))));
    let with_c = GitInvocation {
        global_args: vec!["-C".into(), "sub".into()],
        ..GitInvocation::new(Path::new("/p"), home)
    };
    assert!(!a.same_survey(&with_c));
    let with_var = GitInvocation {
        assignments: vec![("GIT_DIR".into(), Some("/x".into()))],
        ..GitInvocation::new(Path::new("/p"), home)
    };
    assert!(!a.same_survey(&with_var));
    // A fixed environment may differ from the process's: never the same.
    let fixed = GitInvocation {
        process_env: ProcessEnv::fixed([("GIT_DIR", "/x")]),
        ..GitInvocation::new(Path::new("/p"), home)
    };
    assert!(!fixed.same_survey(&fixed.clone()));
}
