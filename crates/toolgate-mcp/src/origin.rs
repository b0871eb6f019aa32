//! DNS-rebinding protection: a request's `Host` must name a loopback address
//! (or a configured host), and its `Origin`, when present, a loopback origin
//! (or a configured one).

/// Which hosts and origins may reach the server besides loopback.
#[derive(Clone, Debug, Default)]
pub struct AllowedPeers {
    /// Extra host names or `host:port` authorities.
    pub hosts: Vec<String>,
    /// Extra origins, exactly as browsers send them (`https://app.example:8443`).
    pub origins: Vec<String>,
}

/// Splits an authority into host and optional port (`[::1]:80` → `::1`, `80`).
fn split_authority(authority: &str) -> (&str, Option<&str>) {
    if let Some(rest) = authority.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((host, tail)) => (host, tail.strip_prefix(':')),
            None => (authority, None),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => (host, Some(port)),
        _ => (authority, None),
    }
}

fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_end_matches('.');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl AllowedPeers {
    /// Whether a `Host` header value is acceptable.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim();
        let (name, _) = split_authority(host);
        if name.is_empty() {
            return false;
        }
        is_loopback_host(name)
            || self
                .hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(name))
    }

    /// Whether an `Origin` header value is acceptable (`null` never is).
    pub fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim();
        if self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return true;
        }
        let Some((scheme, rest)) = origin.split_once("://") else {
            return false;
        };
        if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
            return false;
        }
        if rest.contains('/') || rest.contains('@') {
            return false;
        }
        let (name, _) = split_authority(rest);
        is_loopback_host(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_pass_others_do_not() {
        let p = AllowedPeers::default();
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "127.5.5.5",
            "[::1]:9",
            "LOCALHOST",
        ] {
            assert!(p.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.com",
            "evil.com:80",
            "127.0.0.1.evil.com",
            "localhost.evil.com",
            "",
            "10.0.0.1",
            "[::2]:80",
        ] {
            assert!(!p.host_allowed(bad), "{bad}");
        }
        let p = AllowedPeers {
            hosts: vec!["box.lan".into()],
            origins: vec![],
        };
        assert!(p.host_allowed("box.lan:8080"));
        assert!(!p.host_allowed("other.lan"));
    }

    #[test]
    fn origins() {
        let p = AllowedPeers::default();
        for ok in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:8080",
        ] {
            assert!(p.origin_allowed(ok), "{ok}");
        }
        for bad in [
            "null",
            "http://evil.com",
            "http://localhost.evil.com",
            "http://127.0.0.1@evil.com",
            "file://localhost",
            "localhost",
        ] {
            assert!(!p.origin_allowed(bad), "{bad}");
        }
        let p = AllowedPeers {
            hosts: vec![],
            origins: vec!["https://app.example:8443".into()],
        };
        assert!(p.origin_allowed("https://app.example:8443"));
        assert!(!p.origin_allowed("https://app.example"));
    }
}
