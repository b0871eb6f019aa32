//! Upstream MCP servers as configured: `[upstreams.NAME]` in toolgate's TOML
//! config, or the `mcpServers` JSON most agents use.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::GatewayError;

/// One upstream MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamConfig {
    /// The configured name: the prefix of its tools (`NAME__tool`).
    pub name: String,
    /// How to reach it.
    pub transport: UpstreamTransport,
    /// Whether the server's tool annotations (`readOnlyHint`) are trusted:
    /// a read-only tool's path arguments are then judged as reads only.
    pub trust_annotations: bool,
    /// Whether a stdio upstream runs inside toolgate's sandbox (see
    /// [`super::UpstreamLauncher`]): yes unless its entry says
    /// `sandbox = false`.
    pub sandbox: bool,
    /// Extra places a sandboxed upstream may read (its installation).
    pub readable: Vec<String>,
    /// How long one call may wait for the upstream's answer
    /// (`call_timeout_secs`, default [`DEFAULT_CALL_TIMEOUT`]).
    pub call_timeout: Duration,
}

/// How long a call waits for an upstream's answer unless its entry says
/// otherwise: an upstream that never answers must not hold a call, and a
/// confined upstream's turn (its calls are made one at a time), for ever.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);

/// How an upstream is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpstreamTransport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// The environment it gets besides the clean minimum.
        env: BTreeMap<String, String>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint URL.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
}

impl UpstreamConfig {
    /// What its pins are keyed by: the configured command line or URL,
    /// never the name the server reports.
    pub fn key(&self) -> String {
        match &self.transport {
            UpstreamTransport::Stdio { command, args, .. } => {
                let mut words = vec![command.clone()];
                words.extend(args.iter().cloned());
                format!("stdio:{}", serde_json::Value::from(words))
            }
            UpstreamTransport::Http { url, .. } => format!("http:{url}"),
        }
    }
}

/// One entry as written, in either format.
#[derive(Debug, Default, Deserialize)]
struct RawEntry {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    trust_annotations: bool,
    #[serde(default)]
    sandbox: Option<bool>,
    #[serde(default)]
    readable: Vec<String>,
    #[serde(default)]
    call_timeout_secs: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
struct TomlDoc {
    #[serde(default)]
    upstreams: BTreeMap<String, RawEntry>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonDoc {
    #[serde(default)]
    mcp_servers: BTreeMap<String, RawEntry>,
}

/// Whether `name` may prefix tools: `^[A-Za-z][A-Za-z0-9_-]{0,31}$`, without `__`.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && name.len() <= 32
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.contains("__")
}

fn entry(file: &str, name: &str, raw: RawEntry) -> Result<UpstreamConfig, GatewayError> {
    let bad = |why: String| GatewayError::Config {
        file: file.to_string(),
        message: format!("upstream {name:?}: {why}"),
    };
    if !valid_name(name) {
        return Err(bad("the name must start with a letter, hold only letters, digits, '_' or '-', at most 32 characters, and no \"__\"".into()));
    }
    let transport = match (raw.command, raw.url) {
        (Some(_), Some(_)) => return Err(bad("give either `command` or `url`, not both".into())),
        (None, None) => {
            return Err(bad(
                "give `command` (stdio) or `url` (streamable HTTP)".into()
            ));
        }
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err(bad("`command` is empty".into()));
            }
            if !raw.headers.is_empty() {
                return Err(bad("`headers` are for `url` upstreams".into()));
            }
            UpstreamTransport::Stdio {
                command,
                args: raw.args,
                env: raw.env,
            }
        }
        (None, Some(url)) => {
            if matches!(raw.kind.as_deref(), Some("sse")) {
                return Err(bad(
                    "the legacy SSE transport is not supported; use a streamable HTTP endpoint"
                        .into(),
                ));
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(bad(format!(
                    "`url` must be http:// or https://, not {url:?}"
                )));
            }
            if !raw.args.is_empty() || !raw.env.is_empty() {
                return Err(bad("`args` and `env` are for `command` upstreams".into()));
            }
            UpstreamTransport::Http {
                url,
                headers: raw.headers,
            }
        }
    };
    let stdio = matches!(transport, UpstreamTransport::Stdio { .. });
    if (raw.sandbox.is_some() || !raw.readable.is_empty()) && !stdio {
        return Err(bad(
            "`sandbox` and `readable` are for `command` upstreams".into()
        ));
    }
    let call_timeout = match raw.call_timeout_secs {
        None => DEFAULT_CALL_TIMEOUT,
        Some(0) => return Err(bad("`call_timeout_secs` must be at least 1".into())),
        Some(s) => Duration::from_secs(s),
    };
    Ok(UpstreamConfig {
        name: name.to_string(),
        transport,
        trust_annotations: raw.trust_annotations,
        // A server runs confined unless its entry says otherwise.
        sandbox: stdio && raw.sandbox.unwrap_or(true),
        readable: raw.readable,
        call_timeout,
    })
}

