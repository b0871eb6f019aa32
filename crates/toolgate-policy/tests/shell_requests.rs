//! The shape of what `shell::analyze` returns: actions, resources, save
//! patterns, notes and working directories that the gate codes against.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use fixture::Fixture;
use toolgate_core::Risk;
use toolgate_policy::shell::ShellRequest;
use toolgate_policy::test_util::wait_until_settled;

fn find<'a>(parts: &'a [ShellRequest], action: &str, resource: &str) -> &'a ShellRequest {
    parts
        .iter()
        .find(|p| p.request.action == action && p.request.resource == resource)
        .unwrap_or_else(|| {
            let all: Vec<String> = parts
                .iter()
                .map(|p| format!("{} {:?}", p.request.action, p.request.resource))
                .collect();
            panic!("no {action} {resource:?} among {all:?}")
        })
}

#[test]
fn one_bash_request_per_simple_command_with_its_arity_pattern() {
    let fx = Fixture::new();
    let parts = fx.analyze("git status && npm run build -- --watch | cargo test -p core; ls -la");
    let bash: Vec<_> = parts
        .iter()
        .filter(|p| p.request.action == "bash")
        .map(|p| {
            (
                p.request.resource.as_str(),
                p.request.save_pattern.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        bash,
        // The prefix only where nothing follows it but operands; a script
        // run (`npm run`) or any option saves the exact command (issue 25).
        vec![
            ("git status", Some("git status *")),
            ("npm run build -- --watch", Some("npm run build -- --watch")),
            ("cargo test -p core", Some("cargo test -p core")),
            ("ls -la", Some("ls -la")),
        ]
    );
    for p in &parts {
        assert!(!p.opaque);
        assert_eq!(
            p.request.cwd.as_deref(),
            Some(fx.ws.to_str().unwrap()),
            "{p:?}"
        );
    }
}

#[test]
fn destructive_and_opaque_parts_never_carry_a_save_pattern() {
    let fx = Fixture::new();
    let parts = fx.analyze("git push --force; eval \"$X\"; ls");
    let push = find(&parts, "bash", "git push --force");
    assert_eq!(push.request.risk, Risk::Destructive);
    assert_eq!(push.request.save_pattern, None);
    let eval = find(&parts, "bash", "eval \"$X\"");
    assert!(eval.opaque);
    assert!(eval.reason.starts_with("opaque: "), "{}", eval.reason);
    assert_eq!(eval.request.save_pattern, None);
    assert_eq!(
        find(&parts, "bash", "ls").request.save_pattern.as_deref(),
        Some("ls *")
    );
    // An argument only known at run time: no pattern could cover what it becomes.
    let parts = fx.analyze("rm $FILES");
    assert_eq!(parts[0].request.save_pattern, None);
}

#[test]
fn wrappers_are_kept_in_the_resource_and_the_pattern() {
    let fx = Fixture::new();
    let parts = fx.analyze("FOO=1 timeout 5 git push origin main");
    assert_eq!(parts.len(), 1);
    let r = &parts[0].request;
    assert_eq!(r.resource, "FOO=1 timeout 5 git push origin main");
    assert_eq!(r.risk, Risk::Network);
    // A wrapper runs the command its arguments name: the exact command.
    assert_eq!(
        r.save_pattern.as_deref(),
        Some("FOO=1 timeout 5 git push origin main")
    );
    let parts = fx.analyze("FOO=1 git push origin main");
    assert_eq!(
        parts[0].request.save_pattern.as_deref(),
        Some("FOO=1 git push *")
    );
    let sudo = fx.analyze("sudo apt-get install jq");
    assert_eq!(sudo[0].request.risk, Risk::Network);
    assert!(
        sudo[0]
            .request
            .note
            .as_deref()
            .unwrap_or("")
            .contains("sudo"),
        "{:?}",
        sudo[0].request.note
    );
    let sudo_ls = fx.analyze("sudo ls");
    assert_eq!(sudo_ls[0].request.risk, Risk::Execute);
}

#[test]
fn bash_c_literal_is_parsed_into_its_own_parts() {
    let fx = Fixture::new();
    let parts = fx.analyze("bash -c 'git status && rm -rf src'");
    let commands: Vec<&ShellRequest> = parts
        .iter()
        .filter(|p| p.request.action == "bash")
        .collect();
    let resources: Vec<&str> = commands
        .iter()
        .map(|p| p.request.resource.as_str())
        .collect();
    assert_eq!(resources, vec!["git status", "rm -rf src"]);
    assert_eq!(commands[1].request.risk, Risk::Destructive);
    // What it removes is judged as a write of that path too.
    find(&parts, "edit", fx.ws.join("src").to_str().unwrap());
}

#[test]
fn redirects_become_edit_requests_on_resolved_paths() {
    let fx = Fixture::new();
    let parts = fx.analyze("echo a > out.txt; echo b >> data.txt; ls 2>/dev/null");
    let new = find(&parts, "edit", fx.ws.join("out.txt").to_str().unwrap());
    assert_eq!(new.request.risk, Risk::Write);
    assert_eq!(new.request.note.as_deref(), Some("create"));
    let append = find(&parts, "edit", fx.ws.join("data.txt").to_str().unwrap());
    assert_eq!(append.request.note.as_deref(), Some("append"));
    assert!(
        !parts
            .iter()
            .any(|p| p.request.resource.contains("/dev/null"))
    );
    // Over an existing file outside the location: destructive, plus the directory.
    let parts = fx.analyze("echo x > {out}/file.txt");
    let edit = find(&parts, "edit", fx.out.join("file.txt").to_str().unwrap());
    assert_eq!(edit.request.risk, Risk::Destructive);
    assert_eq!(edit.request.note.as_deref(), Some("overwrite"));
    let dir = find(&parts, "external_directory", fx.out.to_str().unwrap());
    assert_eq!(dir.request.risk, Risk::Execute);
}

#[test]
fn secrets_are_read_or_edit_requests_with_credential_risk() {
    let fx = Fixture::new();
    let parts = fx.analyze("cat .env");
    let read = find(&parts, "read", fx.ws.join(".env").to_str().unwrap());
    assert_eq!(read.request.risk, Risk::Credential);
    let parts = fx.analyze("cp data.txt .env.local");
    let edit = find(&parts, "edit", fx.ws.join(".env.local").to_str().unwrap());
    assert_eq!(edit.request.risk, Risk::Credential);
    // Through a symlink: the resolved target is what is judged.
    let parts = fx.analyze("cat settings.cfg");
    find(&parts, "read", fx.ws.join(".env").to_str().unwrap());
    // Templates are not secrets.
    let parts = fx.analyze("cat .env.example");
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].request.risk, Risk::Read);
}

