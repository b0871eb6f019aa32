//! Cloud metadata services: the addresses and names at which a cloud
//! machine's metadata service answers, handing out the machine's own
//! credentials (an IAM role's keys, a service account's token) to whoever
//! asks from the machine. A request there is a credential read, whatever
//! program makes it.
//!
//! An address is recognised in every form a URL's host may take and
//! `curl` or `wget` accept: dotted decimal, a single number, octal or hex
//! parts, fewer than four parts (`169.254.43518`), and IPv4-mapped IPv6.
//!
//! ```
//! use toolgate_core::metadata_host::is_metadata_host;
//! assert!(is_metadata_host("169.254.169.254"));
//! assert!(is_metadata_host("2852039166"));
//! assert!(is_metadata_host("::ffff:169.254.169.254"));
//! assert!(is_metadata_host("metadata.google.internal."));
//! assert!(!is_metadata_host("example.com"));
//! assert!(!is_metadata_host("127.0.0.1"));
//! ```

use std::net::{Ipv4Addr, Ipv6Addr};

/// Names of metadata services: Google Cloud (`metadata.google.internal`,
/// its short form), AWS's (`instance-data`), documented by each provider.
const NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
];

/// Addresses outside the link-local range that serve metadata: Alibaba
/// Cloud's `100.100.100.200`.
const V4: &[Ipv4Addr] = &[Ipv4Addr::new(100, 100, 100, 200)];

/// AWS's IPv6 endpoint of its instance metadata service.
const V6: &[Ipv6Addr] = &[Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254)];

/// Whether `host` (a URL's host: without brackets or port, any case, a
/// trailing dot allowed) is a cloud metadata service: a link-local address
/// (`169.254.0.0/16`, where AWS, Google Cloud, Azure and ECS answer;
/// `fe80::/10`), one of the addresses `V4` or `V6`, or one of the names `NAMES` (below).
pub fn is_metadata_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if NAMES.contains(&host.as_str()) {
        return true;
    }
    if let Some(v4) = parse_ipv4(&host) {
        return is_metadata_v4(v4);
    }
    if let Ok(v6) = host.parse::<Ipv6Addr>() {
        if let Some(v4) = v6.to_ipv4_mapped() {
            return is_metadata_v4(v4);
        }
        return (v6.segments()[0] & 0xffc0) == 0xfe80 || V6.contains(&v6);
    }
    false
}

fn is_metadata_v4(ip: Ipv4Addr) -> bool {
    ip.is_link_local() || V4.contains(&ip)
}

/// An IPv4 address as `inet_aton(3)` reads it (one to four parts, each
/// decimal, octal with a leading `0` or hex with `0x`; the last part fills
/// the bytes that remain), which is how curl and wget read a URL's host.
pub(crate) fn parse_ipv4(text: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut values = Vec::with_capacity(parts.len());
    for p in &parts {
        let v = if let Some(hex) = p.strip_prefix("0x") {
            u32::from_str_radix(hex, 16).ok()?
        } else if p.len() > 1 && p.starts_with('0') {
            u32::from_str_radix(&p[1..], 8).ok()?
        } else if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
            p.parse::<u32>().ok()?
        } else {
            return None;
        };
        values.push(v);
    }
    let (last, head) = values.split_last()?;
    let mut addr: u32 = 0;
    for (i, v) in head.iter().enumerate() {
        if *v > 255 {
            return None;
        }
        addr |= v << (24 - 8 * i);
    }
    let room = 32 - 8 * head.len() as u32;
    if room < 32 && (*last >> room) != 0 {
        return None;
    }
    Some(Ipv4Addr::from(addr | last))
}

/// The host a command-line word names when it is a URL (`scheme://host…`)
/// or, as curl and wget also take, a host and path without a scheme
/// (`169.254.169.254/latest`): lowercase, without brackets or port.
pub fn host_of_word(word: &str) -> Option<String> {
    if word.starts_with('-') {
        return None;
    }
    let rest = match word.find("://") {
        Some(at) => &word[at + 3..],
        None => word,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else if host_port.matches(':').count() > 1 {
        host_port
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::{host_of_word, is_metadata_host, parse_ipv4};
    use std::net::Ipv4Addr;

    #[test]
    fn every_spelling_of_the_metadata_address_is_known() {
        for h in [
            "169.254.169.254",
            "169.254.170.2",
            "2852039166",
            "0xa9fea9fe",
            "0251.0376.0251.0376",
            "169.254.43518",
            "::ffff:169.254.169.254",
            "fd00:ec2::254",
            "fe80::1",
            "METADATA.google.internal",
            "100.100.100.200",
        ] {
            assert!(is_metadata_host(h), "{h}");
        }
        for h in [
            "127.0.0.1",
            "10.0.0.1",
            "example.com",
            "1.2.3.4",
            "localhost",
            "::1",
        ] {
            assert!(!is_metadata_host(h), "{h}");
        }
    }

    #[test]
    fn ipv4_parts_are_read_as_inet_aton_reads_them() {
        assert_eq!(parse_ipv4("1.2.3.4"), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(parse_ipv4("1.2.772"), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(parse_ipv4("256.1.1.1"), None);
        assert_eq!(parse_ipv4("1.2.3.4.5"), None);
        assert_eq!(parse_ipv4("a.b"), None);
    }

    #[test]
    fn a_words_host_with_or_without_a_scheme() {
        assert_eq!(
            host_of_word("http://u:p@Host:80/x").as_deref(),
            Some("host")
        );
        assert_eq!(
            host_of_word("169.254.169.254/latest").as_deref(),
            Some("169.254.169.254")
        );
        assert_eq!(host_of_word("http://[::1]:8/").as_deref(), Some("::1"));
        assert_eq!(host_of_word("-X"), None);
    }
}
