//! The guard's checks: loopback and configured hosts and origins, the bearer
//! token, and the browser session's sign-in and cookie.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Request, StatusCode};
use toolgate_http_guard::{
    Admission, AllowedPeers, Credential, HttpGuard, OriginRule, Refusal, Token, cookie_name,
    same_origin,
};

const TOKEN: &str = "abcdefabcdefabcdef";

fn host_allowed(host: &str, allowed: &[String]) -> bool {
    AllowedPeers {
        hosts: allowed.to_vec(),
        origins: vec![],
    }
    .host_allowed(host)
}

fn web_cookie(host: &str) -> String {
    cookie_name("toolgate_web_", host)
}

fn bearer_matches(header: Option<&str>, token: &str) -> bool {
    Token::new(token).bearer_matches(header)
}

// From the MCP transport's former `origin.rs`.
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

// From the MCP transport's former `auth.rs`.
#[test]
fn bearer_header_parsing() {
    let t = "abcdefabcdefabcdef";
    assert!(bearer_matches(Some("Bearer abcdefabcdefabcdef"), t));
    assert!(bearer_matches(Some("bearer abcdefabcdefabcdef"), t));
    assert!(!bearer_matches(Some("Bearer abcdefabcdefabcdeX"), t));
    assert!(!bearer_matches(Some("Basic abcdefabcdefabcdef"), t));
    assert!(!bearer_matches(Some("abcdefabcdefabcdef"), t));
    assert!(!bearer_matches(None, t));
}

// From the approval page's former `guard.rs`.
#[test]
fn loopback_and_configured_hosts() {
    let none: Vec<String> = Vec::new();
    for ok in [
        "localhost",
        "LOCALHOST:8080",
        "127.0.0.1",
        "127.1.2.3:9",
        "[::1]:80",
        "[::1]",
    ] {
        assert!(host_allowed(ok, &none), "{ok}");
    }
    for bad in [
        "evil.example",
        "evil.example:80",
        "localhost.evil.example",
        "10.0.0.1:80",
        "[::2]:1",
        "127.0.0.1.nip.io",
    ] {
        assert!(!host_allowed(bad, &none), "{bad}");
    }
    let configured = vec!["box.lan".to_string(), "other:9000".to_string()];
    assert!(host_allowed("box.lan:1234", &configured));
    assert!(host_allowed("other:9000", &configured));
    assert!(!host_allowed("other:9001", &configured));
}

#[test]
fn cookie_names_follow_the_port() {
    assert_eq!(web_cookie("127.0.0.1:4000"), "toolgate_web_4000");
    assert_eq!(web_cookie("[::1]:5"), "toolgate_web_5");
    assert_eq!(web_cookie("localhost"), "toolgate_web_80");
}

#[test]
fn origins_must_match_the_host_exactly() {
    assert!(same_origin("http://127.0.0.1:4000", "127.0.0.1:4000"));
    assert!(!same_origin("http://127.0.0.1:4001", "127.0.0.1:4000"));
    assert!(!same_origin("http://127.0.0.1:4000.evil", "127.0.0.1:4000"));
    assert!(!same_origin("null", "127.0.0.1:4000"));
}

// New: what the parsed authority refuses.
#[test]
fn authorities_with_user_information_or_junk_ports_are_refused() {
    let p = AllowedPeers::default();
    for bad in [
        "a@localhost",
        "127.0.0.1@evil.com",
        "localhost:abc",
        "[::1]x",
        "localhost/x",
        "::1",
        " ",
    ] {
        assert!(!p.host_allowed(bad), "{bad}");
    }
    assert!(p.host_allowed("localhost."));
    assert!(!p.origin_allowed("http://localhost:3000/path"));
    assert!(!p.origin_allowed("http://localhost:3000@evil.com"));
}

fn mcp_guard() -> HttpGuard {
    HttpGuard {
        peers: AllowedPeers::default(),
        origin: OriginRule::Peers,
        credential: Credential::Bearer(Token::new(TOKEN)),
    }
}

fn web_guard(token: &str) -> HttpGuard {
    HttpGuard {
        peers: AllowedPeers::default(),
        origin: OriginRule::SameAsHost,
        credential: Credential::Session {
            token: Token::new(token),
            cookie_prefix: "toolgate_web_".into(),
        },
    }
}

fn request(method: &str, uri: &str, headers: &[(&str, &str)]) -> Request<()> {
    let mut builder = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(()).unwrap()
}

