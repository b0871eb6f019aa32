//! Configuration that runs code is protected by shape (issue 25, point 1):
//! a write that makes another program run code later — a named file of the
//! path-facts table (`lefthook.yml`, `mise.toml`, `opencode.json`…) or any
//! other dot-path of the location — is never allowed by a mode; only a
//! rule that names the path, or a person, lets it through. Inert dotfiles,
//! and paths git ignored before the call, stay routine. The same rule
//! judges what a confined command changed, before it lands.
//!
//! Each test is named for the attack it holds.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::intent;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use intent::builtin_intent;
use serde_json::{Value, json};
use toolgate_core::{DecisionSource, Effect, Gate, GateCall, Location, PermissionRequest, Risk};
use toolgate_policy::approvals::{
    Answer, ApprovalChannel, ApprovalStore, ApprovalStoreError, AskPrompt, ChannelError,
    SavedApproval,
};
use toolgate_policy::check::{CheckOutcome, check};
use toolgate_policy::config::Mode;
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::policy::{NoApprovals, Policy};
use toolgate_policy::rules::Layer;

struct Ws {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    loc: Location,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A git work tree with a project's usual ignore rules.
fn ws() -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (root, home) = (base.join("ws"), base.join("home"));
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join(".git/info")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    write(
        &root.join(".gitignore"),
        "node_modules/\ntarget/\n.venv/\n.pytest_cache/\n__pycache__/\ndist/\n.next/\n.idea/\n",
    );
    write(&root.join("src/main.rs"), "fn main() {}\n");
    write(&root.join("package.json"), "{}\n");
    let loc = Location::new(&root).unwrap();
    Ws {
        _dir: dir,
        root,
        home,
        loc,
    }
}

fn policy(w: &Ws, mode: Mode, texts: &[(&str, Layer, &str)]) -> Policy {
    let mut p = Policy::from_texts(&w.root, &w.home, texts, Some(mode)).unwrap();
    p.set_sandbox_available(true);
    p
}

fn call(w: &Ws, p: &Policy, tool: &str, input: Value) -> CheckOutcome {
    let requests = builtin_intent(tool, &input, &w.loc).unwrap();
    check(p, requests, &w.loc, &NoApprovals)
}

fn write_call(w: &Ws, p: &Policy, rel: &str) -> CheckOutcome {
    call(
        w,
        p,
        "write",
        json!({ "path": w.root.join(rel), "content": "x\n" }),
    )
}

/// Every mode that lets ordinary writes of the location through.
const LOOSE: &[Mode] = &[Mode::AcceptEdits, Mode::Auto];

fn assert_protected(rels: &[&str]) {
    let w = ws();
    for &mode in LOOSE {
        let p = policy(&w, mode, &[]);
        for rel in rels {
            let o = write_call(&w, &p, rel);
            assert_ne!(o.decision, Effect::Allow, "{rel} in {mode}: {}", o.reason);
            assert!(
                o.reason.contains("protected"),
                "{rel} in {mode}: {}",
                o.reason
            );
            let edit = call(
                &w,
                &p,
                "bash",
                json!({ "command": format!("echo x > '{}'", w.root.join(rel).display()) }),
            );
            assert_ne!(edit.decision, Effect::Allow, "redirect to {rel} in {mode}");
        }
    }
}

#[test]
fn write_to_lefthook_yml_is_protected() {
    assert_protected(&[
        "lefthook.yml",
        "lefthook.yaml",
        "lefthook-local.yml",
        "lefthook.toml",
        "packages/web/lefthook.yml",
    ]);
}

#[test]
fn write_to_other_git_hook_managers_is_protected() {
    assert_protected(&[
        ".githooks/pre-commit",
        ".lintstagedrc",
        ".lintstagedrc.json",
        "lint-staged.config.js",
        "simple-git-hooks.json",
        ".simple-git-hooks.cjs",
        ".overcommit.yml",
        ".husky/pre-push",
    ]);
}

#[test]
fn write_to_mise_toml_and_files_run_on_cd_is_protected() {
    assert_protected(&[
        "mise.toml",
        "mise.local.toml",
        ".mise.toml",
        "mise/config.toml",
        ".config/mise/config.toml",
        ".rvmrc",
        ".envrc",
        ".autoenv.zsh",
    ]);
}

