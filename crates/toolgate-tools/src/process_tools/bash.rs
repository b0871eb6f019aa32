//! `bash`: runs a command line with `bash -c` in its own session and process
//! group, with no terminal and stdin closed.
//!
//! stdout and stderr are merged into one output in the order their chunks
//! arrive (each stream keeps its own order; lines written at the same moment
//! on both may interleave differently than on a terminal). The first
//! [`MEMORY_LIMIT_BYTES`] stay in memory; past that the whole output streams
//! to a spill file under `<data_dir>/tool-output/` (swept with the other spilled outputs), so memory stays bounded
//! whatever the command prints.
//!
//! On timeout or cancellation the whole group gets SIGTERM, then SIGKILL after
//! [`KILL_GRACE`]. The group is owned by the call: when the command exits,
//! processes it left running in the group (background jobs) are terminated the
//! same way, so a call never leaves anything behind.

use std::future::Future;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};
use toolgate_core::visible::{escape_hidden, name_text};
use toolgate_core::{
    Content, Location, PermissionRequest, Preview, PreviewBody, Progress, Risk, Tool, ToolContext,
    ToolError,
};

use super::ProcessToolsConfig;
use super::command_env::command_env;
use super::output_capture::{Capture, MEMORY_LIMIT_BYTES};
use super::process_group::{
    GroupGuard, KILL_GRACE, Termination, group_alive, terminate, wait_gone,
};
use super::sandbox_port::{CommandSandbox, ConfineRequest, ConfinedCommand};

/// Timeout when the call gives none: 2 minutes.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest timeout a call may ask for: 10 minutes.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Linux refuses a single argument this long or longer (`MAX_ARG_STRLEN`).
const MAX_COMMAND_BYTES: usize = 128 * 1024;
/// After the command exits, how long its output may take to reach end-of-file
/// before whatever still holds it open is terminated.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
const READ_CHUNK: usize = 64 * 1024;
/// How long a sandboxed command's namespace may take to empty after it exits.
const SANDBOX_SETTLE: Duration = Duration::from_millis(200);
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
const PROGRESS_LINE_CHARS: usize = 200;

/// Input of `bash`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command line, run with `bash -c`.
    pub command: String,
    /// The directory to run in, relative to the location root; default the root.
    #[serde(default)]
    pub workdir: Option<String>,
    /// Timeout in milliseconds: default 120000 (2 minutes), at most 600000.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// What the command does, in a few words, for the person approving it.
    #[serde(default)]
    pub description: Option<String>,
    /// Run outside the sandbox. Always asked (even when a rule allows the
    /// command), and no approval of it is saved; give a `reason`.
    #[serde(default)]
    pub unsandboxed: bool,
    /// Why the command must run outside the sandbox, for the person asked.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Output of `bash`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BashOutput {
    /// The directory the command ran in.
    pub workdir: String,
    /// The exit code, when the command exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended the command, when one did.
    pub signal: Option<i32>,
    /// That signal's name (`SIGKILL`, …).
    pub signal_name: Option<String>,
    /// The command ran past its timeout and was terminated.
    pub timed_out: bool,
    /// Wall time from start to the end of the output, in milliseconds.
    pub duration_ms: u64,
    /// stdout and stderr in arrival order; when the output spilled, its first
    /// 1 MiB (the rest is in `spill_path`). Invalid UTF-8 is replaced.
    pub output: String,
    /// Total bytes of output.
    pub output_bytes: u64,
    /// When the output spilled: its last 64 KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
    /// The file holding the whole output, when it outgrew memory.
    pub spill_path: Option<String>,
    /// Processes the command left running in its group were terminated.
    pub background_terminated: bool,
    /// The command ran inside the sandbox.
    pub sandboxed: bool,
    /// When a sandboxed command failed: what the sandbox refuses and the
    /// paths it refused, where the output names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_note: Option<String>,
    /// How many changed paths of a sandboxed command landed in the
    /// location (its writes are staged and judged when it exits).
    #[serde(default)]
    pub landed: usize,
    /// The checkpoint of what landed (`toolgate undo ID` restores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// Changed paths that did not land, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<RefusedChange>,
}

/// A path a sandboxed command changed that was not applied to the location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RefusedChange {
    /// The path.
    pub path: String,
    /// `created`, `modified` or `deleted`.
    pub change: String,
    /// Why it did not land.
    pub reason: String,
}

