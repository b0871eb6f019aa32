//! `websearch`: searches the web through a [`SearchProvider`]. The built-in
//! provider is the Brave Search API ([`BraveSearch`]); its key comes from
//! [`WebSearchConfig::api_key`] or the environment variable named by
//! [`WebSearchConfig::api_key_env`] (default `BRAVE_API_KEY`).
//!
//! The provider endpoint is configured by the operator, not chosen by the
//! model, so it is not subject to webfetch's private-address guard.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::ACCEPT;
use reqwest::{Client, StatusCode, Url};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Content, Failure, Location, PermissionRequest, Risk, Tool, ToolContext, ToolError, ToolTraits,
};

use super::WebToolsConfig;
use super::html_text::to_text;
use super::webfetch::http_client;

/// The environment variable holding the Brave Search API key by default.
pub const BRAVE_API_KEY_ENV: &str = "BRAVE_API_KEY";
/// The Brave Search web search endpoint.
pub const BRAVE_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";
/// Results when the call does not say.
const DEFAULT_RESULTS: u32 = 10;
/// The most results one call may ask for (Brave's own maximum).
const MAX_RESULTS: u32 = 20;
/// Brave accepts queries up to 400 characters.
const MAX_QUERY_CHARS: usize = 400;
/// The largest provider response read.
const MAX_RESPONSE_BYTES: usize = 2 * 1024 * 1024;

/// One search hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchResult {
    /// The page title.
    pub title: String,
    /// The page URL.
    pub url: String,
    /// A short extract, as plain text.
    pub snippet: String,
    /// How old the page is, when the provider says (`"2 days ago"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<String>,
}

/// Errors from a search provider.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// No API key.
    #[error("{0}")]
    NotConfigured(String),
    /// The provider answered with an error status.
    #[error("{provider} answered HTTP {status}: {message}")]
    Status {
        /// The provider.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// What it said (or what the status means).
        message: String,
    },
    /// The request did not complete.
    #[error("{provider} request failed: {cause}")]
    Request {
        /// The provider.
        provider: String,
        /// The transport error, kept as the source.
        #[source]
        cause: Failure,
    },
    /// The provider's answer could not be understood.
    #[error("{provider} returned an unexpected response: {message}")]
    InvalidResponse {
        /// The provider.
        provider: String,
        /// What was wrong.
        message: String,
    },
}

/// A web search backend.
#[async_trait]
pub trait SearchProvider: Send + Sync {
    /// The provider's name, for output and errors.
    fn name(&self) -> &str;

    /// Returns up to `count` results for `query`.
    async fn search(&self, query: &str, count: u32) -> Result<Vec<SearchResult>, SearchError>;
}

/// Settings of `websearch`.
#[derive(Clone)]
pub struct WebSearchConfig {
    /// The Brave Search API key; when `None`, read from `api_key_env`.
    pub api_key: Option<String>,
    /// The environment variable holding the key. Default [`BRAVE_API_KEY_ENV`].
    pub api_key_env: String,
    /// The Brave endpoint. Default [`BRAVE_ENDPOINT`] (tests point it at a
    /// local server).
    pub endpoint: String,
    /// How long one search may take. Default 30 s.
    pub timeout: Duration,
    /// A provider to use instead of Brave.
    pub provider: Option<Arc<dyn SearchProvider>>,
}

impl Default for WebSearchConfig {
    fn default() -> Self {
        WebSearchConfig {
            api_key: None,
            api_key_env: BRAVE_API_KEY_ENV.to_string(),
            endpoint: BRAVE_ENDPOINT.to_string(),
            timeout: Duration::from_secs(30),
            provider: None,
        }
    }
}

impl std::fmt::Debug for WebSearchConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSearchConfig")
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("api_key_env", &self.api_key_env)
            .field("endpoint", &self.endpoint)
            .field("timeout", &self.timeout)
            .field(
                "provider",
                &self.provider.as_ref().map(|p| p.name().to_string()),
            )
            .finish()
    }
}

impl WebSearchConfig {
    /// The API key: the configured one, else the environment variable's
    /// (looked up with `env`); empty values count as missing.
    pub fn api_key_from(&self, env: impl Fn(&str) -> Option<String>) -> Option<String> {
        self.api_key
            .clone()
            .or_else(|| env(&self.api_key_env))
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
    }

    fn not_configured(&self) -> SearchError {
        SearchError::NotConfigured(format!(
            "websearch is not configured: set the {} environment variable to a Brave Search API \
             key (get one at https://brave.com/search/api/), or set websearch.api_key in the \
             toolgate configuration",
            self.api_key_env
        ))
    }
}

