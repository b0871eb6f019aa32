//! The approval page in headless Chromium, driven by playwright-core
//! (tests/browser/approve.mjs): an ask appears, "once" resolves it, reject with a
//! message reaches the asker, a destructive request needs two clicks, a new ask
//! shows up live, another origin is refused. Also saves a screenshot.
//! tests/browser/question.mjs answers the `question` tool's questions: picking
//! an option answers it, declining carries the reason, a question withdrawn
//! elsewhere leaves and a new one arrives live.
//!
//! Needs `scripts/setup-browser.sh`. Without the browser the test is skipped with
//! a message, except when `CI=true`, where it fails. `TOOLGATE_SCREENSHOT=path`
//! keeps the screenshot (docs/approval-page.png was made that way).

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::task::JoinHandle;
use toolgate_core::{Preview, PreviewBody, Question, Risk};
use toolgate_policy::approvals::{Answer, ApprovalChannel, AskPrompt, ChannelError};
use toolgate_policy::test_util::ask_about;
use toolgate_store::{LogQuery, SqliteApprovals};
use toolgate_web::{QuestionReply, WebApprovals, WebState, new_token, page_url, serve_standalone};

const WAIT: Duration = Duration::from_secs(60);

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

/// The approval page on a free loopback port, its state databases in `dir`.
struct Page {
    approvals: WebApprovals,
    token: String,
    addr: std::net::SocketAddr,
    server: JoinHandle<Result<(), toolgate_web::WebError>>,
}

impl Page {
    async fn start(dir: &Path, audit_db: PathBuf) -> Page {
        let approvals = WebApprovals::new();
        let token = new_token().unwrap();
        let state = WebState {
            approvals: approvals.clone(),
            events: Arc::new(LogQuery::new(audit_db)),
            store: Arc::new(SqliteApprovals::open(dir.join("state.db")).unwrap()),
            token: token.clone(),
            allowed_hosts: Vec::new(),
        };
        let (addr, server) = serve_standalone("127.0.0.1:0".parse().unwrap(), state)
            .await
            .unwrap();
        Page {
            approvals,
            token,
            addr,
            server,
        }
    }
}

