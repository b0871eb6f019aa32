//! Which `Host` and `Origin` values may reach a server: loopback names
//! (`localhost`, `127.0.0.0/8`, `::1`) and whatever is configured. This is the
//! DNS-rebinding protection: a hostile page that resolves its own name to
//! 127.0.0.1 still sends its own name as `Host`.

use http::uri::Authority;

/// Which hosts and origins may reach the server besides loopback.
#[derive(Clone, Debug, Default)]
pub struct AllowedPeers {
    /// Extra host names or `host:port` authorities.
    pub hosts: Vec<String>,
    /// Extra origins, exactly as browsers send them (`https://app.example:8443`).
    pub origins: Vec<String>,
}

impl AllowedPeers {
    /// Whether a `Host` header value is loopback or configured. Configured
    /// entries match the name alone or the whole `name:port`.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim();
        let Some(name) = host_name(host) else {
            return false;
        };
        is_loopback_name(name)
            || self
                .hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(name))
    }

    /// Whether an `Origin` header value is a loopback origin over http(s) or a
    /// configured one (`null` never is).
    pub fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim();
        if self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return true;
        }
        let Some((scheme, authority)) = origin.split_once("://") else {
            return false;
        };
        (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
            && host_name(authority).is_some_and(is_loopback_name)
    }
}

/// The host name of an authority without brackets or port (`[::1]:80` → `::1`),
/// or `None` unless it is exactly a host and an optional numeric port: user
/// information (`a@b`), paths and stray characters are refused.
pub fn host_name(authority: &str) -> Option<&str> {
    let parsed: Authority = authority.parse().ok()?;
    // `Authority` accepts `user@host` and ignores a port that is not a number;
    // neither belongs in a `Host` or an `Origin`.
    if !authority.starts_with(parsed.host()) {
        return None;
    }
    let (host, after_host) = authority.split_at(parsed.host().len());
    let port_ok = after_host.is_empty()
        || after_host
            .strip_prefix(':')
            .is_some_and(|port| port.bytes().all(|b| b.is_ascii_digit()));
    if host.is_empty() || !port_ok {
        return None;
    }
    Some(
        host.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host),
    )
}

/// The port of an authority, 80 when it names none.
pub fn port_or_80(authority: &str) -> u16 {
    authority
        .parse::<Authority>()
        .ok()
        .and_then(|a| a.port_u16())
        .unwrap_or(80)
}

fn is_loopback_name(name: &str) -> bool {
    let name = name.trim_end_matches('.');
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}
