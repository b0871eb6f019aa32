//! Hosts a command-line word names that are not proved public: this
//! machine (loopback, `localhost`), its local networks (private addresses,
//! `*.local`, `*.internal`, a single-label name such as `db:5432`), or a
//! host whose spelling this reading cannot prove (a curl glob
//! `127.0.0.[1-1]`, characters a host name does not have). Services there
//! trust whoever can reach them (Docker's API on `127.0.0.1:2375`, a
//! database's admin page, a router), so a request to one is not the same
//! request as one to a public web site.
//!
//! A host is proved public when it is an IP literal in every spelling curl
//! and wget accept ([`crate::metadata_host`]'s `inet_aton` reading, IPv6)
//! that [`toolgate_paths::address`] says is public, or a DNS name of two or
//! more labels of letters, digits, `-` and `_` outside the special-use and
//! private suffixes below. A name is judged by its spelling only: what it
//! resolves to is not known until it is used (a public name may point at
//! `127.0.0.1`); the sandbox's proxy resolves before it connects. A URL's
//! host name that spells a non-public address in its labels
//! (`127.0.0.1.nip.io`, `10-0-0-1.sslip.io`) is not proved public: wildcard
//! DNS services answer it with that address.
//!
//! ```
//! use toolgate_core::local_host::local_host_of_word;
//! assert_eq!(local_host_of_word("http://127.1:2375/info").as_deref(), Some("127.1"));
//! assert_eq!(local_host_of_word("localhost:3000").as_deref(), Some("localhost"));
//! assert_eq!(local_host_of_word("https://example.com/x"), None);
//! assert_eq!(local_host_of_word("requests"), None);
//! ```

use std::net::{IpAddr, Ipv6Addr};

use toolgate_paths::address::is_public;

use crate::metadata_host::parse_ipv4;

/// Names and suffixes that never name a public host: RFC 6761's
/// `localhost`, `test` and `invalid`, mDNS's `local` (RFC 6762),
/// `home.arpa` (RFC 8375), ICANN's private-use `internal`, and the
/// suffixes networks and tools use for their own hosts (`lan`, `home`,
/// `localdomain`, `intranet`, `corp`, `private`, Kubernetes' `svc`,
/// Docker's `docker`).
const LOCAL_SUFFIXES: &[&str] = &[
    "localhost",
    "local",
    "localdomain",
    "internal",
    "home.arpa",
    "lan",
    "home",
    "intranet",
    "corp",
    "private",
    "test",
    "invalid",
    "svc",
    "docker",
];

/// The host `word` names when that host is not proved public (see the
/// module), lowercase; `None` when it names none or a public one.
///
/// A word with a scheme (`http://…`) always names a host. A word without
/// one is read as curl and wget read it (`host[:port][/path]`) only where
/// it looks like an address: an IP literal, a special-use name, a name
/// with a port, or a curl glob; other words (`requests`, `numpy==1.2`,
/// `README.md`) are not taken for hosts.
pub fn local_host_of_word(word: &str) -> Option<String> {
    if word.starts_with('-') {
        return None;
    }
    if let Some(host) = local_host_of_address(word) {
        return Some(host);
    }
    // An address after a program's own prefix (socat's `TCP:host:port`,
    // `TCP4:…`, `OPENSSL:…`).
    let (prefix, rest) = word.split_once(':')?;
    let is_prefix = prefix.starts_with(|c: char| c.is_ascii_alphabetic())
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if is_prefix && !rest.starts_with("//") {
        return local_host_of_address(rest);
    }
    None
}

/// [`local_host_of_word`] for one address.
fn local_host_of_address(word: &str) -> Option<String> {
    let (schemed, rest) = match word.find("://") {
        Some(at) => (true, &word[at + 3..]),
        None => (false, word),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() {
        // `unix:///run/docker.sock`, `file:///…`: no host to prove public.
        return schemed.then(|| word.to_ascii_lowercase());
    }
    let shown = authority.to_ascii_lowercase();
    // A URL may carry `user@`; a bare word is a package (`lodash@4`) as
    // often as `user@host`, so only the part after a URL's `@` is its host.
    let host_port = if schemed {
        authority.rsplit('@').next().unwrap_or(authority)
    } else {
        authority
    };
    let (host, port) = split_port(host_port);
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    // A bare number is an address where it is used as one
    // (`2130706433:2375/`), and where it can only be one: `0` (Linux
    // connects to loopback) and numbers past 0.255.255.255 (`nc 2130706433
    // 2375`); not an operand (`5`, a pull request's number).
    let bare_number = !schemed
        && !port
        && !rest.contains('/')
        && host.bytes().all(|b| b.is_ascii_digit())
        && host != "0"
        && host.parse::<u64>().is_ok_and(|n| n < 1 << 24);
    if let Some(ip) = ip_of(&host).filter(|_| !bare_number) {
        return (!is_public(ip)).then_some(host);
    }
    let globbed = host.contains(['[', ']', '{', '}']);
    if !schemed {
        // Not a URL: only what looks like an address is one.
        let special = is_local_name(&host);
        let single_with_port = port && !host.contains('.') && is_dns_name(&host);
        return (globbed || special || single_with_port).then_some(host);
    }
    // A URL: its authority must be spelled as a host name, or it is not
    // proved (percent-escapes, backslashes, non-ASCII a resolver maps).
    let authority_ok = authority
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b));
    if !authority_ok || host.is_empty() || !is_dns_name(&host) || !host.contains('.') {
        return Some(if host.is_empty() { shown } else { host });
    }
    // A URL's host name that spells a private address is read as one; a
    // word without a scheme is not (`10.0.0.1.log` is a file).
    (is_local_name(&host) || spells_local_address(&host)).then_some(host)
}