/// The `[upstreams.NAME]` tables of a toolgate config file (other keys are
/// the policy's and ignored here).
pub fn parse_toml_upstreams(text: &str, file: &str) -> Result<Vec<UpstreamConfig>, GatewayError> {
    let doc: TomlDoc = toml::from_str(text).map_err(|e| GatewayError::Config {
        file: file.to_string(),
        message: format!("[upstreams]: {}", e.message()),
    })?;
    doc.upstreams
        .into_iter()
        .map(|(name, raw)| entry(file, &name, raw))
        .collect()
}

/// The servers of an `mcpServers` JSON file (`{"mcpServers": {NAME: {...}}}`).
pub fn parse_mcp_servers_json(text: &str, file: &str) -> Result<Vec<UpstreamConfig>, GatewayError> {
    let doc: JsonDoc = serde_json::from_str(text).map_err(|e| GatewayError::Config {
        file: file.to_string(),
        message: format!("not an mcpServers JSON file: {e}"),
    })?;
    doc.mcp_servers
        .into_iter()
        .map(|(name, raw)| entry(file, &name, raw))
        .collect()
}

/// Joins upstream lists, refusing a name configured twice.
pub fn merge(lists: Vec<Vec<UpstreamConfig>>) -> Result<Vec<UpstreamConfig>, GatewayError> {
    let mut out: Vec<UpstreamConfig> = Vec::new();
    for config in lists.into_iter().flatten() {
        if out.iter().any(|c| c.name == config.name) {
            return Err(GatewayError::Collision(format!(
                "upstream {:?} is configured twice; give each upstream one name",
                config.name
            )));
        }
        out.push(config);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_and_json_forms() {
        let t = parse_toml_upstreams(
            "mode = \"default\"\n[upstreams.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"srv\"]\nenv = { A = \"1\" }\n[upstreams.web]\nurl = \"http://127.0.0.1:9/mcp\"\nheaders = { Authorization = \"Bearer x\" }\n",
            "c.toml",
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].key(), "stdio:[\"npx\",\"-y\",\"srv\"]");
        assert_eq!(t[1].key(), "http:http://127.0.0.1:9/mcp");
        let j = parse_mcp_servers_json(
            r#"{"mcpServers":{"a":{"command":"x","args":["y"],"disabled":false}}}"#,
            "m.json",
        )
        .unwrap();
        assert_eq!(j[0].name, "a");
        assert!(parse_mcp_servers_json(r#"{"mcpServers":{"a__b":{"command":"x"}}}"#, "m").is_err());
        assert!(parse_mcp_servers_json(r#"{"mcpServers":{"a":{}}}"#, "m").is_err());
        assert!(merge(vec![j.clone(), j]).is_err());
    }

    #[test]
    fn a_calls_deadline_is_ten_minutes_unless_its_entry_says_otherwise() {
        let j = parse_mcp_servers_json(
            r#"{"mcpServers":{"a":{"command":"x"},"b":{"command":"x","call_timeout_secs":3}}}"#,
            "m.json",
        )
        .unwrap();
        let deadlines: Vec<u64> = j.iter().map(|c| c.call_timeout.as_secs()).collect();
        assert_eq!(deadlines, [600, 3]);
        let t = parse_toml_upstreams(
            "[upstreams.h]\nurl = \"https://h.example/mcp\"\ncall_timeout_secs = 30\n",
            "c.toml",
        )
        .unwrap();
        assert_eq!(t[0].call_timeout.as_secs(), 30);
        let err = parse_mcp_servers_json(
            r#"{"mcpServers":{"a":{"command":"x","call_timeout_secs":0}}}"#,
            "m.json",
        )
        .unwrap_err();
        assert!(err.to_string().contains("at least 1"), "{err}");
    }

    #[test]
    fn a_command_upstream_is_sandboxed_unless_its_entry_says_not() {
        let j = parse_mcp_servers_json(
            r#"{"mcpServers":{"a":{"command":"x"},"b":{"command":"x","sandbox":false},"c":{"url":"http://127.0.0.1:9/mcp"}}}"#,
            "m.json",
        )
        .unwrap();
        let sandboxed: Vec<(&str, bool)> = j.iter().map(|c| (c.name.as_str(), c.sandbox)).collect();
        assert_eq!(sandboxed, [("a", true), ("b", false), ("c", false)]);
        let err = parse_mcp_servers_json(
            r#"{"mcpServers":{"c":{"url":"http://127.0.0.1:9/mcp","sandbox":true}}}"#,
            "m.json",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("`sandbox` and `readable` are for `command` upstreams"),
            "{err}"
        );
    }
}
