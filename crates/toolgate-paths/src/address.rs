//! Which network addresses are public: the one fact that webfetch's guard,
//! the sandbox's allowlisting proxy and the shell analyser's reading of a
//! command's hosts all use.
//!
//! An address that is not public reaches this machine (loopback, the
//! unspecified address), its local networks (private, unique-local,
//! link-local — where cloud metadata services answer —, shared CGNAT space)
//! or no one host (multicast, broadcast, reserved). Services there trust
//! whoever can reach them: Docker's API on `127.0.0.1:2375`, a database's
//! admin page, a router. IPv6 forms that carry an IPv4 address (IPv4-mapped,
//! IPv4-compatible, 6to4, NAT64) are judged by the address they carry.
//!
//! ```
//! use toolgate_paths::address::forbidden_reason;
//! assert_eq!(forbidden_reason("10.1.2.3".parse().unwrap()), Some("private"));
//! assert_eq!(forbidden_reason("::ffff:127.0.0.1".parse().unwrap()), Some("loopback"));
//! assert_eq!(forbidden_reason("93.184.216.34".parse().unwrap()), None);
//! ```

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is not public (a word for people: `loopback`, `private`…), or
/// `None` for a public address.
pub fn forbidden_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

/// Whether `ip` is on the public internet ([`forbidden_reason`] is `None`).
pub fn is_public(ip: IpAddr) -> bool {
    forbidden_reason(ip).is_none()
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_unspecified() || a == 0 {
        Some("unspecified")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared address space (CGNAT)")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if ip.is_broadcast() || a >= 240 {
        Some("reserved")
    } else if a == 192 && b == 0 && c == 0 {
        Some("IETF protocol assignment")
    } else if a == 198 && (b == 18 || b == 19) {
        Some("benchmarking")
    } else if ip.is_documentation() {
        Some("documentation")
    } else {
        None
    }
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let seg = ip.segments();
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible form
    // (::a.b.c.d) reach the embedded IPv4 address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return forbidden_v4(v4);
    }
    if seg[..6].iter().all(|&s| s == 0) {
        return forbidden_v4(embedded_v4(seg[6], seg[7]));
    }
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) also embed IPv4 addresses.
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return forbidden_v4(embedded_v4(seg[6], seg[7]));
    }
    if seg[0] == 0x2002 {
        return forbidden_v4(embedded_v4(seg[1], seg[2]));
    }
    if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2] == 1 {
        // Local-use NAT64 (RFC 8215): translated to the site's own IPv4.
        Some("private (local-use NAT64)")
    } else if seg[0] & 0xfe00 == 0xfc00 {
        Some("private (unique local)")
    } else if seg[0] & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if seg[0] & 0xffc0 == 0xfec0 {
        Some("site-local")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if seg[0] == 0x2001 && seg[1] == 0x0db8 {
        Some("documentation")
    } else {
        None
    }
}

fn embedded_v4(hi: u16, lo: u16) -> Ipv4Addr {
    let [a, b] = hi.to_be_bytes();
    let [c, d] = lo.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

#[cfg(test)]
mod tests {
    use super::{forbidden_reason, is_public};
    use std::net::IpAddr;

    #[test]
    fn what_is_not_public() {
        for ip in [
            "127.0.0.1",
            "127.255.0.9",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "198.18.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "::1",
            "::",
            "fd12::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b:1::a00:1",
            "2002:7f00:1::",
            "2002:a00:1::",
            "2001:db8::1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(
                forbidden_reason(ip).is_some(),
                "{ip} must not count as public"
            );
        }
        for ip in [
            "8.8.8.8",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::6810:84e5",
            "64:ff9b::5db8:d822",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(is_public(ip), "{ip} is public");
        }
    }
}
