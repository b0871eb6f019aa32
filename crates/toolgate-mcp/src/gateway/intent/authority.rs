//! A URL's host as the parsers an upstream may use read it.
//!
//! The gate reads URLs as WHATWG does (Node's `URL` and `fetch`, browsers,
//! the `url` crate). An upstream written in Python (`urllib.parse`, httpx,
//! behind the Python SDK and its fetch server), Go (`net/url`) or on curl
//! reads them as RFC 3986 does, and the two disagree on some texts: to
//! WHATWG a backslash ends a web URL's authority, to RFC 3986 it is a
//! character of the userinfo, so `http://example.com\@127.0.0.1/` is
//! `example.com` to the gate and `127.0.0.1` to a Python upstream (review
//! s43: with fetches of example.com allowed, one reached loopback).
//!
//! A URL is judged by its host, so a URL whose host the two read
//! differently, or one WHATWG cannot read while RFC 3986 finds an authority
//! in it, cannot be judged and is refused.

use reqwest::Url;

/// The host and port of `text` as an RFC 3986 parser reads them: after
/// `SCHEME://`, up to the first `/`, `?` or `#`, past the last `@`. Tabs
/// and line breaks are dropped first (WHATWG and Python both drop them).
/// `None` when the text has no authority (`http:/h`, `mailto:x`).
fn rfc3986_host_port(text: &str) -> Option<String> {
    let t: String = text
        .trim()
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let (scheme, rest) = t.split_once("://")?;
    let mut letters = scheme.chars();
    let scheme_ok = letters.next().is_some_and(|c| c.is_ascii_alphabetic())
        && letters.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    Some(host_port.to_string())
}

/// A host (with or without a port) as WHATWG reads it in a web URL:
/// lower-case, percent-escapes and IDN mapped, IPv4 forms made dotted.
fn web_host(host_port: &str) -> Option<String> {
    Url::parse(&format!("http://{host_port}/"))
        .ok()?
        .host_str()
        .map(str::to_string)
}

/// Why `text`, which WHATWG reads as `url`, cannot be judged by that
/// reading: an RFC 3986 parser reads another host in it.
pub(super) fn another_host(text: &str, url: &Url) -> Option<String> {
    let theirs = rfc3986_host_port(text)?;
    let ours = url.host_str().unwrap_or_default();
    let same = match (web_host(ours), web_host(&theirs)) {
        (Some(a), Some(b)) => a == b,
        _ => ours.is_empty() && theirs.is_empty(),
    };
    (!same).then(|| {
        format!(
            "refusing a URL whose host parsers read differently: {:?} to WHATWG parsers (Node, browsers), {:?} to RFC 3986 parsers (Python, Go, curl); the upstream's parser decides where it connects, so the URL cannot be judged: {}",
            ours,
            theirs,
            shown(text)
        )
    })
}

/// Why `text`, which WHATWG cannot read as a URL, is refused: it has an
/// authority an RFC 3986 parser reads a host in (`http://[127.0.0.1]/`,
/// `http://127.0.0.1:99999/`). Text with white space in it is prose, not
/// a URL, and is left alone.
pub(super) fn unreadable(text: &str) -> Option<String> {
    let t = text.trim();
    if t.chars().any(char::is_whitespace) || Url::parse(t).is_ok() {
        return None;
    }
    rfc3986_host_port(t).map(|_| {
        format!(
            "refusing a URL toolgate cannot read (a WHATWG parser rejects it; an upstream's own parser may not): {}",
            shown(text)
        )
    })
}

/// `text` quoted, cut at 200 characters.
fn shown(text: &str) -> String {
    let mut s: String = text.trim().chars().take(200).collect();
    if s.len() < text.trim().len() {
        s.push('…');
    }
    format!("{s:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whatwg(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn a_backslash_in_the_authority_is_two_hosts() {
        for s in [
            "http://example.com\\@127.0.0.1:6379/",
            "HTTP://example.com:80\\@127.0.0.1/x",
            "https://example.com\\\\@10.0.0.1/",
        ] {
            let refusal = another_host(s, &whatwg(s)).expect(s);
            assert!(refusal.contains("example.com"), "{refusal}");
        }
    }

    #[test]
    fn ordinary_urls_are_one_host() {
        for s in [
            "https://example.com/a\\b?c#d",
            "http://user:p@ss@example.com:8080/x",
            "https://EXAMPLE.com./",
            "http://%65xample.com/",
            "http://0x7f.1/",
            "gopher://example.com:70/1",
            "http:/example.com/",
            "http:\\\\example.com\\",
            "https://example.com?q=http://127.0.0.1",
            "https://example.com#@127.0.0.1",
        ] {
            assert_eq!(another_host(s, &whatwg(s)), None, "{s}");
        }
    }

    #[test]
    fn an_authority_whatwg_cannot_read_is_refused() {
        assert!(unreadable("http://[127.0.0.1]/").is_some());
        assert!(unreadable("http://127.0.0.1:99999/").is_some());
        assert!(unreadable("see http://[x] for details").is_none());
        assert!(unreadable("https://example.com/").is_none());
        assert!(unreadable("notes about things").is_none());
        assert!(unreadable("C:\\Users\\me").is_none());
    }
}
