//! `toolgate mcp` (MCP over stdio) and `toolgate serve` (MCP over streamable
//! HTTP): the engine of `toolgate call`, served to MCP clients. Asks go to the
//! approval channels — the client through MCP elicitation, the approval page,
//! the terminal — in the configured order (see [`toolgate_policy::people`]);
//! the first answer wins and the other questions are withdrawn.
//!
//! The engine is the one every command builds (`crate::cli_builder`), given
//! these channels.

mod reload;
mod token;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use tokio_util::sync::CancellationToken;
use toolgate::terminal::TerminalChannel;
use toolgate::{DataDir, Durability, Mode, Started, Toolgate};
use toolgate_core::EventQuery;
use toolgate_mcp::gateway::config::{merge, parse_mcp_servers_json, parse_toml_upstreams};
use toolgate_mcp::gateway::{ConfinedUpstream, Gateway, PinStore, UpstreamConfig, pin_file};
use toolgate_mcp::{
    AllowedPeers, ElicitationChannel, HttpAuth, HttpOptions, MCP_PATH, StdioOptions,
    ToolgateServer, bind_http, generate_token, serve_stdio, write_token_file,
};
use toolgate_policy::config::ApprovalChannelName;
use toolgate_policy::people::{Asking, ChannelList, Channels, parse_channel_list};
use toolgate_policy::policy::PolicySources;
use toolgate_store::{DEFAULT_RETENTION, SWEEP_INTERVAL};
use toolgate_web::{WebApprovals, WebState};

const DEFAULT_MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// What `mcp` and `serve` share: the workspace, the policy and the approval page.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Extra config files, applied after the project's (repeatable).
    #[arg(long, value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// default, accept-edits, auto or plan.
    #[arg(long, value_name = "MODE", value_parser = crate::cmd_policy::parse_mode)]
    pub mode: Option<Mode>,
    /// Where the approval page listens (loopback; port 0 picks a free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub web_listen: SocketAddr,
    /// Don't serve the approval page.
    #[arg(long)]
    pub no_web: bool,
    /// The approval channels to try, in order: a comma-separated list of mcp
    /// (the MCP client), web (the approval page) and terminal. Beats the
    /// config's `[approvals] channels`, but not the managed layer's
    /// (default: mcp,web,terminal).
    #[arg(long, value_name = "LIST", value_parser = parse_channel_list)]
    pub approval_channels: Option<ChannelList>,
    /// Upstream MCP servers to proxy, from an `mcpServers` JSON file
    /// (repeatable); besides the `[upstreams.NAME]` tables of the user,
    /// `--config` and managed config files.
    #[arg(long, value_name = "FILE")]
    pub upstreams: Vec<PathBuf>,
}

/// `toolgate mcp`: MCP over stdio.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct McpArgs {
    /// `toolgate mcp pins …`: the pinned upstream tool definitions.
    #[command(subcommand)]
    pub command: Option<McpCommand>,
    #[command(flatten)]
    pub common: ServerArgs,
    /// The largest message accepted on stdin, in bytes; larger ones are
    /// answered with an error and skipped.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE)]
    pub max_message_bytes: usize,
}

/// `toolgate mcp pins …`.
#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// The pinned tool definitions of upstream MCP servers.
    #[command(subcommand)]
    Pins(PinsCommand),
}

/// `toolgate mcp pins list|approve NAME|reset NAME`.
#[derive(Debug, clap::Subcommand)]
pub enum PinsCommand {
    /// Each upstream's pins, and the changes awaiting approval (shown with
    /// control, bidi and invisible characters escaped).
    List,
    /// Approve the pending definitions of the upstream NAME that `pins list`
    /// showed with DIGEST: they become its pins.
    Approve {
        /// The upstream's configured name.
        name: String,
        /// The digest `pins list` shows for what awaits approval: only
        /// what was read is approved.
        digest: Option<String>,
    },
    /// Forget the pins of the upstream NAME; its next listing is pinned afresh.
    Reset {
        /// The upstream's configured name.
        name: String,
    },
}