#[test]
fn write_to_other_agents_and_editors_configs_is_protected() {
    assert_protected(&[
        "opencode.json",
        "opencode.jsonc",
        ".opencode/agent/x.md",
        ".vscode/mcp.json",
        ".vscode/launch.json",
        ".zed/settings.json",
        ".continue/config.yaml",
        ".roo/mcp.json",
        ".roomodes",
        ".windsurf/workflows/x.md",
        ".kiro/hooks/on-save.json",
        ".amazonq/mcp.json",
        "crush.json",
        ".aider.conf.yml",
        ".nvim.lua",
        ".exrc",
        ".dir-locals.el",
        ".helix/languages.toml",
    ]);
}

#[test]
fn write_to_an_ignored_editor_directory_of_the_table_is_protected() {
    // `.idea/` is ignored by this project, but the IDE loads its run
    // configurations all the same: the table wins over the ignore rules.
    assert_protected(&[".idea/workspace.xml", ".idea/runConfigurations/x.xml"]);
}

#[test]
fn write_to_dev_environment_configs_is_protected() {
    assert_protected(&[
        ".devcontainer/devcontainer.json",
        ".devcontainer/post-create.sh",
        ".devcontainer.json",
        "devcontainer.json",
        ".gitpod.yml",
        ".replit",
        "devbox.json",
    ]);
}

#[test]
fn write_to_files_programs_load_at_start_is_protected() {
    assert_protected(&[
        ".yarnrc.yml",
        ".yarnrc",
        ".pnpmfile.cjs",
        "bunfig.toml",
        ".Rprofile",
        ".irbrc",
        ".pryrc",
        ".pdbrc",
        ".gdbinit",
        ".ghci",
        ".jvmopts",
        ".mvn/extensions.xml",
        "gradle/wrapper/gradle-wrapper.properties",
        "gradle.properties",
        ".bazelrc",
        ".cargo/config.toml",
        "rust-toolchain.toml",
        "rust-toolchain",
    ]);
}

/// A command (a package's install script, a test) that writes `CLAUDE.md`
/// or `AGENTS.md` plants instructions every later session of that agent
/// loads on its own and obeys; with the dot-paths of the agents' configs
/// protected, these names at any depth were not.
#[test]
fn a_write_cannot_plant_instructions_for_the_next_agent_session() {
    assert_protected(&[
        "AGENTS.md",
        "services/api/AGENTS.md",
        "agents.md",
        "AGENTS.override.md",
        "CLAUDE.md",
        "docs/CLAUDE.md",
        "CLAUDE.local.md",
        "GEMINI.md",
        "CRUSH.md",
        "crush.local.md",
        "QWEN.md",
        "docs/WARP.md",
        "AGENT.md",
        "AmazonQ.md",
    ]);
}

#[test]
fn write_to_ci_files_is_protected() {
    assert_protected(&[
        "Jenkinsfile",
        "cloudbuild.yaml",
        "cloudbuild.yml",
        "azure-pipelines.yml",
        "azure-pipelines.yaml",
        "bitbucket-pipelines.yml",
        ".gitea/workflows/ci.yml",
        ".forgejo/workflows/ci.yml",
        ".woodpecker.yml",
        ".woodpecker/build.yml",
        ".gitlab/ci/build.yml",
        "appveyor.yml",
        ".cirrus.yml",
        "buildspec.yml",
        "codemagic.yaml",
        ".semaphore/semaphore.yml",
        ".builds/x.yml",
        "netlify.toml",
        "vercel.json",
        "Procfile",
    ]);
}

#[test]
fn write_to_an_unlisted_dot_path_is_protected_by_its_shape() {
    assert_protected(&[
        ".eslintrc.js",
        ".babelrc",
        ".mocharc.yml",
        ".github/dependabot.yml",
        ".gitattributes",
        ".gitmodules",
        ".tool-versions",
        ".some-new-agent/config.json",
        "packages/app/.hidden/run.sh",
        ".config/anything.toml",
        ".Trae/rules/x.md",
    ]);
}

#[test]
fn write_to_the_ignore_files_that_decide_what_is_spared_is_protected() {
    assert_protected(&[".gitignore", "src/.gitignore", ".git/info/exclude"]);
}