/// A playwright script in `tests/browser/` driving the page; it reports its
/// steps as lines on stdout and takes cues as lines on stdin.
struct BrowserScript {
    node: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl BrowserScript {
    fn start(script: &str, args: &[String]) -> BrowserScript {
        let mut node = tokio::process::Command::new("node")
            .arg(browser_dir().join(script))
            .args(args)
            .current_dir(browser_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = node.stdin.take().unwrap();
        let stdout = BufReader::new(node.stdout.take().unwrap()).lines();
        BrowserScript {
            node,
            stdin,
            stdout,
        }
    }

    /// The script's next report must be `want`.
    async fn expect_line(&mut self, want: &str, otherwise: &str) {
        let line = tokio::time::timeout(WAIT, self.stdout.next_line())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(line.as_deref(), Some(want), "{otherwise}");
    }

    async fn send(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    /// Waits for the script to end, which must be a success.
    async fn finish(mut self) {
        let status = tokio::time::timeout(WAIT, self.node.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "the browser script failed: {status}");
    }
}

/// Why the browser test cannot run here, if it cannot.
fn missing_browser() -> Option<String> {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        return Some(format!("no Chromium at {chromium}"));
    }
    if !browser_dir().join("node_modules/playwright-core").is_dir() {
        return Some("playwright-core is not installed".into());
    }
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        return Some("node is not on PATH".into());
    }
    None
}

fn prompt(call_id: &str, tool: &str, risk: Risk, resource: &str) -> AskPrompt {
    let reason = match risk {
        Risk::Destructive => "deletes files recursively; asked every time",
        Risk::Network => "talks to the network",
        Risk::Write => "changes a file in the workspace",
        _ => "runs a program",
    };
    AskPrompt {
        session_id: "s-browser".into(),
        offer_session: risk != Risk::Destructive,
        offer_always: risk != Risk::Destructive,
        timeout_ms: 300_000,
        ..ask_about(call_id, tool, risk, resource, reason)
    }
}

async fn ask(
    approvals: &WebApprovals,
    prompt: AskPrompt,
) -> (u64, JoinHandle<Result<Answer, ChannelError>>) {
    // The new ask is the one whose id was not pending before: counting would
    // race the page, which may answer an older ask at the same moment.
    let before: Vec<u64> = approvals.pending().iter().map(|a| a.id).collect();
    let channel = approvals.clone();
    let task = tokio::spawn(async move { channel.ask(&prompt).await });
    let started = std::time::Instant::now();
    loop {
        if let Some(new) = approvals
            .pending()
            .into_iter()
            .find(|a| !before.contains(&a.id))
        {
            return (new.id, task);
        }
        assert!(started.elapsed() < WAIT, "the ask never reached the page");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

async fn answer_of(task: JoinHandle<Result<Answer, ChannelError>>) -> Answer {
    tokio::time::timeout(WAIT, task)
        .await
        .expect("never answered")
        .unwrap()
        .unwrap()
}

/// Whether the browser tests can run; skips with a message (fails in CI) when not.
fn browser_ready(test: &str) -> bool {
    let Some(why) = missing_browser() else {
        return true;
    };
    assert_ne!(
        std::env::var("CI").as_deref(),
        Ok("true"),
        "browser test cannot run in CI: {why}; run scripts/setup-browser.sh"
    );
    eprintln!("SKIPPED {test}: {why} (run scripts/setup-browser.sh)");
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_answers_in_headless_chromium() {
    if !browser_ready("a_person_answers_in_headless_chromium") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let audit_db = dir.path().join("events.db");
    let Page {
        approvals,
        token,
        addr,
        server,
    } = Page::start(dir.path(), audit_db).await;

    let (once, once_task) = ask(
        &approvals,
        prompt("c-build", "bash", Risk::Execute, "cargo build --release"),
    )
    .await;
    let (reject, reject_task) = ask(
        &approvals,
        prompt("c-push", "bash", Risk::Network, "git push origin main"),
    )
    .await;
    let (destructive, destructive_task) = ask(
        &approvals,
        prompt("c-rm", "bash", Risk::Destructive, "rm -rf target/ build/"),
    )
    .await;
    // The edit tool's preview, as the pipeline attaches it to the ask.
    let mut edit_prompt = prompt("c-edit", "edit", Risk::Write, "/ws/src/retry.rs");
    edit_prompt.preview = Some(
        Preview::new("Edit").with_body(PreviewBody::Diff(
            "--- /ws/src/retry.rs\n+++ /ws/src/retry.rs\n@@ -1,2 +1,2 @@\n\
         -    let attempts = 3;\n-    sleep(Duration::from_secs(1));\n\
         +    let attempts = 5;\n+    sleep(backoff(attempt));\n"
                .into(),
        )),
    );
    let (edit, edit_task) = ask(&approvals, edit_prompt).await;
    let (foreign, foreign_task) = ask(
        &approvals,
        prompt(
            "c-curl",
            "bash",
            Risk::Network,
            "curl https://example.invalid",
        ),
    )
    .await;

    let screenshot = std::env::var("TOOLGATE_SCREENSHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| dir.path().join("approval-page.png"));
    let ids = json!({"once": once, "reject": reject, "destructive": destructive, "edit": edit, "foreign": foreign});
    let mut script = BrowserScript::start(
        "approve.mjs",
        &[
            page_url(addr, &token),
            ids.to_string(),
            screenshot.display().to_string(),
        ],
    );
    script
        .expect_line("loaded", "the page never showed the asks")
        .await;
    let (_live, live_task) = ask(
        &approvals,
        prompt("c-live", "bash", Risk::Execute, "echo live-ask-42"),
    )
    .await;
    script.send("echo live-ask-42").await;

    assert_eq!(answer_of(once_task).await, Answer::Once);
    assert_eq!(
        answer_of(reject_task).await,
        Answer::Reject {
            message: Some("use a pull request instead".into())
        }
    );
    assert_eq!(answer_of(destructive_task).await, Answer::Once);
    assert_eq!(answer_of(live_task).await, Answer::Once);
    script
        .expect_line("cross-origin refused", "no cross-origin report")
        .await;
    script.finish().await;

    let still: Vec<u64> = approvals.pending().iter().map(|a| a.id).collect();
    assert_eq!(
        still,
        vec![edit, foreign],
        "the cross-origin answer must not count"
    );
    assert!(
        std::fs::metadata(&screenshot).unwrap().len() > 10_000,
        "screenshot too small"
    );
    edit_task.abort();
    foreign_task.abort();
    server.abort();
}

type QuestionTask = JoinHandle<Result<QuestionReply, ChannelError>>;

async fn ask_questions(
    approvals: &WebApprovals,
    call_id: &str,
    questions: Vec<Question>,
) -> (u64, QuestionTask) {
    let before: Vec<u64> = approvals.pending_questions().iter().map(|q| q.id).collect();
    let channel = approvals.clone();
    let call_id = call_id.to_string();
    let task = tokio::spawn(async move {
        channel
            .ask_questions("s-browser", &call_id, &questions)
            .await
    });
    let started = std::time::Instant::now();
    loop {
        if let Some(q) = approvals
            .pending_questions()
            .into_iter()
            .find(|q| !before.contains(&q.id))
        {
            return (q.id, task);
        }
        assert!(
            started.elapsed() < WAIT,
            "the question never reached the page"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

async fn reply_of(task: QuestionTask) -> QuestionReply {
    tokio::time::timeout(WAIT, task)
        .await
        .expect("never replied")
        .unwrap()
        .unwrap()
}

fn one_question(text: &str, options: &[&str]) -> Question {
    Question {
        question: text.into(),
        options: (!options.is_empty()).then(|| options.iter().map(|o| o.to_string()).collect()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_answers_a_question_in_headless_chromium() {
    if !browser_ready("a_person_answers_a_question_in_headless_chromium") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Page {
        approvals,
        token,
        addr,
        server,
    } = Page::start(dir.path(), dir.path().join("events.db")).await;

    let (pick, pick_task) = ask_questions(
        &approvals,
        "c-db",
        vec![
            one_question(
                "Which database should the service use?",
                &["sqlite", "postgres"],
            ),
            one_question("What should the table be called?", &[]),
        ],
    )
    .await;
    let (elsewhere, elsewhere_task) = ask_questions(
        &approvals,
        "c-other",
        vec![one_question("Tabs or spaces?", &["tabs", "spaces"])],
    )
    .await;

    let ids = json!({"pick": pick, "elsewhere": elsewhere});
    let mut script =
        BrowserScript::start("question.mjs", &[page_url(addr, &token), ids.to_string()]);
    script
        .expect_line("loaded", "the page never showed the questions")
        .await;

    // Another channel answered it: the server drops the page's wait.
    elsewhere_task.abort();
    let (live, live_task) = ask_questions(
        &approvals,
        "c-live",
        vec![one_question(
            "May I run the migrations now?",
            &["yes", "no"],
        )],
    )
    .await;
    script.send(&live.to_string()).await;

    assert_eq!(
        reply_of(live_task).await,
        QuestionReply::Declined(Some("not now, ask again after lunch".into()))
    );
    assert_eq!(
        reply_of(pick_task).await,
        QuestionReply::Answered(vec!["postgres".into(), "accounts".into()])
    );
    script.expect_line("answered", "no answered report").await;
    script.finish().await;
    assert!(approvals.pending_questions().is_empty());
    server.abort();
}