/// Runs `toolgate mcp pins …`.
pub fn run_pins(command: PinsCommand, data: &DataDir) -> Result<i32> {
    let store = PinStore::new(pin_file(data.root()));
    match command {
        PinsCommand::List => {
            let file = store.load()?;
            if file.pins.is_empty() {
                println!("no upstream is pinned");
            }
            for (key, record) in &file.pins {
                println!(
                    "{}  {} tools  set {}  {}",
                    record.name,
                    record.tools.len(),
                    &record.set_hash[..16.min(record.set_hash.len())],
                    key
                );
                for (tool, hash) in &record.tools {
                    // Names the server chose, escapes made visible.
                    let tool = toolgate_core::visible::escape_hidden(tool, &[]);
                    println!("    {tool}  {}", &hash[..16.min(hash.len())]);
                }
                if let Some(digest) = toolgate_mcp::gateway::pins::pending_digest(record)? {
                    println!(
                        "  pending approval (`toolgate mcp pins approve {} {digest}`):",
                        record.name
                    );
                    for line in toolgate_mcp::gateway::pins::describe_pending(record) {
                        println!("{line}");
                    }
                }
            }
            Ok(0)
        }
        PinsCommand::Approve { name, digest: None } => {
            eprintln!(
                "toolgate: name what you approve: read it with `toolgate mcp pins list` and run the `toolgate mcp pins approve {name} DIGEST` it shows (an approval is of the definitions read, not of whatever awaits approval when it runs)"
            );
            Ok(2)
        }
        PinsCommand::Approve {
            name,
            digest: Some(digest),
        } => {
            if store.approve(&name, &digest)? {
                println!("approved the pending tool definitions of {name}");
                Ok(0)
            } else {
                eprintln!("toolgate: nothing of {name:?} awaits approval");
                Ok(1)
            }
        }
        PinsCommand::Reset { name } => {
            if store.reset(&name)? {
                println!("forgot the pins of {name}; its next listing is pinned afresh");
                Ok(0)
            } else {
                eprintln!("toolgate: no pins for {name:?}");
                Ok(1)
            }
        }
    }
}

/// The upstreams configured for a server: the `[upstreams.NAME]` tables of
/// the user, session (`--config`) and managed config files, and the
/// `mcpServers` files of `--upstreams`. The project's config file never
/// starts upstreams (it comes with the repository).
fn upstream_configs(sources: &PolicySources, files: &[PathBuf]) -> Result<Vec<UpstreamConfig>> {
    let mut lists = Vec::new();
    let toml_files = sources
        .user
        .iter()
        .chain(&sources.session_files)
        .chain(sources.managed.iter());
    for file in toml_files {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
        };
        lists.push(parse_toml_upstreams(&text, &file.display().to_string())?);
    }
    for file in files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read --upstreams {}", file.display()))?;
        lists.push(parse_mcp_servers_json(&text, &file.display().to_string())?);
    }
    Ok(merge(lists)?)
}

/// Runs stdio upstreams configured with `sandbox = true` inside toolgate's
/// sandbox: the system read-only, the home directory empty but for
/// toolchains and caches and the entry's `readable`, credentials masked,
/// toolgate's own places hidden, no network; the location's writes staged
/// for the server's whole session and settled after each of its calls and
/// at the end (`toolgate::SandboxAdapter::upstream_writes`). Where the
/// machine cannot stage, the location is written directly, with its
/// existing protected entries read-only.
struct UpstreamSandbox {
    adapter: toolgate::SandboxAdapter,
    roots: Vec<PathBuf>,
}

impl toolgate_mcp::gateway::UpstreamLauncher for UpstreamSandbox {
    fn confined(
        &self,
        program: &str,
        args: &[String],
        cwd: &std::path::Path,
        readable: &[PathBuf],
    ) -> std::result::Result<ConfinedUpstream, String> {
        if !self.adapter.support().available {
            return Err(self.adapter.support().reasons.join("; "));
        }
        let mut spec = self.adapter.spec(self.roots.clone(), cwd.to_path_buf());
        spec.network = false;
        spec.readable.extend(readable.iter().cloned());
        if spec.stage.is_none() {
            tracing::warn!(
                program,
                "this machine cannot stage writes: the upstream writes the workspace directly"
            );
        }
        let mut confined = spec
            .command(self.adapter.support(), program, args)
            .map_err(|e| e.to_string())?;
        let writes = match confined.staging.take() {
            Some(staging) => Some(
                self.adapter
                    .upstream_writes(staging, self.roots.clone())
                    .ok_or("no checkpoint store to land its writes through")?,
            ),
            None => None,
        };
        Ok(ConfinedUpstream {
            command: confined.command,
            writes,
        })
    }
}

