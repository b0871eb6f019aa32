//! The MCP conformance suite's tool-call scenarios against toolgate's MCP
//! layer. Those scenarios call fixture tools of the suite's reference server
//! (`test_simple_text`, `test_image_content`, …) that toolgate does not ship,
//! so here they are registered as ordinary tools behind the real gate, audit
//! log and streamable-HTTP transport: what the suite checks is how toolgate
//! turns a tool's content, failure, progress and schema into MCP.
//!
//! The suite (npm `@modelcontextprotocol/conformance`, on the Node 22 it needs)
//! is installed by `scripts/setup-conformance.sh`; `crates/toolgate/tests/conformance.rs`
//! runs the scenarios that apply to `toolgate serve` as shipped.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    Content, Engine, Location, PermissionRequest, Progress, Registry, Risk, Tool, ToolContext,
    ToolError, ToolSet, ToolTraits,
};
use toolgate_mcp::http::{HttpAuth, HttpOptions, bind_http};
use toolgate_mcp::{ElicitationChannel, ToolgateServer};
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::policy::{Policy, PolicySources};
use toolgate_store::{Durability, EventLog, SpillStore, SqliteApprovals};

use crate::conformance_support;
use conformance_support::{Suite, checks, text};

/// The scenarios run here, each against its fixture tool below.
const SCENARIOS: &[&str] = &[
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-error",
    "tools-call-with-progress",
    "json-schema-2020-12",
];

/// A read of the workspace: the default policy allows it without asking.
fn workspace_read(loc: &Location) -> Vec<PermissionRequest> {
    vec![PermissionRequest::new(
        "read",
        loc.root().display().to_string(),
        Risk::Read,
    )]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoInput {}

#[derive(Serialize, JsonSchema)]
struct Done {
    done: bool,
}

/// `test_simple_text`: one text block.
struct SimpleText;
impl Tool for SimpleText {
    type Input = NoInput;
    type Output = Done;
    fn description(&self) -> String {
        "Returns a simple text response.".into()
    }
    fn traits(&self) -> ToolTraits {
        ToolTraits::read_only()
    }
    fn intent(&self, _: &NoInput, loc: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(workspace_read(loc))
    }
    async fn execute(&self, _: NoInput, _: ToolContext) -> Result<Done, ToolError> {
        Ok(Done { done: true })
    }
    fn project(&self, _: &Done) -> Vec<Content> {
        vec![Content::text("This is a simple text response for testing.")]
    }
}

/// A 1×1 red PNG, base64.
const RED_PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// `test_image_content`: one image block.
struct ImageContent;
impl Tool for ImageContent {
    type Input = NoInput;
    type Output = Done;
    fn description(&self) -> String {
        "Returns an image.".into()
    }
    fn traits(&self) -> ToolTraits {
        ToolTraits::read_only()
    }
    fn intent(&self, _: &NoInput, loc: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(workspace_read(loc))
    }
    async fn execute(&self, _: NoInput, _: ToolContext) -> Result<Done, ToolError> {
        Ok(Done { done: true })
    }
    fn project(&self, _: &Done) -> Vec<Content> {
        vec![Content::Image {
            data: RED_PIXEL_PNG.into(),
            mime_type: "image/png".into(),
        }]
    }
}

/// `test_error_handling`: always fails.
struct ErrorHandling;
impl Tool for ErrorHandling {
    type Input = NoInput;
    type Output = Done;
    fn description(&self) -> String {
        "Always fails.".into()
    }
    fn traits(&self) -> ToolTraits {
        ToolTraits::read_only()
    }
    fn intent(&self, _: &NoInput, loc: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(workspace_read(loc))
    }
    async fn execute(&self, _: NoInput, _: ToolContext) -> Result<Done, ToolError> {
        Err(ToolError::Failed(
            "This tool intentionally returns an error for testing".into(),
        ))
    }
}

/// `test_tool_with_progress`: reports 0, 50 and 100 of 100, 50 ms apart.
struct WithProgress;
impl Tool for WithProgress {
    type Input = NoInput;
    type Output = Done;
    fn description(&self) -> String {
        "Reports progress while it works.".into()
    }
    fn traits(&self) -> ToolTraits {
        ToolTraits::read_only()
    }
    fn intent(&self, _: &NoInput, loc: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(workspace_read(loc))
    }
    async fn execute(&self, _: NoInput, ctx: ToolContext) -> Result<Done, ToolError> {
        for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if i > 0 {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(50)) => {}
                    () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                }
            }
            ctx.report(Progress {
                message: format!("{step}%"),
                progress: step,
                total: Some(100.0),
            });
        }
        Ok(Done { done: true })
    }
}