/// What became of a sandboxed command's staged writes.
#[derive(Debug, Default)]
struct StagedReport {
    landed: usize,
    checkpoint: Option<String>,
    refused: Vec<RefusedChange>,
}

/// Has the call's gate judge every path the command changed, and lands the
/// accepted ones. Without a judge (the tool run outside the pipeline)
/// nothing lands.
async fn settle_staged(
    run: &mut dyn super::StagedRun,
    ctx: &ToolContext,
) -> Result<StagedReport, ToolError> {
    let changes = run.changes().map_err(ToolError::Caused)?;
    if changes.is_empty() {
        return Ok(StagedReport::default());
    }
    let verdicts = match &ctx.write_judge {
        Some(judge) => judge.judge(&changes).await.map_err(ToolError::Caused)?,
        None => changes
            .iter()
            .map(|_| toolgate_core::StagedVerdict {
                land: false,
                reason: "no gate judges this command's writes, so none lands".into(),
            })
            .collect(),
    };
    let mut accepted = Vec::new();
    let mut refused = Vec::new();
    for (c, v) in changes.iter().zip(&verdicts) {
        if c.changed_outside {
            refused.push(RefusedChange {
                path: c.path.display().to_string(),
                change: c.kind.as_str().to_string(),
                reason: CHANGED_OUTSIDE.into(),
            });
        } else if v.land {
            accepted.push(c.path.clone());
        } else {
            refused.push(RefusedChange {
                path: c.path.display().to_string(),
                change: c.kind.as_str().to_string(),
                reason: v.reason.clone(),
            });
        }
    }
    let landed = accepted.len();
    let checkpoint = if accepted.is_empty() {
        None
    } else {
        run.land(&accepted).map_err(ToolError::Caused)?
    };
    Ok(StagedReport {
        landed,
        checkpoint,
        refused,
    })
}

/// Why a path changed outside a command's run does not land.
const CHANGED_OUTSIDE: &str = "changed by someone else while the command ran; that version is kept";

/// At most this many refused paths are named in the model's text.
const REFUSED_SHOWN: usize = 20;

/// The `bash` tool.
#[derive(Debug, Clone)]
pub struct BashTool {
    spill_dir: PathBuf,
    secret_patterns: Vec<String>,
    sandbox: Option<Arc<dyn CommandSandbox>>,
}

impl BashTool {
    /// A bash tool spilling under `config.data_dir` and withholding variables
    /// that match `config.secret_env_patterns`.
    pub fn new(config: &ProcessToolsConfig) -> Self {
        BashTool {
            spill_dir: config.data_dir.join("tool-output"),
            secret_patterns: config.secret_env_patterns.clone(),
            sandbox: config.sandbox.clone(),
        }
    }
}

/// Checks the input and returns the timeout.
fn check_input(input: &BashInput) -> Result<Duration, ToolError> {
    if input.command.trim().is_empty() {
        return Err(ToolError::InvalidInput("command is empty".into()));
    }
    if input.command.contains('\0') {
        return Err(ToolError::InvalidInput(
            "command contains a NUL byte".into(),
        ));
    }
    if input.command.len() >= MAX_COMMAND_BYTES {
        return Err(ToolError::InvalidInput(format!(
            "command is {} bytes; the limit is {} bytes (write a script file and run it instead)",
            input.command.len(),
            MAX_COMMAND_BYTES - 1
        )));
    }
    match input.timeout_ms {
        None => Ok(Duration::from_millis(DEFAULT_TIMEOUT_MS)),
        Some(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => Ok(Duration::from_millis(ms)),
        Some(ms) => Err(ToolError::InvalidInput(format!(
            "timeout_ms must be between 1 and {MAX_TIMEOUT_MS} (10 minutes); got {ms}"
        ))),
    }
}

/// The directory a command runs in, which must exist and be a directory (the
/// intent checks it too, so `check` refuses what a call would refuse).
fn existing_workdir(location: &Location, workdir: Option<&str>) -> Result<PathBuf, ToolError> {
    let Some(workdir) = workdir else {
        // The location's root: a directory, checked when the location was made.
        return Ok(location.root().to_path_buf());
    };
    let workdir = workdir_of(location, Some(workdir))?;
    // One `stat`: exists, and is a directory.
    match std::fs::metadata(&workdir) {
        Err(_) => {
            return Err(ToolError::InvalidInput(format!(
                "workdir {} does not exist",
                workdir.display()
            )));
        }
        Ok(m) if !m.is_dir() => {
            return Err(ToolError::InvalidInput(format!(
                "workdir {} is not a directory",
                workdir.display()
            )));
        }
        Ok(_) => {}
    }
    Ok(workdir)
}

fn workdir_of(location: &Location, workdir: Option<&str>) -> Result<PathBuf, ToolError> {
    match workdir {
        None => Ok(location.root().to_path_buf()),
        Some(w) => Ok(location.resolve(w)?.path),
    }
}

fn spill_prefix(call_id: &str) -> String {
    let safe: String = call_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(40)
        .collect();
    if safe.is_empty() {
        "bash-".to_string()
    } else {
        format!("bash-{safe}-")
    }
}

/// Reads a pipe in chunks into `tx` until end-of-file.
fn spawn_reader<R>(reader: Option<R>, tx: mpsc::Sender<Vec<u8>>)
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let Some(mut reader) = reader else { return };
    tokio::spawn(async move {
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).await.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    tracing::debug!(error = %e, "reading command output failed");
                    break;
                }
            }
        }
    });
}