/// `host[:port]` or `[v6]:port`, with whether a port was given.
fn split_port(host_port: &str) -> (&str, bool) {
    if let Some(v6) = host_port.strip_prefix('[') {
        if let Some((inner, after)) = v6.split_once(']') {
            return (inner, after.starts_with(':'));
        }
        return (host_port, false);
    }
    if host_port.matches(':').count() > 1 {
        return (host_port, false);
    }
    match host_port.split_once(':') {
        // A port is a number (`db:5432`); `HEAD:src` is no host and port.
        Some((h, p)) => (h, !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())),
        None => (host_port, false),
    }
}

/// The address `host` spells, if it is an IP literal.
fn ip_of(host: &str) -> Option<IpAddr> {
    if let Some(v4) = parse_ipv4(host) {
        return Some(IpAddr::V4(v4));
    }
    host.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
}

/// Letters, digits, `-`, `_` and dots, no empty label.
fn is_dns_name(host: &str) -> bool {
    !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// A name under one of [`LOCAL_SUFFIXES`] (or one of them).
fn is_local_name(host: &str) -> bool {
    LOCAL_SUFFIXES
        .iter()
        .any(|s| host == *s || host.strip_suffix(s).is_some_and(|head| head.ends_with('.')))
}

/// Whether a DNS name spells a non-public IPv4 address in its labels: four
/// decimal labels in a row (`127.0.0.1.nip.io`, `app.10.0.0.1.nip.io`) or
/// four decimal parts in a row of a label split at `-`
/// (`10-0-0-1.sslip.io`, `app-169-254-169-254.nip.io`). Wildcard DNS
/// services (nip.io, sslip.io and their like) answer such a name with the
/// address it spells, so it reaches that address as the literal does
/// (review s43: an upstream resolving `127.0.0.1.nip.io` reached loopback
/// with only a public name judged). Nothing else names hosts so.
fn spells_local_address(host: &str) -> bool {
    let octet = |part: &str| {
        !part.is_empty()
            && part.len() <= 3
            && part.bytes().all(|b| b.is_ascii_digit())
            && part.parse::<u8>().is_ok()
    };
    let local_in = |parts: &[&str]| {
        parts.windows(4).any(|quad| {
            quad.iter().all(|p| octet(p))
                && quad
                    .join(".")
                    .parse::<std::net::Ipv4Addr>()
                    .is_ok_and(|ip| !is_public(IpAddr::V4(ip)))
        })
    };
    let labels: Vec<&str> = host.split('.').collect();
    // Under a domain: the last label is a name, not a number.
    let named = labels
        .last()
        .is_some_and(|tld| tld.bytes().any(|b| b.is_ascii_alphabetic()));
    named && labels.len() > 4 && local_in(&labels)
        || named
            && labels.iter().any(|label| {
                let parts: Vec<&str> = label.split('-').collect();
                parts.len() >= 4 && local_in(&parts)
            })
}

#[cfg(test)]
mod tests {
    use super::local_host_of_word;

    #[test]
    fn hosts_not_proved_public() {
        for w in [
            "http://127.0.0.1:2375/containers/json",
            "127.0.0.1:2375/containers/json",
            "localhost:2375/x",
            "localhost",
            "http://LOCALHOST./",
            "http://[::1]:8080/",
            "[::1]:8080/",
            "http://0.0.0.0:2375/",
            "http://0/",
            "http://2130706433/",
            "http://127.1/",
            "http://0x7f000001/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://10.0.0.5/",
            "http://172.17.0.1:2375/",
            "http://[fd12::1]/",
            "http://host.docker.internal:2375/",
            "http://app.localhost:3000/",
            "http://printer.local/",
            "http://router.lan/",
            "http://nas.home.arpa/",
            "http://db:5432/",
            "http://redis/",
            "db:5432",
            "http://127.0.0.[1-1]:2375/",
            "127.0.0.{1,1}:2375/",
            "http://user:pw@127.0.0.1/",
            "http://%31%32%37.0.0.1/",
            "http://127.0.0.1\\@example.com/",
            "http://ⓛocalhost/",
            "10.0.0.5",
            "2130706433:2375/x",
            "http://127.0.0.1.nip.io:6379/",
            "http://app.10.0.0.1.nip.io/",
            "https://10-0-0-1.sslip.io/",
            "http://customer-169-254-169-254.nip.io/x",
            "2130706433/x",
            "2130706433",
            "0",
            "TCP:127.0.0.1:2375",
            "TCP4:localhost:2375",
            "unix:///var/run/docker.sock",
        ] {
            assert!(local_host_of_word(w).is_some(), "{w}");
        }
        for w in [
            "https://example.com/x",
            "api.github.com/zen",
            "http://93.184.216.34/",
            "https://user@github.com/acme/app",
            "requests",
            "numpy==1.2.3",
            "README.md",
            "-X",
            "out.html",
            "http://example.com:8080/",
            "lodash@4",
            "5",
            "443",
            "HEAD:src/main.rs",
            "react@18.2.0",
            "10.0.0.1.log",
            "192-168-1-1.log",
            "http://93.184.216.34.nip.io/",
            "https://build-10-2-3-4567.example.com/",
        ] {
            assert!(local_host_of_word(w).is_none(), "{w}");
        }
    }
}