/// An address, under `$defs/address`.
#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "address")]
#[allow(dead_code)]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct SchemaInput {
    name: Option<String>,
    address: Option<Address>,
}

/// `json_schema_2020_12_tool`: an input schema with `$schema`, `$defs` and
/// `additionalProperties: false`, as `schemars` writes it.
struct JsonSchema2020;
impl Tool for JsonSchema2020 {
    type Input = SchemaInput;
    type Output = Done;
    fn description(&self) -> String {
        "Tool with JSON Schema 2020-12 features".into()
    }
    fn traits(&self) -> ToolTraits {
        ToolTraits::read_only()
    }
    fn intent(&self, _: &SchemaInput, loc: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(workspace_read(loc))
    }
    async fn execute(&self, _: SchemaInput, _: ToolContext) -> Result<Done, ToolError> {
        Ok(Done { done: true })
    }
}

/// A server with only the fixture tools, behind the real gate and audit log.
fn fixture_server(root: &Path, data: &Path) -> (ToolgateServer, Vec<toolgate_core::Registration>) {
    let policy = Policy::load(&PolicySources::bare(root, data)).unwrap();
    let channel = ElicitationChannel::new();
    let approvals = SqliteApprovals::open(data.join("state.db")).unwrap();
    let gate = PolicyGate::new(policy, Arc::new(approvals), Arc::new(channel.clone()));
    let log = Arc::new(EventLog::open(data.join("audit.db"), Durability::Normal).unwrap());
    let tools = Registry::new();
    let registrations = vec![
        tools.register("test_simple_text", SimpleText).unwrap(),
        tools.register("test_image_content", ImageContent).unwrap(),
        tools
            .register("test_error_handling", ErrorHandling)
            .unwrap(),
        tools
            .register("test_tool_with_progress", WithProgress)
            .unwrap(),
        tools
            .register("json_schema_2020_12_tool", JsonSchema2020)
            .unwrap(),
    ];
    let engine = Engine::new(
        ToolSet::new(Registry::new(), tools),
        Arc::new(gate),
        log,
        Arc::new(SpillStore::new(data)),
    );
    let location = Arc::new(Location::new(root).unwrap());
    (
        ToolgateServer::with_elicitation(engine, location, channel),
        registrations,
    )
}

#[test]
fn fixture_tool_scenarios_pass_through_toolgates_mcp_layer() {
    let Some(Suite { node, cli }) = Suite::find() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (root, data, work) = (base.join("ws"), base.join("data"), base.join("work"));
    for d in [&root, &data, &work] {
        std::fs::create_dir_all(d).unwrap();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let failures = runtime.block_on(async {
        let (server, _registrations) = fixture_server(&root, &data);
        let shutdown = CancellationToken::new();
        // The suite sends no token: no auth, as `serve --no-auth` on loopback.
        let options = HttpOptions {
            auth: HttpAuth::Disabled,
            ..HttpOptions::loopback(0, String::new())
        };
        let bound = bind_http(&server, options, shutdown.clone()).await.unwrap();
        let url = format!("http://{}/mcp", bound.local_addr().unwrap());
        let serving = tokio::spawn(bound.serve());
        let runs = SCENARIOS.iter().map(|scenario| {
            let out_dir = work.join(scenario);
            let mut cmd = tokio::process::Command::new(&node);
            cmd.arg(&cli)
                .args(["server", "--url", &url, "--scenario", scenario, "-o"])
                .arg(&out_dir)
                .current_dir(&work)
                .stdin(Stdio::null())
                .kill_on_drop(true);
            async move {
                let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
                    .await
                    .expect("the suite finishes within 2 minutes")
                    .unwrap();
                (*scenario, out_dir, out)
            }
        });
        let mut failures = Vec::new();
        for (scenario, out_dir, out) in futures::future::join_all(runs).await {
            let checks = checks(&out_dir, scenario);
            let failed: Vec<&Value> = checks
                .iter()
                .filter(|c| matches!(c["status"].as_str(), Some("FAILURE" | "WARNING")))
                .collect();
            if !out.status.success() || checks.is_empty() || !failed.is_empty() {
                failures.push(format!(
                    "{scenario}: exit {}, problems {failed:#?}\n--- suite output:\n{}",
                    out.status,
                    text(&out)
                ));
            }
        }
        shutdown.cancel();
        let _ = serving.await;
        failures
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