#[test]
fn paths_outside_raise_one_level_and_name_the_directory() {
    let fx = Fixture::new();
    let parts = fx.analyze("cat {out}/sub/deep.txt");
    let dir = find(
        &parts,
        "external_directory",
        fx.out.join("sub").to_str().unwrap(),
    );
    assert_eq!(dir.request.risk, Risk::Write);
    let parts = fx.analyze("rm {out}/file.txt");
    let dir = find(&parts, "external_directory", fx.out.to_str().unwrap());
    assert_eq!(dir.request.risk, Risk::Execute);
    // A symlink inside that leads out is asked every time.
    let parts = fx.analyze("cat link_file_out");
    assert!(
        parts
            .iter()
            .any(|p| p.request.action == "external_directory"
                && p.request.risk == Risk::Destructive
                && p.request.save_pattern.is_none()),
        "{parts:?}"
    );
}

#[test]
fn cd_changes_where_later_paths_resolve() {
    let fx = Fixture::new();
    let parts = fx.analyze("cd src && cat main.rs > ../copy.rs");
    let cat = find(&parts, "bash", "cat main.rs");
    assert_eq!(
        cat.request.cwd.as_deref(),
        Some(fx.ws.join("src").to_str().unwrap())
    );
    find(&parts, "edit", fx.ws.join("copy.rs").to_str().unwrap());
    // A subshell's `cd` does not last.
    let parts = fx.analyze("(cd src) && echo x > out.txt");
    find(&parts, "edit", fx.ws.join("out.txt").to_str().unwrap());
    // `cd` to a directory only known at run time: later relative paths are not
    // trusted, and their commands cannot be saved.
    let parts = fx.analyze("cd \"$D\" && cat notes.txt");
    let cat = find(&parts, "bash", "cat notes.txt");
    assert!(cat.request.risk >= Risk::Write);
    assert_eq!(cat.request.save_pattern, None);
    assert_eq!(cat.request.cwd, None);
}

#[test]
fn code_loading_variables_make_later_commands_execute() {
    let fx = Fixture::new();
    let parts = fx.analyze("export PATH=./bin:$PATH; ls");
    assert_eq!(find(&parts, "bash", "ls").request.risk, Risk::Execute);
    let parts = fx.analyze("LD_PRELOAD=./x.so cat README.md");
    assert_eq!(parts[0].request.risk, Risk::Execute);
    // Only variables known to change formatting keep a read a read; any other
    // may point the program at other configuration (`GREP_OPTIONS`, `HOME`).
    let parts = fx.analyze("LC_ALL=C cat README.md");
    assert_eq!(parts[0].request.risk, Risk::Read);
    let parts = fx.analyze("FOO=1 cat README.md");
    assert_eq!(parts[0].request.risk, Risk::Execute);
}