/// Reports the newest output line at most every [`PROGRESS_EVERY`].
#[derive(Default)]
struct ProgressThrottle {
    last: Option<Instant>,
}

impl ProgressThrottle {
    fn report(&mut self, ctx: &ToolContext, chunk: &[u8], total: u64) {
        if self.last.is_some_and(|t| t.elapsed() < PROGRESS_EVERY) {
            return;
        }
        self.last = Some(Instant::now());
        ctx.report(Progress {
            message: last_line(chunk),
            progress: total as f64,
            total: None,
        });
    }
}

fn last_line(chunk: &[u8]) -> String {
    let text = String::from_utf8_lossy(chunk);
    let line = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    line.chars().take(PROGRESS_LINE_CHARS).collect()
}

/// Awaits the future when there is one; never completes otherwise.
async fn maybe<F: Future + Unpin>(f: Option<&mut F>) -> F::Output {
    match f {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stop {
    Running,
    TimedOut,
    Cancelled,
}

type TerminateFuture = Pin<Box<dyn Future<Output = Termination> + Send>>;

fn start_terminate(pgid: i32) -> Option<TerminateFuture> {
    Some(Box::pin(terminate(pgid, KILL_GRACE)))
}

impl BashTool {
    /// The confined command when a sandbox is configured and the call did not
    /// ask to run outside it.
    fn confine(
        &self,
        input: &BashInput,
        ctx: &ToolContext,
        workdir: &Path,
    ) -> Result<Option<ConfinedCommand>, ToolError> {
        let Some(sandbox) = &self.sandbox else {
            return Ok(None);
        };
        if input.unsandboxed {
            return Ok(None);
        }
        let args = ["-c".to_string(), input.command.clone()];
        sandbox
            .confine(&ConfineRequest {
                program: "bash",
                args: &args,
                location: &ctx.location,
                workdir,
                network: ctx.network_allowed,
                hosts: &ctx.network_hosts,
                session_id: &ctx.identity.session_id,
                call_id: &ctx.identity.call_id,
            })
            .map_err(ToolError::Caused)
    }

    fn spawn(
        &self,
        command: &str,
        workdir: &Path,
        confined: Option<&mut ConfinedCommand>,
    ) -> Result<tokio::process::Child, ToolError> {
        let (mut env, removed) = command_env(&self.secret_patterns);
        if let Some(extra) = confined.as_ref().and_then(|c| c.env_allowlist.as_ref()) {
            // Inside the sandbox: the allowlist, plus what toolgate itself
            // sets for every command (pager, git's forced config).
            env = super::command_env::confined_env(&self.secret_patterns, extra);
        }
        if !removed.is_empty() {
            tracing::debug!(
                ?removed,
                "secret-looking variables withheld from the command"
            );
        }
        let mut cmd = match confined {
            Some(c) => {
                let std_cmd =
                    std::mem::replace(&mut c.command, std::process::Command::new("false"));
                Command::from(std_cmd)
            }
            None => {
                let mut cmd = Command::new("bash");
                cmd.arg("-c").arg(command);
                cmd
            }
        };
        cmd.current_dir(workdir)
            .env_clear()
            .envs(env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: setsid is async-signal-safe and touches no memory of ours; a
        // new session makes the command a group leader with no controlling
        // terminal, so `killpg` reaches everything it starts and nothing can
        // open our terminal.
        unsafe {
            cmd.pre_exec(|| {
                nix::unistd::setsid()
                    .map(|_| ())
                    .map_err(std::io::Error::from)
            });
        }
        cmd.spawn().map_err(|e| ToolError::io("starting bash", e))
    }

    async fn run(&self, input: BashInput, ctx: &ToolContext) -> Result<BashOutput, ToolError> {
        let timeout = check_input(&input)?;
        let workdir = existing_workdir(&ctx.location, input.workdir.as_deref())?;
        let started = Instant::now();
        let deadline = started + timeout;
        let mut confined = self.confine(&input, ctx, &workdir)?;
        let mut child = self.spawn(&input.command, &workdir, confined.as_mut())?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .ok_or_else(|| ToolError::Failed("bash exited before its pid was known".into()))?;
        let mut guard = GroupGuard::new(pgid);

        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(4);
        spawn_reader(child.stdout.take(), tx.clone());
        spawn_reader(child.stderr.take(), tx);

        let mut capture = Capture::new(
            MEMORY_LIMIT_BYTES,
            &self.spill_dir,
            &spill_prefix(&ctx.identity.call_id),
        );
        let mut progress = ProgressThrottle::default();
        let mut status: Option<ExitStatus> = None;
        let mut stop = Stop::Running;
        let mut pipes_open = true;
        let mut termination: Option<TerminateFuture> = None;
        let mut terminated: Option<Termination> = None;
        let mut background_terminated = false;
        // Set when the command has exited (or been terminated): the output
        // must reach end-of-file by then.
        let mut drain_deadline: Option<Instant> = None;

        loop {
            if status.is_some() && termination.is_none() && !pipes_open {
                break;
            }
            tokio::select! {
                chunk = rx.recv(), if pipes_open => match chunk {
                    Some(bytes) => {
                        capture.push(&bytes).await?;
                        progress.report(ctx, &bytes, capture.total());
                    }
                    None => pipes_open = false,
                },
                st = child.wait(), if status.is_none() => {
                    status = Some(st.map_err(|e| ToolError::io("waiting for bash", e))?);
                    drain_deadline.get_or_insert(Instant::now() + DRAIN_GRACE);
                }
                () = sleep_until(deadline), if stop == Stop::Running && status.is_none() => {
                    stop = Stop::TimedOut;
                    termination = termination.or_else(|| start_terminate(pgid));
                }
                () = ctx.cancel.cancelled(), if stop == Stop::Running => {
                    stop = Stop::Cancelled;
                    termination = termination.or_else(|| start_terminate(pgid));
                }
                () = sleep_until(drain_deadline.unwrap_or(deadline)),
                    if drain_deadline.is_some() && pipes_open && termination.is_none() => {
                    if terminated.is_some() {
                        // Terminated, yet something outside the group still
                        // holds the output open: stop reading.
                        tracing::warn!(pgid, "command output still open after the group was terminated");
                        break;
                    }
                    // Exited, but a background process still holds the output.
                    background_terminated = true;
                    termination = start_terminate(pgid);
                }
                t = maybe(termination.as_mut()) => {
                    terminated = Some(t);
                    termination = None;
                    drain_deadline = Some(Instant::now() + DRAIN_GRACE);
                }
            }
        }

        if terminated.is_none() && confined.is_some() && group_alive(pgid) {
            // In the sandbox's PID namespace everything dies with the
            // command; give the kernel a moment to finish them off.
            wait_gone(pgid, SANDBOX_SETTLE).await;
        }
        if terminated.is_none() && group_alive(pgid) {
            // Exited with the output closed, but background jobs live on.
            background_terminated = true;
            terminated = Some(terminate(pgid, KILL_GRACE).await);
        }
        if terminated.is_none_or(|t| t.gone) {
            guard.disarm();
        }
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let captured = capture.finish().await?;
        if stop == Stop::Cancelled {
            return Err(ToolError::Cancelled);
        }
        let status =
            status.ok_or_else(|| ToolError::Failed("bash did not report an exit status".into()))?;
        let signal = status.signal();
        let output = String::from_utf8_lossy(&captured.head).into_owned();
        let sandboxed = confined.is_some();
        let sandbox_note = match &confined {
            Some(c) if !status.success() => Some(sandbox_note(&c.refuses, &output)),
            _ => None,
        };
        let staged = match confined.as_mut().and_then(|c| c.staged.as_mut()) {
            Some(run) => settle_staged(run.as_mut(), ctx).await?,
            None => StagedReport::default(),
        };
        drop(confined);
        Ok(BashOutput {
            workdir: workdir.display().to_string(),
            exit_code: status.code(),
            signal,
            signal_name: signal.map(signal_name),
            timed_out: stop == Stop::TimedOut,
            duration_ms,
            output,
            output_bytes: captured.total,
            output_tail: captured
                .tail
                .map(|t| String::from_utf8_lossy(&t).into_owned()),
            spill_path: captured.spill_path.map(|p| p.display().to_string()),
            background_terminated,
            sandboxed,
            sandbox_note,
            landed: staged.landed,
            checkpoint: staged.checkpoint,
            refused: staged.refused,
        })
    }
}

/// What the sandbox refuses, and the paths the output shows it refused
/// (`PATH: Read-only file system`, `PATH: Permission denied`, …).
fn sandbox_note(refuses: &str, output: &str) -> String {
    const MARKERS: [&str; 3] = [
        "Read-only file system",
        "Permission denied",
        "Operation not permitted",
    ];
    let mut blocked: Vec<String> = Vec::new();
    for line in output.lines() {
        for marker in MARKERS {
            let Some(at) = line.find(marker) else {
                continue;
            };
            let before = line[..at].trim_end().trim_end_matches(':').trim_end();
            let candidate = before
                .rsplit([':', ' '])
                .find(|s| !s.is_empty())
                .unwrap_or("")
                .trim_matches(|c| c == '\'' || c == '"' || c == '`');
            if (candidate.contains('/') || candidate.starts_with('.'))
                && !blocked.iter().any(|b| b == candidate)
                && blocked.len() < 10
            {
                blocked.push(candidate.to_string());
            }
        }
    }
    let mut note = format!("the command ran in the sandbox, which {refuses}");
    if !blocked.is_empty() {
        note.push_str(&format!(". Refused here: {}", blocked.join(", ")));
    }
    note.push_str(
        ". If the command needs what the sandbox refuses, call bash again with \"unsandboxed\": true and a \"reason\" (a person is asked every time).",
    );
    note
}

fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {signal}"))
}

impl Tool for BashTool {
    type Input = BashInput;
    type Output = BashOutput;

    fn description(&self) -> String {
        "Runs a command with `bash -c` in the workspace (or `workdir`), with no terminal and \
         stdin closed. Returns exit code, signal, duration and the combined stdout/stderr. \
         Default timeout 2 minutes, at most 10 (`timeout_ms`); on timeout the whole process \
         group is terminated. Output over 1 MiB is saved to a file whose path is returned. \
         Secret-looking environment variables are not passed on."
            .into()
    }

    fn exit_status(&self, output: &BashOutput) -> Option<i32> {
        output.exit_code
    }

    fn intent(
        &self,
        input: &BashInput,
        location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        check_input(input)?;
        let workdir = existing_workdir(location, input.workdir.as_deref())?
            .display()
            .to_string();
        let mut requests = vec![
            PermissionRequest::command("bash", input.command.clone(), Risk::Execute)
                .with_cwd(workdir.clone()),
        ];
        if input.unsandboxed {
            // Asked every time, never saved: see `BashInput::unsandboxed`.
            let why = input
                .reason
                .as_deref()
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .unwrap_or("no reason given");
            // Kind `other`: the command is analysed once, as the first
            // request; this one only asks to leave the sandbox.
            requests.push(
                PermissionRequest::new(
                    "bash_unsandboxed",
                    input.command.clone(),
                    Risk::Destructive,
                )
                .with_cwd(workdir)
                .with_note(format!("run outside the sandbox: {why}")),
            );
        }
        Ok(requests)
    }

    /// The command, the directory it starts in and what the model says it is for.
    fn preview(&self, input: &BashInput, location: &Location) -> Option<Preview> {
        let workdir = match workdir_of(location, input.workdir.as_deref()) {
            Ok(dir) => Some(dir.display().to_string()),
            Err(_) => input.workdir.clone(),
        };
        let mut preview =
            Preview::new("Command").with_body(PreviewBody::Command(input.command.clone()));
        if let Some(dir) = workdir {
            preview = preview.with_field("in", dir);
        }
        if let Some(why) = input
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
        {
            preview = preview.with_field("the model says", why);
        }
        Some(preview)
    }

    async fn execute(&self, input: BashInput, ctx: ToolContext) -> Result<BashOutput, ToolError> {
        self.run(input, &ctx).await
    }

    fn project(&self, output: &BashOutput) -> Vec<Content> {
        let mut text = output.output.clone();
        if let Some(path) = &output.spill_path {
            let shown = output.output.len() as u64
                + output.output_tail.as_ref().map_or(0, |t| t.len() as u64);
            text.push_str(&format!(
                "\n[… {} more bytes of output; the full output is in {path} …]\n",
                output.output_bytes.saturating_sub(shown)
            ));
            if let Some(tail) = &output.output_tail {
                text.push_str(tail);
            }
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if output.timed_out {
            text.push_str(&format!(
                "(timed out after {} ms; the process group was terminated)\n",
                output.duration_ms
            ));
        }
        match (output.exit_code, &output.signal_name) {
            (Some(code), _) => text.push_str(&format!("(exit code {code})")),
            (None, Some(name)) => text.push_str(&format!("(killed by {name})")),
            (None, None) => text.push_str("(no exit status)"),
        }
        if output.background_terminated {
            text.push_str("\n(background processes left running by the command were terminated)");
        }
        if let Some(note) = &output.sandbox_note {
            text.push_str(&format!("\n({note})"));
        }
        if !output.refused.is_empty() {
            text.push_str(&format!(
                "\n({} of the paths the command changed did not land in the location; the rest did{}):",
                output.refused.len(),
                output
                    .checkpoint
                    .as_ref()
                    .map(|c| format!(", checkpoint {c}"))
                    .unwrap_or_default()
            ));
            // The command chose these names: a line break in one must not
            // forge another line of this report.
            for r in output.refused.iter().take(REFUSED_SHOWN) {
                text.push_str(&format!(
                    "\n  {} {}: {}",
                    r.change,
                    name_text(&r.path),
                    escape_hidden(&r.reason, &[])
                ));
            }
            if output.refused.len() > REFUSED_SHOWN {
                text.push_str(&format!(
                    "\n  … and {} more",
                    output.refused.len() - REFUSED_SHOWN
                ));
            }
        }
        vec![Content::text(text)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(command: &str, timeout_ms: Option<u64>) -> BashInput {
        BashInput {
            command: command.into(),
            workdir: None,
            timeout_ms,
            description: None,
            unsandboxed: false,
            reason: None,
        }
    }

    #[test]
    fn timeout_bounds() {
        assert_eq!(
            check_input(&input("ls", None)).unwrap(),
            Duration::from_millis(DEFAULT_TIMEOUT_MS)
        );
        assert!(check_input(&input("ls", Some(MAX_TIMEOUT_MS))).is_ok());
        for bad in [0, MAX_TIMEOUT_MS + 1] {
            let err = check_input(&input("ls", Some(bad)))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("timeout_ms must be between 1 and 600000"),
                "{err}"
            );
        }
    }

    #[test]
    fn bad_commands() {
        assert!(
            check_input(&input("  ", None))
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
        assert!(
            check_input(&input("a\0b", None))
                .unwrap_err()
                .to_string()
                .contains("NUL")
        );
        let long = "x".repeat(MAX_COMMAND_BYTES);
        assert!(
            check_input(&input(&long, None))
                .unwrap_err()
                .to_string()
                .contains("limit")
        );
    }

    #[test]
    fn sandbox_note_names_refused_paths() {
        let out = "touch: cannot touch '/etc/x': Read-only file system\nbash: line 1: .git/config: Read-only file system\ncat: .env: Permission denied\n";
        let note = sandbox_note("writes only inside the location", out);
        assert!(note.contains("ran in the sandbox"), "{note}");
        assert!(
            note.contains("Refused here: /etc/x, .git/config, .env"),
            "{note}"
        );
        assert!(note.contains("\"unsandboxed\": true"));
    }

    #[test]
    fn last_line_skips_blank_tail() {
        assert_eq!(last_line(b"one\ntwo\n\n"), "two");
        assert_eq!(spill_prefix("call/../1"), "bash-call1-");
        assert_eq!(spill_prefix(""), "bash-");
    }
}