#[test]
fn mcp_requests_need_a_loopback_host_a_loopback_origin_and_the_bearer() {
    let g = mcp_guard();
    let bearer = format!("Bearer {TOKEN}");
    let ok = request(
        "POST",
        "/mcp",
        &[("host", "localhost:9"), ("authorization", &bearer)],
    );
    assert_eq!(g.check(&ok), Ok(Admission::Admit));
    let from_page = request(
        "POST",
        "/mcp",
        &[
            ("host", "localhost:9"),
            ("origin", "http://localhost:3000"),
            ("authorization", &bearer),
        ],
    );
    assert_eq!(g.check(&from_page), Ok(Admission::Admit));

    let cases = [
        (request("POST", "/mcp", &[]), Refusal::NoHost),
        (
            request("POST", "/mcp", &[("host", "evil.com")]),
            Refusal::HostNotAllowed {
                host: "evil.com".into(),
            },
        ),
        (
            request(
                "POST",
                "/mcp",
                &[("host", "localhost"), ("origin", "http://evil.com")],
            ),
            Refusal::OriginNotAllowed {
                origin: "http://evil.com".into(),
            },
        ),
        (
            request("POST", "/mcp", &[("host", "localhost")]),
            Refusal::BearerMissing,
        ),
        (
            request(
                "POST",
                "/mcp",
                &[("host", "localhost"), ("authorization", "Bearer nope")],
            ),
            Refusal::BearerInvalid,
        ),
    ];
    for (req, refusal) in cases {
        assert_eq!(g.check(&req), Err(refusal));
    }
    assert!(
        Refusal::BearerMissing
            .to_string()
            .contains("missing bearer token")
    );
    assert!(
        Refusal::BearerInvalid
            .to_string()
            .contains("invalid bearer token")
    );
    let foreign = Refusal::HostNotAllowed { host: "x".into() };
    assert!(foreign.to_string().contains("DNS-rebinding"));
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    assert_eq!(Refusal::BearerMissing.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(Refusal::NoHost.status(), StatusCode::BAD_REQUEST);
}

#[test]
fn an_open_guard_still_checks_host_and_origin() {
    let g = HttpGuard {
        credential: Credential::Open,
        ..mcp_guard()
    };
    assert_eq!(
        g.check(&request("GET", "/mcp", &[("host", "[::1]:80")])),
        Ok(Admission::Admit)
    );
    assert!(matches!(
        g.check(&request("GET", "/mcp", &[("host", "evil.com")])),
        Err(Refusal::HostNotAllowed { .. })
    ));
}

#[test]
fn a_url_token_signs_in_and_the_cookie_admits() {
    let g = web_guard(TOKEN);
    let host = ("host", "127.0.0.1:4000");
    let signed = g
        .check(&request(
            "GET",
            &format!("/?a=1&token={TOKEN}&b=2"),
            &[host],
        ))
        .unwrap();
    let Admission::SignIn(sign_in) = signed else {
        panic!("no sign-in: {signed:?}");
    };
    assert_eq!(sign_in.target, "/?a=1&b=2");
    assert!(
        sign_in
            .set_cookie
            .starts_with(&format!("toolgate_web_4000={TOKEN}"))
    );
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(sign_in.set_cookie.contains(attr), "{}", sign_in.set_cookie);
    }
    let cookie = format!("other=1; toolgate_web_4000={TOKEN}");
    assert_eq!(
        g.check(&request("GET", "/", &[host, ("cookie", &cookie)])),
        Ok(Admission::Admit)
    );
    let cases = [
        (
            request("GET", "/?token=wrong", &[host]),
            Refusal::UrlTokenWrong,
        ),
        (
            request("GET", "/", &[host, ("cookie", "toolgate_web_4000=old")]),
            Refusal::CookieStale,
        ),
        (
            request(
                "GET",
                "/",
                &[host, ("cookie", &format!("toolgate_web_4001={TOKEN}"))],
            ),
            Refusal::CookieMissing,
        ),
        (request("GET", "/", &[host]), Refusal::CookieMissing),
    ];
    for (req, refusal) in cases {
        assert_eq!(g.check(&req), Err(refusal));
    }
    assert_eq!(
        web_guard("").check(&request("GET", "/?token=", &[host])),
        Err(Refusal::NoTokenConfigured)
    );
}

#[test]
fn the_page_takes_only_its_own_origin_and_requires_it_to_change_state() {
    let g = web_guard(TOKEN);
    let cookie = format!("toolgate_web_4000={TOKEN}");
    let base = [("host", "127.0.0.1:4000"), ("cookie", cookie.as_str())];
    let with = |origin: &'static str| {
        let mut headers = base.to_vec();
        headers.push(("origin", origin));
        headers
    };
    assert_eq!(
        g.check(&request("POST", "/x", &with("http://127.0.0.1:4000"))),
        Ok(Admission::Admit)
    );
    assert_eq!(
        g.check(&request("POST", "/x", &base)),
        Err(Refusal::OriginMissing)
    );
    assert_eq!(g.check(&request("GET", "/x", &base)), Ok(Admission::Admit));
    assert_eq!(
        g.check(&request("GET", "/x", &with("http://localhost:4000"))),
        Err(Refusal::CrossOrigin {
            origin: "http://localhost:4000".into()
        })
    );
    // A POST never signs in with a URL token: it needs the cookie.
    let post = request(
        "POST",
        &format!("/x?token={TOKEN}"),
        &[
            ("host", "127.0.0.1:4000"),
            ("origin", "http://127.0.0.1:4000"),
        ],
    );
    assert_eq!(g.check(&post), Err(Refusal::CookieMissing));
}

#[test]
fn tokens_never_show_in_debug() {
    assert_eq!(format!("{:?}", Token::new(TOKEN)), "Token(<redacted>)");
    assert!(!Token::new("").matches(""));
}