/// `toolgate serve`: MCP over streamable HTTP at `/mcp`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub common: ServerArgs,
    /// Where to listen. Loopback by default; port 0 picks a free port.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
    pub listen: SocketAddr,
    /// The bearer token clients must send (default: a new random one, printed
    /// once and written with mode 0600 to DATA_DIR/serve-token).
    #[arg(
        long,
        env = "TOOLGATE_SERVE_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Accept requests without a token. Only allowed on a loopback address.
    #[arg(long, conflicts_with = "token")]
    pub no_auth: bool,
    /// Also accept this Host (name or name:port) besides loopback (repeatable).
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_hosts: Vec<String>,
    /// Also accept this browser Origin, e.g. `https://app.example:8443` (repeatable).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// The largest request body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE)]
    pub max_request_bytes: usize,
}

/// The engine for an MCP server, asking through `elicitation`, the approval
/// page (when there is one) and the terminal, in the configured order, for
/// approvals and for the `question` tool alike.
fn mcp_toolgate(
    args: ServerArgs,
    data: DataDir,
    durability: Durability,
    elicitation: &ElicitationChannel,
    web: Option<&WebApprovals>,
) -> Result<Toolgate> {
    let cli = args.approval_channels.map(|o| o.0);
    let channels = Channels::new().with(ApprovalChannelName::Mcp, Arc::new(elicitation.clone()));
    let channels = match web {
        Some(web) => channels.with(ApprovalChannelName::Web, Arc::new(web.clone())),
        None => channels.with_off(
            ApprovalChannelName::Web,
            "the approval page is off (--no-web)",
        ),
    }
    .with(ApprovalChannelName::Terminal, Arc::new(TerminalChannel))
    .ordered_by(cli.clone());
    let builder = crate::cli_builder::builder(
        args.root.as_deref(),
        &args.config,
        args.mode,
        &data,
        durability,
    )?
    .asking(Asking::InPolicyOrder(channels))
    // Calls carry the client's own name; this is for the rest.
    .agent("mcp");
    let toolgate = crate::cli_builder::build(builder)?;
    let started = crate::cli_builder::start_noting(&toolgate)?;
    let policy = started.gate().policy();
    let order = policy.approval_channels(cli.as_deref());
    let order: Vec<&str> = order.iter().map(|c| c.as_str()).collect();
    tracing::info!(
        channels = %order.join(", "),
        escalate_after_s = policy.escalate_after().as_secs_f64(),
        "approval channels"
    );
    Ok(toolgate)
}

/// Serves the approval page on `listen` and prints its URL to stderr.
async fn start_web(
    listen: SocketAddr,
    data: &DataDir,
    approvals: WebApprovals,
    events: Arc<dyn EventQuery>,
    team: &toolgate::TeamConfig,
) -> Result<tokio::task::JoinHandle<Result<(), toolgate_web::WebError>>> {
    let token = toolgate_web::new_token()?;
    let store = team
        .open_approvals(data)
        .context("cannot open the saved approvals")?;
    let state = WebState {
        approvals,
        events,
        store,
        token: token.clone(),
        allowed_hosts: Vec::new(),
    };
    let (addr, handle) = toolgate_web::serve_standalone(listen, state)
        .await
        .context("cannot start the approval page")?;
    eprintln!(
        "toolgate: approval page at {}",
        toolgate_web::page_url(addr, &token)
    );
    Ok(handle)
}

/// A server's engine with its approval page and policy reloader running.
struct Running {
    toolgate: Toolgate,
    server: ToolgateServer,
    page: Option<tokio::task::JoinHandle<Result<(), toolgate_web::WebError>>>,
    /// Shows the asks agents' hooks hand over on the page.
    relay: Option<tokio::task::JoinHandle<()>>,
    reloader: tokio::task::JoinHandle<()>,
    /// The upstreams proxied, and the task re-checking their listings.
    _gateway: Option<(Gateway, tokio::task::JoinHandle<()>)>,
}