/// tree-sitter-bash reads `a | b | c && d` as `a | (b | c && d)`; bash runs
/// `(a | b | c) && d`, so a `cd` after a long pipeline lasts for what follows.
#[test]
fn a_cd_after_a_long_pipeline_lasts_for_the_rest_of_the_line() {
    use toolgate_policy::shell::analyze_with_grammar;
    let fx = Fixture::new();
    let home_config = fx.home.join(".config");
    for line in [
        "true | true | true && cd ../home/.config && cat gh/hosts.yml",
        "true | true | true && cd ../home/.config && cat \"gh/hosts.yml\"",
        "true | true | true && cd \"../home/.config\" && cat gh/hosts.yml",
        "true | true | ls && pushd ../home/.config; cat gh/hosts.yml",
    ] {
        let text = fx.expand(line);
        for parts in [fx.analyze(line), analyze_with_grammar(&text, &fx.ctx(""))] {
            let secret = home_config.join("gh/hosts.yml");
            let read = find(&parts, "read", secret.to_str().unwrap());
            assert_eq!(read.request.risk, Risk::Credential, "{line}");
            let cat = parts
                .iter()
                .find(|p| p.request.resource.starts_with("cat "))
                .unwrap();
            assert_eq!(
                cat.request.cwd.as_deref(),
                Some(home_config.to_str().unwrap()),
                "{line}"
            );
        }
    }
    // A `cd` inside the pipeline itself still does not last.
    let parts = fx.analyze("true | cd ../home/.config | true && cat gh/hosts.yml");
    let cat = parts
        .iter()
        .find(|p| p.request.resource.starts_with("cat "))
        .unwrap();
    assert_eq!(cat.request.cwd.as_deref(), Some(fx.ws.to_str().unwrap()));
}

/// A line the grammar cannot read exactly is opaque, and what its pieces
/// would run still raises it: an opaque `ask` never hides a destructive
/// command, a secret or the network behind it.
#[test]
fn an_opaque_line_never_hides_what_its_pieces_run() {
    let fx = Fixture::new();
    for (command, at_least) in [
        ("! for i in 1; do rm -rf src; done", Risk::Destructive),
        ("! function f { rm -rf src; }", Risk::Destructive),
        ("cat <<EOF; cat < .env\nx\nEOF", Risk::Credential),
        (
            "case x in x) cat <<EOF; curl https://example.invalid\nx\nEOF;; esac",
            Risk::Network,
        ),
    ] {
        let parts = fx.analyze(command);
        let top = parts.iter().map(|p| p.request.risk).max().unwrap();
        assert!(top >= at_least, "{command:?}: {top} < {at_least}");
        assert!(
            parts.iter().any(|p| p.opaque),
            "{command:?} should be opaque"
        );
    }
}

fn credential_reads(parts: &[ShellRequest]) -> Vec<String> {
    parts
        .iter()
        .filter(|p| p.request.risk == Risk::Credential)
        .map(|p| p.request.resource.clone())
        .collect()
}

#[test]
fn a_link_planted_where_a_remembered_listing_saw_nothing_is_judged() {
    let fx = Fixture::new();
    wait_until_settled(&fx.ws);
    // Seen several times under one settled stamp: the workspace's names are
    // remembered, and `core` and `pkg` are among the missing.
    for _ in 0..3 {
        let parts = fx.analyze("cargo test -p core pkg");
        assert!(credential_reads(&parts).is_empty(), "{parts:?}");
    }
    // Planted afterwards: a symlink and a hard link to the key.
    std::os::unix::fs::symlink(fx.home.join(".ssh/id_ed25519"), fx.ws.join("core")).unwrap();
    std::fs::hard_link(fx.home.join(".ssh/id_ed25519"), fx.ws.join("pkg")).unwrap();
    let found = |parts: &[ShellRequest]| {
        let creds = credential_reads(parts);
        assert!(
            creds.iter().any(|r| r.ends_with(".ssh/id_ed25519")) && creds.len() >= 2,
            "{creds:?} in {parts:?}"
        );
    };
    found(&fx.analyze("cargo test -p core pkg"));
    // Still, once the new state has settled and is listed in its turn.
    wait_until_settled(&fx.ws);
    for _ in 0..3 {
        found(&fx.analyze("cargo test -p core pkg"));
    }
}

/// The same attack in other forms: a link renamed into place, one planted
/// in a subdirectory, and one read through a wrapper.
#[test]
fn a_link_renamed_nested_or_read_through_a_wrapper_after_a_listing_is_judged() {
    let fx = Fixture::new();
    let commands = [
        "cargo test -p moved",
        "cat src/nested_key",
        "timeout 5 cat wrapped",
    ];
    wait_until_settled(&fx.ws);
    wait_until_settled(&fx.ws.join("src"));
    for _ in 0..3 {
        for c in commands {
            let parts = fx.analyze(c);
            assert!(credential_reads(&parts).is_empty(), "{c}: {parts:?}");
        }
    }
    let key = fx.home.join(".ssh/id_ed25519");
    // Made elsewhere, then renamed in: the directory changes all the same.
    std::os::unix::fs::symlink(&key, fx.out.join("staged")).unwrap();
    std::fs::rename(fx.out.join("staged"), fx.ws.join("moved")).unwrap();
    std::os::unix::fs::symlink(&key, fx.ws.join("src/nested_key")).unwrap();
    std::fs::hard_link(&key, fx.ws.join("wrapped")).unwrap();
    for c in commands {
        let parts = fx.analyze(c);
        assert!(!credential_reads(&parts).is_empty(), "{c}: {parts:?}");
    }
}
