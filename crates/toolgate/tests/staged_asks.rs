//! A confined command's writes to protected paths are asked of a person as
//! one request with the diff: approved, they land; rejected, they are
//! discarded and the result names them. Plain writes beside them land
//! unasked either way. The real engine, sandbox and checkpoint store, with
//! a scripted person.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolgate::Builder;
use toolgate_policy::approvals::{Answer, ApprovalChannel, AskPrompt, ChannelError};
use toolgate_policy::config::Mode;

/// Answers every ask with `answer` and keeps each prompt.
struct Person {
    answer: Answer,
    asked: Mutex<Vec<AskPrompt>>,
}

#[async_trait::async_trait]
impl ApprovalChannel for Person {
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        self.asked.lock().unwrap().push(prompt.clone());
        Ok(self.answer.clone())
    }
}

struct World {
    _dir: tempfile::TempDir,
    ws: std::path::PathBuf,
    data: std::path::PathBuf,
}

fn world() -> World {
    let parent =
        toolgate_sandbox::test_util::scratch_parent(Path::new(env!("CARGO_TARGET_TMPDIR")))
            .unwrap();
    let dir = tempfile::tempdir_in(parent).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join(".envrc"), "export A=1\n").unwrap();
    std::fs::write(
        ws.join("drive.sh"),
        "echo 'curl x | sh' >> .envrc; echo built > out.txt",
    )
    .unwrap();
    World {
        data: base.join("data"),
        _dir: dir,
        ws,
    }
}

fn run(w: &World, answer: Answer) -> (String, Vec<AskPrompt>) {
    let person = Arc::new(Person {
        answer,
        asked: Mutex::new(Vec::new()),
    });
    let gate = Builder::new()
        .location(&w.ws)
        .data_dir(&w.data)
        .user_config(None)
        .managed_config(None)
        .mode(Mode::Auto)
        .approvals(person.clone())
        // This test program is not the sandbox's helper: the toolgate binary is.
        .sandbox(toolgate::SandboxChoice::DetectWithHelper(
            env!("CARGO_BIN_EXE_toolgate").into(),
        ))
        .build()
        .unwrap();
    let support = gate.start().unwrap();
    let _ = support;
    let catalogue = gate.catalogue().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let result = rt
        .block_on(gate.settle(&catalogue, "bash", json!({"command": "bash drive.sh"})))
        .unwrap();
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("\n");
    let asked = person.asked.lock().unwrap().clone();
    (text, asked)
}

fn staging_available() -> bool {
    let s = toolgate_sandbox::detect();
    assert!(
        s.available && s.staging,
        "the sandbox with staging is needed (run scripts/setup-sandbox.sh): {:?}",
        s.reasons
    );
    true
}

#[test]
fn a_protected_write_is_asked_once_with_its_diff_and_lands_when_approved() {
    staging_available();
    let w = world();
    let (text, asked) = run(&w, Answer::Once);
    assert_eq!(
        asked.len(),
        1,
        "one ask for the changed protected paths: {text}"
    );
    let prompt = serde_json::to_string(&asked[0]).unwrap();
    assert!(prompt.contains(".envrc"), "{prompt}");
    assert!(
        prompt.contains("+curl x | sh"),
        "the diff is shown: {prompt}"
    );
    assert_eq!(
        std::fs::read_to_string(w.ws.join(".envrc")).unwrap(),
        "export A=1\ncurl x | sh\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.ws.join("out.txt")).unwrap(),
        "built\n"
    );
}

#[test]
fn a_rejected_protected_write_is_discarded_and_named_while_plain_writes_land() {
    staging_available();
    let w = world();
    let (text, asked) = run(&w, Answer::Reject { message: None });
    assert_eq!(asked.len(), 1);
    assert_eq!(
        std::fs::read_to_string(w.ws.join(".envrc")).unwrap(),
        "export A=1\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.ws.join("out.txt")).unwrap(),
        "built\n"
    );
    assert!(text.contains(".envrc"), "the refused path is named: {text}");
}
