//! The network guard of webfetch: which addresses are public, which URLs may
//! be fetched, and a DNS resolver that only ever hands out checked addresses.
//!
//! A URL whose host is an IP literal is checked before any connection. A host
//! name is resolved by [`GuardedResolver`], which drops every non-public
//! address, so the connection goes to an address that was checked (no second
//! lookup an attacker could answer differently). Every redirect hop goes
//! through the same checks.

use std::collections::HashSet;
use std::error::Error as StdError;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why `ip` must not be fetched, or `None` for a public address: the
/// one table of public addresses ([`toolgate_paths::address`]).
///
/// ```
/// use toolgate_tools::web_tools::forbidden_reason;
/// assert_eq!(forbidden_reason("10.1.2.3".parse().unwrap()), Some("private"));
/// assert_eq!(forbidden_reason("::ffff:127.0.0.1".parse().unwrap()), Some("loopback"));
/// assert_eq!(forbidden_reason("93.184.216.34".parse().unwrap()), None);
/// ```
pub use toolgate_paths::address::forbidden_reason;

/// A fetch refused by the guard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Not http or https.
    #[error("unsupported URL scheme `{0}`: only http and https can be fetched")]
    Scheme(String),
    /// No host in the URL.
    #[error("URL has no host: {0}")]
    NoHost(String),
    /// The address is not public.
    #[error(
        "refusing to fetch {host}: it resolves to {addr}, a {reason} address (set allow_private_network or list the exact host:port in allowed_hosts to permit it)"
    )]
    Address {
        /// The host as written in the URL.
        host: String,
        /// The offending address.
        addr: IpAddr,
        /// Which kind of address it is.
        reason: &'static str,
    },
    /// The name did not resolve to anything.
    #[error("could not resolve {host}: {message}")]
    Unresolved {
        /// The host.
        host: String,
        /// The resolver's message.
        message: String,
    },
}

/// Which client a hop must use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Any address: the configuration allows private networks, or this exact
    /// host:port is allow-listed.
    Open,
    /// Only public addresses: names go through [`GuardedResolver`].
    Guarded,
}

/// Which URLs may be fetched.
#[derive(Debug, Clone, Default)]
pub struct NetPolicy {
    allow_private: bool,
    allowed_hosts: HashSet<String>,
}

impl NetPolicy {
    /// A policy from the configuration's flag and `host:port` allow-list.
    pub fn new(allow_private: bool, allowed_hosts: &[String]) -> Self {
        NetPolicy {
            allow_private,
            allowed_hosts: allowed_hosts
                .iter()
                .map(|h| h.trim().to_ascii_lowercase())
                .collect(),
        }
    }

    /// Checks a URL before a connection is made; says which client to use.
    pub fn check(&self, url: &Url) -> Result<Route, Refused> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(Refused::Scheme(scheme.to_string()));
        }
        let host = url
            .host_str()
            .ok_or_else(|| Refused::NoHost(url.to_string()))?
            .to_ascii_lowercase();
        if self.allow_private {
            return Ok(Route::Open);
        }
        if let Some(port) = url.port_or_known_default() {
            if self.allowed_hosts.contains(&format!("{host}:{port}")) {
                return Ok(Route::Open);
            }
        }
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(addr) = literal.parse::<IpAddr>() {
            if let Some(reason) = forbidden_reason(addr) {
                return Err(Refused::Address { host, addr, reason });
            }
        }
        Ok(Route::Guarded)
    }
}