#[test]
fn write_to_what_git_runs_or_obeys_is_protected() {
    assert_protected(&[
        ".git/config",
        ".git/hooks/post-checkout",
        ".git/objects/info/alternates",
        ".git/commondir",
        ".git/modules/sub/config",
        ".git/worktrees/wt/gitdir",
    ]);
}

#[test]
fn neither_a_bare_wildcard_nor_a_mode_allows_a_dot_path() {
    let w = ws();
    let p = policy(
        &w,
        Mode::AcceptEdits,
        &[(
            "user.toml",
            Layer::User,
            "[permission.edit]\n\"*\" = \"allow\"\n\"**\" = \"allow\"\n",
        )],
    );
    for rel in [".eslintrc.cjs", "lefthook.yml", ".zed/tasks.json"] {
        let o = write_call(&w, &p, rel);
        assert_ne!(o.decision, Effect::Allow, "{rel}: {}", o.reason);
    }
    // A rule that names the place does.
    let named = policy(
        &w,
        Mode::AcceptEdits,
        &[(
            "user.toml",
            Layer::User,
            "[permission.edit]\n\".eslintrc.cjs\" = \"allow\"\n",
        )],
    );
    assert_eq!(
        write_call(&w, &named, ".eslintrc.cjs").decision,
        Effect::Allow
    );
}

#[test]
fn inert_dotfiles_and_ignored_output_stay_routine() {
    let w = ws();
    for &mode in LOOSE {
        let p = policy(&w, mode, &[]);
        for rel in [
            ".editorconfig",
            ".dockerignore",
            "web/.prettierignore",
            ".eslintignore",
            "src/.gitkeep",
            ".mailmap",
            "node_modules/.bin/eslint",
            "node_modules/.package-lock.json",
            "target/debug/.fingerprint/x/lib",
            ".venv/bin/activate",
            ".pytest_cache/v/cache/nodeids",
            "src/__pycache__/x.pyc",
            ".next/cache/x",
            "src/util.rs",
            "docs/guide.md",
        ] {
            let o = write_call(&w, &p, rel);
            assert_eq!(o.decision, Effect::Allow, "{rel} in {mode}: {}", o.reason);
        }
    }
}

#[test]
fn routine_work_stays_unasked_in_auto() {
    let w = ws();
    // A new user's config, as the friction benchmark's: the registries.
    let registries = "[sandbox]\nallow_domains = [\"registry.npmjs.org\", \"pypi.org\", \"files.pythonhosted.org\"]\n";
    let p = policy(&w, Mode::Auto, &[("user.toml", Layer::User, registries)]);
    for command in [
        "npm install",
        "npm ci",
        "cargo build",
        "cargo test",
        "pytest",
        "python3 -m pytest -q",
        "python3 -m venv .venv",
        "git add -A",
        "git commit -m work",
        "git checkout -b feature",
        "go build ./...",
        "make",
    ] {
        let o = call(&w, &p, "bash", json!({ "command": command }));
        assert_eq!(o.decision, Effect::Allow, "{command}: {}", o.reason);
    }
}

/// The staged-write judgement: what a confined command changed.
struct NoStore;

impl ApprovalStore for NoStore {
    fn save(&self, _: &str, _: &str, _: &str) -> Result<SavedApproval, ApprovalStoreError> {
        Err(ApprovalStoreError::NotFound(0))
    }
    fn list_project(&self, _: &str) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        Ok(Vec::new())
    }
    fn list_all(&self) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        Ok(Vec::new())
    }
    fn revoke(&self, id: i64) -> Result<SavedApproval, ApprovalStoreError> {
        Err(ApprovalStoreError::NotFound(id))
    }
}

struct Nobody;

#[async_trait]
impl ApprovalChannel for Nobody {
    async fn ask(&self, _: &AskPrompt) -> Result<Answer, ChannelError> {
        Err(ChannelError::Unavailable("nobody in a test".into()))
    }
}

/// The landing judgement of `requests`, made by a command allowed in mode
/// `auto`.
fn judge_staged(w: &Ws, requests: Vec<PermissionRequest>) -> Vec<toolgate_core::Judged> {
    let gate = PolicyGate::new(
        policy(w, Mode::Auto, &[]),
        Arc::new(NoStore),
        Arc::new(Nobody),
    );
    let input = json!({ "command": "npm install" });
    let call = GateCall {
        tool: "bash",
        input: &input,
        location: &w.loc,
        session_id: "s",
        call_id: "c",
        preview: None,
    };
    gate.evaluate_staged(&call, requests).unwrap()
}