impl Running {
    /// Builds the engine, runs `before_page` on it (what must be settled before
    /// anything is served, such as `serve`'s token), then starts the page and
    /// the reloader.
    async fn start<T>(
        args: ServerArgs,
        data: DataDir,
        durability: Durability,
        before_page: impl FnOnce(&Started) -> Result<T>,
    ) -> Result<(Running, T)> {
        let elicitation = ElicitationChannel::new();
        let web = (!args.no_web).then(WebApprovals::new);
        let web_listen = args.web_listen;
        let upstream_files = args.upstreams.clone();
        let toolgate = mcp_toolgate(args, data.clone(), durability, &elicitation, web.as_ref())?;
        let started = toolgate.start()?;
        let settled = before_page(started)?;
        let page = match &web {
            // The page reads through the engine's own log (its reading connection).
            Some(w) => {
                let events = started.audit_log().clone();
                Some(start_web(web_listen, &data, w.clone(), events, started.team()).await?)
            }
            None => None,
        };
        let server = ToolgateServer::with_elicitation(
            started.engine().clone(),
            toolgate.location().clone(),
            elicitation,
        );
        let relay = match &web {
            Some(w) => Some(
                toolgate::handover::spawn_relay(&data, Arc::new(w.clone()), "page")
                    .context("cannot show hooks' asks on the approval page")?,
            ),
            None => None,
        };
        let configs = upstream_configs(started.policy_sources(), &upstream_files)?;
        let gateway = if configs.is_empty() {
            None
        } else {
            let gateway = Gateway::start(
                configs,
                started.engine().tools().process().clone(),
                PinStore::new(pin_file(data.root())),
                toolgate.location().root(),
                Some(Arc::new(UpstreamSandbox {
                    adapter: toolgate::SandboxAdapter::new(&started.gate().policy(), Some(&data)),
                    roots: toolgate
                        .location()
                        .roots()
                        .map(std::path::Path::to_path_buf)
                        .collect(),
                })),
            )
            .await?;
            for (tool, why) in gateway.withheld() {
                let tool = toolgate_core::visible::escape_hidden(&tool, &[]);
                let why = toolgate_core::visible::escape_hidden(&why, &[]);
                eprintln!("toolgate: upstream tool {tool} withheld: {why}");
            }
            let watch = gateway.spawn_watch(server.tool_list_signal());
            Some((gateway, watch))
        };
        let reloader =
            reload::spawn_policy_reloader(started.gate().clone(), started.policy_sources().clone());
        Ok((
            Running {
                toolgate,
                server,
                page,
                relay,
                reloader,
                _gateway: gateway,
            },
            settled,
        ))
    }

    /// Stops the page and the reloader, ends the upstreams (settling the
    /// writes of those whose writes are staged), and flushes the audit log.
    async fn stop(self) -> Result<()> {
        self.reloader.abort();
        if let Some((gateway, watch)) = &self._gateway {
            watch.abort();
            let started = self.toolgate.start()?;
            let engine = started.engine().clone();
            let location = Arc::clone(self.toolgate.location());
            // Nobody is left to ask: a path that needs a person is refused.
            let nobody = CancellationToken::new();
            nobody.cancel();
            let judge_for = |name: &str| {
                engine.write_judge(
                    &format!("{name}__*"),
                    toolgate_core::CallIdentity {
                        session_id: format!("gateway-{}", std::process::id()),
                        call_id: format!("end-of-session-{name}"),
                        ..Default::default()
                    },
                    Arc::clone(&location),
                    nobody.clone(),
                )
            };
            for (name, settled) in gateway.finish(&judge_for).await {
                match settled {
                    Ok(s) => {
                        if let Some(note) = s.note(&name) {
                            eprintln!("{note}");
                        }
                    }
                    Err(e) => eprintln!(
                        "toolgate: the writes of upstream {name} at the end of the session were not settled (none landed): {e}"
                    ),
                }
            }
        }
        if let Some(page) = self.page {
            page.abort();
        }
        if let Some(relay) = self.relay {
            relay.abort();
        }
        self.toolgate
            .start()?
            .audit_log()
            .flush()
            .context("cannot flush the audit log")
    }
}

