//! Tools that reach the web: `webfetch` and `websearch`, with the network
//! guard that keeps them off loopback and private addresses and the HTML
//! conversion both use.
//!
//! [`register`] puts both tools in a registry under their built-in names.
//!
//! ```
//! use toolgate_core::Registry;
//! use toolgate_tools::web_tools::{register, WebToolsConfig};
//!
//! let registry = Registry::new();
//! let guards = register(&registry, &WebToolsConfig::default()).unwrap();
//! assert_eq!(guards.len(), 2);
//! ```

mod html_text;
mod net_guard;
mod webfetch;
mod websearch;

use toolgate_core::{Registration, Registry, RegistryError};

pub use net_guard::forbidden_reason;
pub use webfetch::{
    FetchFormat, MAX_REDIRECTS, MAX_RESPONSE_BYTES, WebFetchInput, WebFetchOutput, WebFetchTool,
};
pub use websearch::{
    BRAVE_API_KEY_ENV, BRAVE_ENDPOINT, BraveSearch, SearchError, SearchProvider, SearchResult,
    WebSearchConfig, WebSearchInput, WebSearchOutput, WebSearchTool,
};

/// Settings of the web tools.
#[derive(Clone, Debug, Default)]
pub struct WebToolsConfig {
    /// Lets webfetch reach loopback, private, link-local and other non-public
    /// addresses. Default `false`.
    pub allow_private_network: bool,
    /// Exact `host:port` pairs webfetch may reach even when they resolve to a
    /// non-public address (for example `127.0.0.1:8080` or `[::1]:3000`). The
    /// host is compared as written in the URL, lower-cased; the port is the
    /// URL's port or the scheme's default.
    pub allowed_hosts: Vec<String>,
    /// The search provider used by websearch.
    pub websearch: WebSearchConfig,
}

/// What the network guard refuses from a URL alone under `config` (an
/// http or https URL naming a loopback, private, link-local or other
/// non-public address literally), as the message `webfetch` gives; `None`
/// when it passes here or is not http(s). Names are only checked when they
/// resolve, which a tool of another process does on its own.
///
/// ```
/// use toolgate_tools::web_tools::{literal_refusal, WebToolsConfig};
/// let config = WebToolsConfig::default();
/// assert!(literal_refusal(&config, "http://169.254.169.254/").is_some());
/// assert!(literal_refusal(&config, "https://example.com/").is_none());
/// ```
pub fn literal_refusal(config: &WebToolsConfig, url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url.trim()).ok()?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return None;
    }
    net_guard::NetPolicy::new(config.allow_private_network, &config.allowed_hosts)
        .check(&url)
        .err()
        .map(|r| r.to_string())
}

/// Registers `webfetch` and `websearch` in `registry`. The returned guards
/// keep the registrations alive.
pub fn register(
    registry: &Registry,
    config: &WebToolsConfig,
) -> Result<Vec<Registration>, RegistryError> {
    Ok(vec![
        registry.register("webfetch", WebFetchTool::new(config))?,
        registry.register("websearch", WebSearchTool::new(config))?,
    ])
}