/// The Brave Search API (`GET /res/v1/web/search?q=…&count=…` with the key in
/// the `X-Subscription-Token` header).
#[derive(Debug, Clone)]
pub struct BraveSearch {
    client: Client,
    endpoint: Url,
    api_key: String,
}

impl BraveSearch {
    /// A Brave client for `endpoint` with `api_key`.
    pub fn new(client: Client, endpoint: &str, api_key: String) -> Result<Self, SearchError> {
        let endpoint = Url::parse(endpoint).map_err(|e| SearchError::Request {
            provider: "Brave Search".into(),
            cause: Failure::caused(format!("invalid endpoint {endpoint:?}"), e),
        })?;
        Ok(BraveSearch {
            client,
            endpoint,
            api_key,
        })
    }

    fn error(&self, message: impl Into<String>) -> SearchError {
        SearchError::InvalidResponse {
            provider: self.name().into(),
            message: message.into(),
        }
    }

    fn request_error(&self, e: reqwest::Error) -> SearchError {
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            message.push_str(&format!(": {s}"));
            source = s.source();
        }
        SearchError::Request {
            provider: self.name().into(),
            cause: Failure::new(message).because(e),
        }
    }
}

#[derive(Deserialize)]
struct BraveResponse {
    #[serde(default)]
    web: Option<BraveWeb>,
}

#[derive(Deserialize)]
struct BraveWeb {
    #[serde(default)]
    results: Vec<BraveResult>,
}

#[derive(Deserialize)]
struct BraveResult {
    title: String,
    url: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    age: Option<String>,
}

#[async_trait]
impl SearchProvider for BraveSearch {
    fn name(&self) -> &str {
        "Brave Search"
    }

    async fn search(&self, query: &str, count: u32) -> Result<Vec<SearchResult>, SearchError> {
        let mut url = self.endpoint.clone();
        url.query_pairs_mut()
            .append_pair("q", query)
            .append_pair("count", &count.to_string());
        let mut response = self
            .client
            .get(url)
            .header(ACCEPT, "application/json")
            .header("X-Subscription-Token", &self.api_key)
            .send()
            .await
            .map_err(|e| self.request_error(e))?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.request_error(e))? {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(self.error(format!("response larger than {MAX_RESPONSE_BYTES} bytes")));
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            let message = match status {
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                    "the API key was rejected; check BRAVE_API_KEY / websearch.api_key".to_string()
                }
                StatusCode::TOO_MANY_REQUESTS => "rate limited; try again later".to_string(),
                _ => String::from_utf8_lossy(&body).chars().take(300).collect(),
            };
            return Err(SearchError::Status {
                provider: self.name().into(),
                status: status.as_u16(),
                message,
            });
        }
        let parsed: BraveResponse =
            serde_json::from_slice(&body).map_err(|e| self.error(e.to_string()))?;
        Ok(parsed
            .web
            .map(|w| w.results)
            .unwrap_or_default()
            .into_iter()
            .take(count as usize)
            .map(|r| SearchResult {
                // Brave marks matches with <strong>; keep the plain text.
                title: to_text(&r.title),
                url: r.url,
                snippet: to_text(&r.description),
                age: r.age,
            })
            .collect())
    }
}

/// Input of `websearch`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchInput {
    /// What to search for (at most 400 characters).
    pub query: String,
    /// How many results: default 10, at most 20.
    #[serde(default)]
    pub num_results: Option<u32>,
}

/// Output of `websearch`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebSearchOutput {
    /// The query searched.
    pub query: String,
    /// Which provider answered.
    pub provider: String,
    /// The hits, best first.
    pub results: Vec<SearchResult>,
}

/// The `websearch` tool.
#[derive(Debug, Clone)]
pub struct WebSearchTool {
    config: WebSearchConfig,
    client: Arc<OnceLock<Result<Client, Failure>>>,
}

impl WebSearchTool {
    /// A websearch tool with `config.websearch`.
    pub fn new(config: &WebToolsConfig) -> Self {
        WebSearchTool {
            config: config.websearch.clone(),
            client: Arc::new(OnceLock::new()),
        }
    }

