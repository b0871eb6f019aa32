//! todowrite, question and skill.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use support::Env;
use tokio_util::sync::CancellationToken;
use toolgate_core::{CallIdentity, PrepareError, Risk, Tool, ToolError, handler};
use toolgate_tools::session_tools::{
    Question, QuestionChannel, QuestionError, QuestionInput, QuestionTool, SkillInput, SkillTool,
    Todo, TodoPriority, TodoStatus, TodoWriteInput, TodoWriteTool,
};

fn todo(content: &str, status: TodoStatus, priority: TodoPriority) -> Todo {
    Todo {
        content: content.into(),
        status,
        priority,
    }
}

#[tokio::test]
async fn todowrite_stores_per_session_and_returns_the_whole_list() {
    let env = Env::new();
    let tool = TodoWriteTool::new(&env.session);
    let list = vec![
        todo("write tests", TodoStatus::InProgress, TodoPriority::High),
        todo("fix bug", TodoStatus::Pending, TodoPriority::Medium),
        todo("old idea", TodoStatus::Cancelled, TodoPriority::Low),
    ];
    let out = tool
        .execute(
            TodoWriteInput {
                todos: list.clone(),
            },
            env.ctx(),
        )
        .await
        .unwrap();
    assert_eq!(out.todos, list);
    assert_eq!(
        (out.pending, out.in_progress, out.completed, out.cancelled),
        (1, 1, 0, 1)
    );
    let path = env.data.path().join("todos/s-session-1.json");
    assert!(path.is_file());
    assert_eq!(tool.load("session-1").unwrap(), list);

    // A new write replaces the list; other sessions are untouched.
    let other = env.ctx_with(CancellationToken::new(), "session-2");
    tool.execute(
        TodoWriteInput {
            todos: vec![todo("b", TodoStatus::Completed, TodoPriority::Low)],
        },
        other,
    )
    .await
    .unwrap();
    let updated = vec![todo(
        "write tests",
        TodoStatus::Completed,
        TodoPriority::High,
    )];
    let out = tool
        .execute(
            TodoWriteInput {
                todos: updated.clone(),
            },
            env.ctx(),
        )
        .await
        .unwrap();
    assert_eq!(out.todos, updated);
    assert_eq!(tool.load("session-1").unwrap(), updated);
    assert_eq!(tool.load("session-2").unwrap().len(), 1);
    assert!(tool.load("never-written").unwrap().is_empty());
    let text = tool.project(&out)[0].as_text().unwrap().to_string();
    assert_eq!(
        text,
        "[x] write tests (high)\n(0 pending, 0 in progress, 1 completed, 0 cancelled)"
    );

    // An empty list is valid: everything cleared.
    let out = tool
        .execute(TodoWriteInput { todos: vec![] }, env.ctx())
        .await
        .unwrap();
    assert!(out.todos.is_empty());
    assert!(tool.load("session-1").unwrap().is_empty());
}

#[tokio::test]
async fn todowrite_session_ids_cannot_escape() {
    let env = Env::new();
    let tool = TodoWriteTool::new(&env.session);
    let ctx = env.ctx_with(CancellationToken::new(), "../../escape");
    tool.execute(
        TodoWriteInput {
            todos: vec![todo("x", TodoStatus::Pending, TodoPriority::Low)],
        },
        ctx,
    )
    .await
    .unwrap();
    let path = tool.list_path("../../escape");
    assert!(
        path.starts_with(env.data.path().join("todos")) && path.is_file(),
        "{}",
        path.display()
    );
    assert!(
        !env.data
            .path()
            .parent()
            .unwrap()
            .join("escape.json")
            .exists()
    );
}