/// A resolver that returns only public addresses, and an error naming the
/// first refused one when nothing public is left.
#[derive(Debug, Clone, Copy, Default)]
pub struct GuardedResolver;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let lookup_host = host.clone();
            let addrs: Vec<SocketAddr> = tokio::task::spawn_blocking(move || {
                (lookup_host.as_str(), 0u16)
                    .to_socket_addrs()
                    .map(Iterator::collect)
            })
            .await
            .map_err(|e| {
                boxed(Refused::Unresolved {
                    host: host.clone(),
                    message: e.to_string(),
                })
            })?
            .map_err(|e| {
                boxed(Refused::Unresolved {
                    host: host.clone(),
                    message: e.to_string(),
                })
            })?;
            let (public, refused): (Vec<SocketAddr>, Vec<SocketAddr>) = addrs
                .into_iter()
                .partition(|a| forbidden_reason(a.ip()).is_none());
            if public.is_empty() {
                return Err(match refused.first() {
                    Some(a) => boxed(Refused::Address {
                        host,
                        addr: a.ip(),
                        reason: forbidden_reason(a.ip()).unwrap_or("non-public"),
                    }),
                    None => boxed(Refused::Unresolved {
                        host,
                        message: "no addresses".into(),
                    }),
                });
            }
            if !refused.is_empty() {
                tracing::debug!(%host, ?refused, "dropped non-public addresses");
            }
            let addrs: Addrs = Box::new(public.into_iter());
            Ok(addrs)
        })
    }
}

fn boxed(r: Refused) -> Box<dyn StdError + Send + Sync> {
    Box::new(r)
}

/// Finds a [`Refused`] in an error's source chain (a resolver error arrives
/// wrapped by reqwest and hyper).
pub fn find_refusal(err: &(dyn StdError + 'static)) -> Option<Refused> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(r) = e.downcast_ref::<Refused>() {
            return Some(r.clone());
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(s: &str) -> Option<&'static str> {
        forbidden_reason(s.parse().unwrap())
    }

    #[test]
    fn classifies_v4() {
        for (ip, want) in [
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("10.0.0.1", "private"),
            ("172.16.5.4", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("100.64.0.1", "shared address space (CGNAT)"),
            ("100.127.255.254", "shared address space (CGNAT)"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "reserved"),
        ] {
            assert_eq!(reason(ip), Some(want), "{ip}");
        }
        for ip in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "93.184.216.34",
            "1.1.1.1",
        ] {
            assert_eq!(reason(ip), None, "{ip}");
        }
    }

    #[test]
    fn classifies_v6_and_embedded_v4() {
        for (ip, want) in [
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("fd00::1", "private (unique local)"),
            ("fe80::1", "link-local"),
            ("ff02::1", "multicast"),
            ("::ffff:10.0.0.1", "private"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local"),
            ("::127.0.0.1", "loopback"),
            ("64:ff9b::a00:1", "private"),
            ("2002:7f00:1::", "loopback"),
        ] {
            assert_eq!(reason(ip), Some(want), "{ip}");
        }
        assert_eq!(reason("2606:4700:4700::1111"), None);
        assert_eq!(reason("::ffff:8.8.8.8"), None);
    }

    #[test]
    fn policy_checks_literals_and_allow_list() {
        let p = NetPolicy::new(false, &["127.0.0.1:8080".to_string(), "[::1]:9000".into()]);
        let url = |s: &str| Url::parse(s).unwrap();
        assert_eq!(p.check(&url("http://127.0.0.1:8080/x")), Ok(Route::Open));
        assert_eq!(p.check(&url("http://[::1]:9000/")), Ok(Route::Open));
        assert!(matches!(
            p.check(&url("http://127.0.0.1:8081/")),
            Err(Refused::Address {
                reason: "loopback",
                ..
            })
        ));
        // WHATWG URL parsing normalises odd IPv4 spellings before the check.
        assert!(matches!(
            p.check(&url("http://2130706433/")),
            Err(Refused::Address {
                reason: "loopback",
                ..
            })
        ));
        assert!(matches!(
            p.check(&url("http://0x0a.1/")),
            Err(Refused::Address {
                reason: "private",
                ..
            })
        ));
        assert_eq!(p.check(&url("https://example.com/")), Ok(Route::Guarded));
        assert!(matches!(
            p.check(&url("ftp://example.com/")),
            Err(Refused::Scheme(_))
        ));
        let open = NetPolicy::new(true, &[]);
        assert_eq!(open.check(&url("http://10.0.0.1/")), Ok(Route::Open));
        assert!(matches!(
            open.check(&url("file:///etc/passwd")),
            Err(Refused::Scheme(_))
        ));
    }
}