fn staged(w: &Ws, rels: &[&str]) -> Vec<(String, Effect, DecisionSource)> {
    let requests = rels
        .iter()
        .map(|rel| {
            let mut path = w.root.join(rel.trim_end_matches('/')).display().to_string();
            if rel.ends_with('/') {
                path.push('/');
            }
            PermissionRequest::path("edit", path, Risk::Write).with_save_pattern(None)
        })
        .collect();
    judge_staged(w, requests)
        .into_iter()
        .map(|j| (j.request.resource, j.decision.effect, j.decision.source))
        .collect()
}

#[test]
fn a_confined_command_that_writes_configuration_does_not_land_it_unasked() {
    let w = ws();
    for (path, effect, _) in staged(
        &w,
        &[
            "lefthook.yml",
            ".husky/pre-commit",
            ".vscode/mcp.json",
            ".eslintrc.js",
            ".gitignore",
            ".git/config",
            ".git/hooks/pre-commit",
            ".some-dir/",
            "mise.toml",
            ".idea/workspace.xml",
        ],
    ) {
        assert_ne!(effect, Effect::Allow, "{path}");
    }
}

#[test]
fn a_confined_build_lands_its_output_and_git_data_unasked() {
    let w = ws();
    for (path, effect, source) in staged(
        &w,
        &[
            "node_modules/",
            "node_modules/.bin/",
            "node_modules/.bin/eslint",
            "node_modules/.package-lock.json",
            "target/debug/.fingerprint/demo/lib",
            ".venv/",
            ".venv/bin/python",
            ".pytest_cache/",
            ".pytest_cache/v/cache/lastfailed",
            ".git/objects/ab/cdef",
            ".git/refs/heads/main",
            ".git/logs/HEAD",
            ".git/index",
            ".git/HEAD",
            ".git/COMMIT_EDITMSG",
            ".git/ORIG_HEAD",
            "src/main.rs",
            ".editorconfig",
        ],
    ) {
        assert_eq!(
            (effect, source),
            (Effect::Allow, DecisionSource::Sandbox),
            "{path}"
        );
    }
}

/// A file named as a secret (`cacert.pem`) that a confined command created
/// with certificates only lands unasked, as the landing judgement marks it
/// from its bytes; unmarked, or named as a secret by a directory (`.ssh/`),
/// it does not.
#[test]
fn a_created_file_of_certificates_only_lands_and_an_unmarked_one_does_not() {
    let w = ws();
    let request = |rel: &str, certificates_only: bool| {
        PermissionRequest::path("edit", w.root.join(rel).display().to_string(), Risk::Write)
            .with_save_pattern(None)
            .with_certificates_only(certificates_only)
    };
    let judged = judge_staged(
        &w,
        vec![
            request("vendor/certifi/cacert.pem", true),
            request("certs/server.pem", false),
            request("deploy/.ssh/known.pem", true),
        ],
    );
    let effects: Vec<(Effect, DecisionSource)> = judged
        .iter()
        .map(|j| (j.decision.effect, j.decision.source))
        .collect();
    assert_eq!(
        effects[0],
        (Effect::Allow, DecisionSource::Sandbox),
        "{judged:?}"
    );
    assert_ne!(effects[1].0, Effect::Allow, "{judged:?}");
    assert_ne!(effects[2].0, Effect::Allow, "{judged:?}");
}

/// The mark is never read from a client: a request deserialised from JSON
/// (the policy oracle, a hook) that claims it is judged unmarked.
#[test]
fn the_certificates_mark_cannot_be_claimed_from_outside() {
    let request: PermissionRequest = serde_json::from_value(json!({
        "action": "edit", "resource": "/ws/cacert.pem", "kind": "path",
        "risk": "write", "save_pattern": null, "certificates_only": true
    }))
    .unwrap();
    assert!(!request.certificates_only);
    let wire = serde_json::to_value(
        PermissionRequest::path("edit", "/ws/a.pem", Risk::Write).with_certificates_only(true),
    )
    .unwrap();
    assert!(wire.get("certificates_only").is_none(), "{wire}");
}