#[tokio::test]
async fn todowrite_bad_inputs() {
    let env = Env::new();
    let h = handler(TodoWriteTool::new(&env.session)).unwrap();
    let loc = env.location();
    let ok = h
        .prepare(
            &json!({"todos": [{"content": "a", "status": "pending", "priority": "high"}]}),
            &loc,
        )
        .unwrap();
    let r = &ok.requests[0];
    assert_eq!((r.action.as_str(), r.risk), ("todowrite", Risk::Read));

    for (input, field, needle) in [
        (
            json!({"todos": [{"content": "a", "status": "done", "priority": "high"}]}),
            "todos[0].status",
            "unknown variant `done`",
        ),
        (
            json!({"todos": [{"content": "a", "status": "pending", "priority": "urgent"}]}),
            "todos[0].priority",
            "unknown variant `urgent`",
        ),
        (
            json!({"todos": [{"content": "a", "status": "pending"}]}),
            "todos[0]",
            "priority",
        ),
        (
            json!({"todos": [{"content": "a", "status": "pending", "priority": "low", "id": 1}]}),
            "todos[0]",
            "id",
        ),
        (json!({"todos": "a"}), "todos", "sequence"),
        (json!({}), ".", "todos"),
    ] {
        match h.prepare(&input, &loc) {
            Err(PrepareError::InvalidInput { field: f, message }) => {
                assert!(f.starts_with(field) || f == ".", "{input}: field {f}");
                assert!(message.contains(needle), "{input}: {message}");
            }
            other => panic!("{input} accepted: {other:?}"),
        }
    }
    match h.prepare(
        &json!({"todos": [{"content": " ", "status": "pending", "priority": "low"}]}),
        &loc,
    ) {
        Err(PrepareError::Intent(e)) => {
            assert!(e.to_string().contains("todos[0].content is empty"), "{e}")
        }
        other => panic!("empty content accepted: {other:?}"),
    }
}