/// What `toolgate mcp` says when a person started it on a terminal rather
/// than a client on a pipe: it is waiting for JSON-RPC, and how to connect one.
const TERMINAL_HINT: &str = "toolgate mcp: waiting for an MCP client on stdin. This is a stdio \
server: a client starts it, e.g. {\"mcpServers\": {\"toolgate\": {\"command\": \"toolgate\", \
\"args\": [\"mcp\", \"--root\", \"/path/to/project\"]}}}. For HTTP, run `toolgate serve`. \
To judge a call by hand: `toolgate check bash '{\"command\":\"ls\"}'`. Ctrl-D quits.";

/// Runs `toolgate mcp` until the client closes stdin; returns the exit status.
pub async fn run_mcp(args: McpArgs, data: DataDir, durability: Durability) -> Result<i32> {
    if let Some(McpCommand::Pins(command)) = args.command {
        return run_pins(command, &data);
    }
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!("{TERMINAL_HINT}");
    }
    let (running, ()) = Running::start(args.common, data, durability, |_| Ok(())).await?;
    let server = running.server.clone();
    let options = StdioOptions {
        max_message_bytes: args.max_message_bytes,
    };
    let served = serve_stdio(&server, options).await;
    running.stop().await?;
    served.context("MCP over stdio failed")?;
    Ok(0)
}

/// The HTTP authentication of `serve`: none with `--no-auth`; else `--token`
/// (or `TOOLGATE_SERVE_TOKEN`), which is printed and saved as before; else the
/// token of the config's `[serve]` section, which is neither printed nor
/// copied; else a new random token, printed once and saved with mode 0600.
fn serve_auth(
    no_auth: bool,
    flag: Option<String>,
    data_root: &std::path::Path,
    started: &Started,
) -> Result<HttpAuth> {
    if no_auth {
        return Ok(HttpAuth::Disabled);
    }
    let policy = started.gate().policy();
    let token = match (flag, policy.serve_config()) {
        (Some(t), _) => t,
        (None, Some(config)) => {
            let token = token::read_configured(config)?;
            eprintln!(
                "toolgate serve: bearer token from {}",
                token::describe(config)
            );
            return Ok(HttpAuth::Bearer(token));
        }
        (None, None) => generate_token()?,
    };
    let path = write_token_file(data_root, &token)?;
    eprintln!(
        "toolgate serve: bearer token {token} (saved in {})",
        path.display()
    );
    Ok(HttpAuth::Bearer(token))
}

/// Runs `toolgate serve` until Ctrl-C; returns the exit status.
pub async fn run_serve(args: ServeArgs, data: DataDir, durability: Durability) -> Result<i32> {
    if args.no_auth && !args.listen.ip().is_loopback() {
        bail!(
            "--no-auth is only allowed on a loopback address, not {}",
            args.listen
        );
    }
    let data_root = data.root().to_path_buf();
    let (no_auth, token) = (args.no_auth, args.token);
    let (running, auth) = Running::start(args.common, data, durability, |started| {
        serve_auth(no_auth, token, &data_root, started)
    })
    .await?;
    let _sweeper = running
        .toolgate
        .start()?
        .spill_store()
        .spawn_sweeper(SWEEP_INTERVAL, DEFAULT_RETENTION)
        .context("cannot start the spilled-output sweeper")?;
    let server = running.server.clone();
    let options = HttpOptions {
        listen: args.listen,
        auth,
        allowed: AllowedPeers {
            hosts: args.allow_hosts,
            origins: args.allow_origins,
        },
        max_request_bytes: args.max_request_bytes,
    };
    let no_auth = matches!(options.auth, HttpAuth::Disabled);
    let shutdown = CancellationToken::new();
    let bound = bind_http(&server, options, shutdown.clone()).await?;
    let addr = bound.local_addr()?;
    if no_auth {
        eprintln!(
            "toolgate serve: WARNING: authentication is OFF (--no-auth); any local process can call tools"
        );
    }
    eprintln!("toolgate serve: MCP endpoint http://{addr}{MCP_PATH}");
    let on_ctrl_c = shutdown.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let served = bound.serve().await;
    running.stop().await?;
    served.context("MCP over HTTP failed")?;
    Ok(0)
}