    fn provider(&self) -> Result<Arc<dyn SearchProvider>, SearchError> {
        if let Some(p) = &self.config.provider {
            return Ok(Arc::clone(p));
        }
        let key = self
            .config
            .api_key_from(|name| std::env::var(name).ok())
            .ok_or_else(|| self.config.not_configured())?;
        let client = self
            .client
            .get_or_init(|| http_client(false))
            .clone()
            .map_err(|cause| SearchError::Request {
                provider: "Brave Search".into(),
                cause,
            })?;
        Ok(Arc::new(BraveSearch::new(
            client,
            &self.config.endpoint,
            key,
        )?))
    }
}

fn check_input(input: &WebSearchInput) -> Result<u32, ToolError> {
    let query = input.query.trim();
    if query.is_empty() {
        return Err(ToolError::InvalidInput("query is empty".into()));
    }
    let chars = query.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(ToolError::InvalidInput(format!(
            "query is {chars} characters; the limit is {MAX_QUERY_CHARS}"
        )));
    }
    match input.num_results {
        None => Ok(DEFAULT_RESULTS),
        Some(n) if (1..=MAX_RESULTS).contains(&n) => Ok(n),
        Some(n) => Err(ToolError::InvalidInput(format!(
            "num_results must be between 1 and {MAX_RESULTS}; got {n}"
        ))),
    }
}

impl Tool for WebSearchTool {
    type Input = WebSearchInput;
    type Output = WebSearchOutput;

    fn traits(&self) -> ToolTraits {
        ToolTraits::reads_the_network()
    }

    fn description(&self) -> String {
        "Searches the web and returns titles, URLs and snippets (default 10 results, at most 20)."
            .into()
    }

    fn intent(
        &self,
        input: &WebSearchInput,
        _location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        check_input(input)?;
        Ok(vec![PermissionRequest::new(
            "websearch",
            input.query.trim(),
            Risk::Network,
        )])
    }

    async fn execute(
        &self,
        input: WebSearchInput,
        ctx: ToolContext,
    ) -> Result<WebSearchOutput, ToolError> {
        let count = check_input(&input)?;
        let query = input.query.trim().to_string();
        let provider = self
            .provider()
            .map_err(|e| ToolError::Caused(Failure::of(e)))?;
        let search = tokio::time::timeout(self.config.timeout, provider.search(&query, count));
        let results = tokio::select! {
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            r = search => r
                .map_err(|_| ToolError::Failed(format!(
                    "{} did not answer within {} s", provider.name(), self.config.timeout.as_secs()
                )))?
                .map_err(|e| ToolError::Caused(Failure::of(e)))?,
        };
        Ok(WebSearchOutput {
            query,
            provider: provider.name().to_string(),
            results,
        })
    }

    fn project(&self, output: &WebSearchOutput) -> Vec<Content> {
        if output.results.is_empty() {
            return vec![Content::text(format!("No results for {:?}.", output.query))];
        }
        let text = output
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let age = r
                    .age
                    .as_deref()
                    .map(|a| format!(" ({a})"))
                    .unwrap_or_default();
                format!(
                    "{}. {}{age}\n   {}\n   {}",
                    i + 1,
                    r.title,
                    r.url,
                    r.snippet
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        vec![Content::text(text)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_from_config_or_env() {
        let mut c = WebSearchConfig::default();
        assert_eq!(c.api_key_from(|_| None), None);
        assert_eq!(
            c.api_key_from(|n| (n == BRAVE_API_KEY_ENV).then(|| "env-key".to_string())),
            Some("env-key".into())
        );
        assert_eq!(c.api_key_from(|_| Some("  ".into())), None);
        c.api_key = Some("cfg-key".into());
        assert_eq!(
            c.api_key_from(|_| Some("env-key".into())),
            Some("cfg-key".into())
        );
        let msg = c.not_configured().to_string();
        assert!(
            msg.contains("BRAVE_API_KEY") && msg.contains("websearch.api_key"),
            "{msg}"
        );
        assert!(!format!("{c:?}").contains("cfg-key"));
    }

    #[test]
    fn input_checks() {
        let i = |q: &str, n| WebSearchInput {
            query: q.into(),
            num_results: n,
        };
        assert_eq!(check_input(&i("rust", None)).unwrap(), 10);
        assert!(
            check_input(&i("  ", None))
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
        assert!(check_input(&i("x", Some(0))).is_err());
        assert!(
            check_input(&i("x", Some(21)))
                .unwrap_err()
                .to_string()
                .contains("between 1 and 20")
        );
        assert!(
            check_input(&i(&"q".repeat(401), None))
                .unwrap_err()
                .to_string()
                .contains("limit")
        );
    }
}