#[tokio::test]
async fn todowrite_unwritable_data_dir_fails() {
    let mut env = Env::new();
    let file = env.data.path().join("file");
    std::fs::write(&file, "x").unwrap();
    env.session.data_dir = file;
    let err = TodoWriteTool::new(&env.session)
        .execute(
            TodoWriteInput {
                todos: vec![todo("x", TodoStatus::Pending, TodoPriority::Low)],
            },
            env.ctx(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("creating"), "{err}");
}

/// A channel that answers from a script, as a person at a terminal would.
struct Scripted {
    answers: Result<Vec<String>, String>,
    delay: Duration,
}

#[async_trait]
impl QuestionChannel for Scripted {
    async fn ask(
        &self,
        caller: &CallIdentity,
        questions: &[Question],
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, QuestionError> {
        assert_eq!(caller.session_id, "session-1");
        assert!(!questions.is_empty());
        tokio::select! {
            () = cancel.cancelled() => Err(QuestionError::Cancelled),
            () = tokio::time::sleep(self.delay) => match &self.answers {
                Ok(a) => Ok(a.clone()),
                Err(m) => Err(QuestionError::Declined(Some(m.clone()))),
            },
        }
    }
}

fn questions() -> QuestionInput {
    QuestionInput {
        questions: vec![
            Question {
                question: "Which database?".into(),
                options: Some(vec!["SQLite".into(), "Postgres".into()]),
            },
            Question {
                question: "Name of the table?".into(),
                options: None,
            },
        ],
    }
}

fn with_channel(env: &mut Env, answers: Result<Vec<String>, String>, delay: Duration) {
    env.session.question = Some(Arc::new(Scripted { answers, delay }));
}

#[tokio::test]
async fn question_asks_through_the_channel() {
    let mut env = Env::new();
    with_channel(
        &mut env,
        Ok(vec!["SQLite".into(), "events".into()]),
        Duration::ZERO,
    );
    let tool = QuestionTool::new(&env.session);
    let out = tool.execute(questions(), env.ctx()).await.unwrap();
    assert_eq!(out.answers.len(), 2);
    assert_eq!(out.answers[0].question, "Which database?");
    assert_eq!(out.answers[0].answer, "SQLite");
    assert_eq!(out.answers[1].answer, "events");
    let text = tool.project(&out)[0].as_text().unwrap().to_string();
    assert_eq!(
        text,
        "Q: Which database?\nA: SQLite\n\nQ: Name of the table?\nA: events"
    );
}

#[tokio::test]
async fn question_failures() {
    let env = Env::new();
    let err = QuestionTool::new(&env.session)
        .execute(questions(), env.ctx())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no question channel is configured"), "{err}");

    let mut env = Env::new();
    with_channel(&mut env, Err("not now".into()), Duration::ZERO);
    let err = QuestionTool::new(&env.session)
        .execute(questions(), env.ctx())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "the user declined to answer: not now");

    with_channel(&mut env, Ok(vec!["only one".into()]), Duration::ZERO);
    let err = QuestionTool::new(&env.session)
        .execute(questions(), env.ctx())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("returned 1 answers for 2 questions"),
        "{err}"
    );

    with_channel(&mut env, Ok(vec![]), Duration::from_secs(30));
    let cancel = CancellationToken::new();
    let ctx = env.ctx_with(cancel.clone(), "session-1");
    let tool = QuestionTool::new(&env.session);
    let call = tokio::spawn(async move { tool.execute(questions(), ctx).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    cancel.cancel();
    assert!(matches!(call.await.unwrap(), Err(ToolError::Cancelled)));
}

#[tokio::test]
async fn question_bad_inputs() {
    let env = Env::new();
    let h = handler(QuestionTool::new(&env.session)).unwrap();
    let loc = env.location();
    let ok = h
        .prepare(&json!({"questions": [{"question": "Go?"}]}), &loc)
        .unwrap();
    let r = &ok.requests[0];
    assert_eq!(
        (r.action.as_str(), r.resource.as_str(), r.risk),
        ("question", "Go?", Risk::Read)
    );
    for (input, needle) in [
        (json!({"questions": []}), "questions is empty"),
        (
            json!({"questions": [{"question": "  "}]}),
            "questions[0].question is empty",
        ),
        (
            json!({"questions": [{"question": "a", "options": ["x", ""]}]}),
            "questions[0].options[1] is empty",
        ),
        (
            json!({"questions": [{"question": "a", "options": ["x", "x"]}]}),
            "repeats",
        ),
    ] {
        match h.prepare(&input, &loc) {
            Err(PrepareError::Intent(e)) => assert!(e.to_string().contains(needle), "{e}"),
            other => panic!("{input} accepted: {other:?}"),
        }
    }
    match h.prepare(
        &json!({"questions": [{"question": "a", "multiple": true}]}),
        &loc,
    ) {
        Err(PrepareError::InvalidInput { message, .. }) => {
            assert!(message.contains("multiple"), "{message}")
        }
        other => panic!("unknown field accepted: {other:?}"),
    }
}

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn skill_loads_project_skill_with_files() {
    let mut env = Env::new();
    let user = tempfile::tempdir().unwrap();
    env.session.user_skills_dir = Some(user.path().to_path_buf());
    let skills = env.root.path().join(".toolgate/skills");
    write(
        &skills.join("pdf-tools/SKILL.md"),
        "---\nname: pdf\ndescription: Fill and merge PDF forms\n---\n# PDF\nUse scripts/fill.py.\n",
    );
    for i in 0..11 {
        write(
            &skills.join(format!("pdf-tools/scripts/s{i:02}.py")),
            "print()",
        );
    }
    write(&skills.join("pdf-tools/.hidden"), "x");
    write(&skills.join("pdf-tools/reference.md"), "ref");
    write(
        &user.path().join("pdf/SKILL.md"),
        "---\nname: pdf\ndescription: user copy\n---\nshadowed\n",
    );
    write(
        &user.path().join("notes/SKILL.md"),
        "No frontmatter: named after its directory.\n",
    );

    let tool = SkillTool::new(&env.session);
    let out = tool
        .execute(SkillInput { name: "pdf".into() }, env.ctx())
        .await
        .unwrap();
    assert_eq!(out.name, "pdf");
    assert_eq!(out.scope, "project");
    assert_eq!(out.description, "Fill and merge PDF forms");
    assert_eq!(out.content, "# PDF\nUse scripts/fill.py.");
    let dir = env.root().join(".toolgate/skills/pdf-tools");
    assert_eq!(out.dir, dir.display().to_string());
    assert_eq!(out.files.len(), 10);
    assert!(out.more_files);
    assert_eq!(out.files[0], dir.join("reference.md").display().to_string());
    assert_eq!(
        out.files[1],
        dir.join("scripts/s00.py").display().to_string()
    );
    assert!(
        out.files
            .iter()
            .all(|f| !f.ends_with(".hidden") && !f.ends_with("SKILL.md"))
    );

    let user_skill = tool
        .execute(
            SkillInput {
                name: "notes".into(),
            },
            env.ctx(),
        )
        .await
        .unwrap();
    assert_eq!(user_skill.scope, "user");
    assert_eq!(
        user_skill.content,
        "No frontmatter: named after its directory.\n"
    );
    assert!(user_skill.files.is_empty() && !user_skill.more_files);

    let text = tool.project(&out)[0].as_text().unwrap().to_string();
    assert!(
        text.starts_with("# Skill: pdf\n") && text.contains("- … (more files not listed)"),
        "{text}"
    );
}

#[tokio::test]
async fn unknown_skill_lists_available_ones() {
    let mut env = Env::new();
    env.session.user_skills_dir = None;
    let tool = SkillTool::new(&env.session);
    let err = tool
        .execute(SkillInput { name: "x".into() }, env.ctx())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown skill \"x\": no skills are installed"),
        "{err}"
    );
    assert!(err.contains(".toolgate/skills/*/SKILL.md"), "{err}");

    let skills = env.root.path().join(".toolgate/skills");
    write(
        &skills.join("a/SKILL.md"),
        "---\nname: alpha\ndescription: first\n---\n",
    );
    write(&skills.join("b/SKILL.md"), "---\nname: beta\n---\n");
    std::fs::create_dir_all(skills.join("not-a-skill")).unwrap();
    let err = tool
        .execute(
            SkillInput {
                name: "gamma".into(),
            },
            env.ctx(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "invalid input: unknown skill \"gamma\"; available skills:\n- alpha: first\n- beta"
    );

    let h = handler(SkillTool::new(&env.session)).unwrap();
    let loc = env.location();
    let call = h.prepare(&json!({"name": "alpha"}), &loc).unwrap();
    let r = &call.requests[0];
    assert_eq!(
        (r.action.as_str(), r.resource.as_str(), r.risk),
        ("skill", "alpha", Risk::Read)
    );
    assert!(matches!(
        h.prepare(&json!({"name": ""}), &loc),
        Err(PrepareError::Intent(_))
    ));
    assert!(matches!(
        h.prepare(&json!({"name": "a", "args": "x"}), &loc),
        Err(PrepareError::InvalidInput { .. })
    ));
}

/// A channel whose terminal is gone: reading it fails with a real I/O error.
struct GoneTerminal(std::path::PathBuf);

#[async_trait]
impl QuestionChannel for GoneTerminal {
    async fn ask(
        &self,
        _caller: &CallIdentity,
        _questions: &[Question],
        _cancel: &CancellationToken,
    ) -> Result<Vec<String>, QuestionError> {
        let line = std::fs::read_to_string(&self.0).map_err(|e| {
            QuestionError::Failed(toolgate_core::Failure::caused(
                "cannot read the terminal",
                e,
            ))
        })?;
        Ok(vec![line])
    }
}

#[tokio::test]
async fn a_failed_question_keeps_the_channels_io_error() {
    let mut env = Env::new();
    env.session.question = Some(Arc::new(GoneTerminal(env.root().join("no-tty"))));
    let tool = QuestionTool::new(&env.session);
    let err = tool.execute(questions(), env.ctx()).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("could not ask the user: cannot read the terminal: "),
        "{err}"
    );
    assert_eq!(
        support::io_cause_kind(&err),
        Some(std::io::ErrorKind::NotFound),
        "{err}"
    );
}
