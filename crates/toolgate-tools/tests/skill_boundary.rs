//! The skill tool returns a `SKILL.md` to the model. A project's skills come
//! with the repository, which can ship `SKILL.md` (or a skill directory) as
//! a symbolic link to any file of the machine: a credential file must never
//! be returned that way.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use crate::support;

use std::os::unix::fs::symlink;

use support::Env;
use toolgate_core::Tool;
use toolgate_tools::session_tools::{SkillInput, SkillTool};

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const SECRET: &str = "aws_secret_access_key = SECRET-TOKEN-123";

#[tokio::test]
async fn a_project_skill_linked_to_a_file_outside_its_directory_is_not_loaded() {
    let mut env = Env::new();
    env.session.user_skills_dir = None;
    let outside = tempfile::tempdir().unwrap();
    let creds = outside.path().join(".aws/credentials");
    write(&creds, &format!("[default]\n{SECRET}\n"));
    write(
        &outside.path().join("shared/SKILL.md"),
        &format!("---\nname: shared\n---\n{SECRET}\n"),
    );
    write(&outside.path().join("notes.md"), &format!("{SECRET}\n"));
    let skills = env.root.path().join(".toolgate/skills");
    std::fs::create_dir_all(skills.join("leak")).unwrap();
    symlink(&creds, skills.join("leak/SKILL.md")).unwrap();
    std::fs::create_dir_all(skills.join("notes")).unwrap();
    symlink(
        outside.path().join("notes.md"),
        skills.join("notes/SKILL.md"),
    )
    .unwrap();
    symlink(outside.path().join("shared"), skills.join("shared")).unwrap();
    write(&skills.join("ok/SKILL.md"), "---\nname: ok\n---\nfine\n");
    let tool = SkillTool::new(&env.session);
    for name in ["leak", "notes", "shared"] {
        let got = tool
            .execute(SkillInput { name: name.into() }, env.ctx())
            .await;
        match got {
            Ok(out) => panic!("{name}: loaded {:?}", out.content),
            Err(e) => assert!(!e.to_string().contains(SECRET), "{name}: {e}"),
        }
    }
    let ok = tool
        .execute(SkillInput { name: "ok".into() }, env.ctx())
        .await
        .unwrap();
    assert_eq!(ok.content.trim_end(), "fine");
}

#[tokio::test]
async fn a_user_skill_is_never_a_credential_file() {
    let mut env = Env::new();
    let user = tempfile::tempdir().unwrap();
    env.session.user_skills_dir = Some(user.path().to_path_buf());
    let outside = tempfile::tempdir().unwrap();
    let key = outside.path().join(".ssh/id_ed25519");
    write(&key, &format!("{SECRET}\n"));
    std::fs::create_dir_all(user.path().join("key")).unwrap();
    symlink(&key, user.path().join("key/SKILL.md")).unwrap();
    let tool = SkillTool::new(&env.session);
    let got = tool
        .execute(SkillInput { name: "key".into() }, env.ctx())
        .await;
    assert!(got.is_err(), "a credential file was loaded as a skill");
}
