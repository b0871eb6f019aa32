//! The requests an upstream tool call implies, found by the kinds of its
//! arguments: the call itself (`mcp`, `NAME__tool`, and the action
//! `NAME__tool` for rules that name the tool as an action), every path (`read`, and
//! `edit` unless the tool is trusted read-only), every URL (`webfetch`; one
//! naming a non-public address literally is refused before anyone is asked,
//! as the built-in `webfetch` refuses it) and every `command` (`bash`, for
//! the shell analyser).
//!
//! A path is judged as every reading an upstream may give it: as written
//! (the kernel's, links followed), with surrounding white space trimmed, and
//! with `.` and `..` folded by the names alone (what Node's `path.resolve`,
//! Python's `os.path.normpath` and Go's `filepath.Clean` do before opening).
//! A `file:` URL is the path it names. An object's keys are judged by their
//! shape as its values are.

mod authority;

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value};
use toolgate_core::location::expand_home;
use toolgate_core::{Location, PermissionRequest, Risk, ToolError};

/// The action of an upstream tool call.
pub const MCP_ACTION: &str = "mcp";

/// How deep arguments are searched.
const MAX_DEPTH: usize = 16;
/// How many strings are looked at, at most.
const MAX_STRINGS: usize = 512;

/// The requests of one call of the upstream tool exposed as `exposed`.
pub fn requests(
    exposed: &str,
    arguments: &Map<String, Value>,
    location: &Location,
    read_only: bool,
) -> Result<Vec<PermissionRequest>, ToolError> {
    let risk = if read_only { Risk::Read } else { Risk::Write };
    let mut out = vec![
        PermissionRequest::new(MCP_ACTION, exposed, risk).with_save_pattern(Some(exposed.into())),
    ];
    let mut budget = MAX_STRINGS;
    walk_object(
        arguments,
        0,
        location,
        read_only,
        &mut budget,
        &mut out,
        false,
    )?;
    Ok(out)
}

/// Walks an object's members: each key judged by its shape alone (a path
/// or URL as a key is one as a value is), each value under its key.
fn walk_object(
    map: &Map<String, Value>,
    depth: usize,
    location: &Location,
    read_only: bool,
    budget: &mut usize,
    out: &mut Vec<PermissionRequest>,
    in_text: bool,
) -> Result<(), ToolError> {
    for line in split_command(map) {
        out.push(PermissionRequest::command("bash", &line, Risk::Execute));
    }
    for (key, value) in map {
        // Only a key that may be a path or a URL counts against the budget:
        // an ordinary member name costs nothing to judge.
        if key.contains(':') || shaped_like_path(key.trim()) {
            take_string(budget)?;
            judge_string("", key, location, read_only, out)?;
        }
        walk(key, value, depth, location, read_only, budget, out, in_text)?;
    }
    Ok(())
}

/// Counts one more string against the budget.
fn take_string(budget: &mut usize) -> Result<(), ToolError> {
    if *budget == 0 {
        return Err(ToolError::InvalidInput(
            "too many strings in the arguments to judge".into(),
        ));
    }
    *budget -= 1;
    Ok(())
}

/// The request of a rule that names the tool as the action (`[permission]
/// "NAME__tool" = "deny"`): judged at `read`, so that only such a rule
/// changes anything, and judged only when the policy has one
/// ([`PreparedCall::when_named`](toolgate_core::PreparedCall::when_named)).
pub fn named_as_action(exposed: &str) -> PermissionRequest {
    PermissionRequest::new(exposed, "*", Risk::Read)
}

/// Judges `value`, found under `key`; `in_text`: inside a string holding
/// JSON text.
#[allow(clippy::too_many_arguments)]
fn walk(
    key: &str,
    value: &Value,
    depth: usize,
    location: &Location,
    read_only: bool,
    budget: &mut usize,
    out: &mut Vec<PermissionRequest>,
    in_text: bool,
) -> Result<(), ToolError> {
    if depth > MAX_DEPTH {
        return Err(ToolError::InvalidInput(
            "arguments nested too deeply to judge".into(),
        ));
    }
    match value {
        Value::String(s) => {
            // Inside JSON text (a file's content, often) only a string that
            // is judged as something counts: a large document of ordinary
            // strings is not refused for its size.
            if !in_text {
                take_string(budget)?;
            }
            let before = out.len();
            judge_string(key, s, location, read_only, out)?;
            if in_text && out.len() > before {
                take_string(budget)?;
            }
            // JSON text is judged as the value it encodes too: a tool that
            // takes its options as a JSON string reads the paths in it.
            match json_text(s) {
                Some(inner) => walk(
                    key,
                    &inner,
                    depth + 1,
                    location,
                    read_only,
                    budget,
                    out,
                    true,
                ),
                None => Ok(()),
            }
        }
        // An array of strings under a command's key is an argument vector:
        // judged as the command lines it makes, and each word by its shape
        // (a path, a URL) as any string is.
        Value::Array(items)
            if names_command(key) && !items.is_empty() && items.iter().all(Value::is_string) =>
        {
            let words: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            for word in &words {
                take_string(budget)?;
                judge_string("", word, location, read_only, out)?;
            }
            for line in argv_lines(&words) {
                out.push(PermissionRequest::command("bash", &line, Risk::Execute));
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .try_for_each(|v| walk(key, v, depth + 1, location, read_only, budget, out, in_text)),
        Value::Object(map) => {
            walk_object(map, depth + 1, location, read_only, budget, out, in_text)
        }
        _ => Ok(()),
    }
}

fn judge_string(
    key: &str,
    s: &str,
    location: &Location,
    read_only: bool,
    out: &mut Vec<PermissionRequest>,
) -> Result<(), ToolError> {
    let host_key = names_host(key);
    let url_key = names_url(key);
    let command_key = names_command(key);
    let key = key.to_ascii_lowercase();
    if command_key && !s.trim().is_empty() {
        out.push(PermissionRequest::command("bash", s, Risk::Execute));
    } else if let Some(path) = file_url_path(s)? {
        judge_path(&path, location, read_only, out)?;
    } else if let Some(url) = network_url(s) {
        judge_url(&url, out)?;
        // A URL is judged by its host: one that the upstream's parser may
        // read with another host cannot be.
        if let Some(refusal) = authority::another_host(s, &url) {
            return Err(ToolError::Failed(refusal));
        }
    } else if let Some(refusal) = authority::unreadable(s) {
        return Err(ToolError::Failed(refusal));
    } else if let Some(url) = (host_key || (url_key && address_shaped(s)) || endpoint_shaped(s))
        .then(|| bare_host(s))
        .transpose()?
        .flatten()
    {
        judge_url(&url, out)?;
    } else if looks_like_path(&key, s) {
        // A form that holds a line break is not judged as a path (text
        // under a key such as `file_content`); one trimmed to a path's
        // shape is.
        let trimmed = s.trim();
        let mut forms = Vec::with_capacity(2);
        if !s.contains('\n') {
            forms.push(s);
        }
        if trimmed != s && shaped_like_path(trimmed) {
            forms.push(trimmed);
        }
        for form in forms {
            judge_path(form, location, read_only, out)?;
        }
    } else {
        secrets_named_in_text(s, location, read_only, out)?;
    }
    Ok(())
}

/// Judges, as a read of it, each secret file that text (code a tool runs,
/// a query, a message) names by an absolute or home path:
/// `print(open("/home/u/.ssh/id_rsa").read())` under `code` reached an
/// upstream that runs code with only the tool's rule asked (review s43's
/// follow-up). Only words that the credential table names count, so a
/// path in prose asks nothing; a secret named in prose is refused as any
/// read of it is.
fn secrets_named_in_text(
    s: &str,
    location: &Location,
    read_only: bool,
    out: &mut Vec<PermissionRequest>,
) -> Result<(), ToolError> {
    let separators = |c: char| c.is_whitespace() || "\"'`()[]{}<>,;=|&".contains(c);
    if !s.contains(separators) {
        return Ok(());
    }
    let home = toolgate_core::location::expand_home("~");
    for word in s.split(separators) {
        let word = word.trim_end_matches(['.', ':']);
        if !(word.starts_with('/') || word.starts_with("~/")) || word.len() > KERNEL_PATH_MAX {
            continue;
        }
        let path = toolgate_core::location::expand_home(word);
        if toolgate_core::credential::is_credential(&path, &home).is_some() {
            judge_path(word, location, read_only, out)?;
        }
    }
    Ok(())
}

/// Judges a URL (or a host given without one, as its URL) as the built-in
/// `webfetch` judges it, as parsed: a `webfetch` request, or a refusal of
/// its host before anyone is asked. The built-in web tools run with the
/// default network settings; an upstream is held to the same.
fn judge_url(url: &reqwest::Url, out: &mut Vec<PermissionRequest>) -> Result<(), ToolError> {
    let config = toolgate_tools::web_tools::WebToolsConfig::default();
    if let Some(refusal) = host_refusal(&config, url) {
        return Err(ToolError::Failed(refusal));
    }
    out.push(PermissionRequest::url(
        "webfetch",
        url.as_str(),
        Risk::Network,
    ));
    Ok(())
}

/// Longest path text the kernel opens (`PATH_MAX`, its terminating NUL
/// included): a longer one reaches a file only through a program that
/// folds it first, so it is judged by its folded form alone.
const KERNEL_PATH_MAX: usize = 4095;

/// Judges `path` as written and folded by names: a `read` request for each
/// place it may name, and an `edit` one unless the tool is trusted
/// read-only. A form longer than the kernel opens is not resolved (only a
/// program that folds it can reach a file with it).
fn judge_path(
    path: &str,
    location: &Location,
    read_only: bool,
    out: &mut Vec<PermissionRequest>,
) -> Result<(), ToolError> {
    let mut places = BTreeSet::new();
    let other_home = other_users_home(path);
    let forms = std::iter::once(path.to_string())
        .chain(folded(path, location.root()))
        .chain(other_home.iter().flat_map(|p| {
            let folded = folded(p, location.root());
            std::iter::once(p.clone()).chain(folded)
        }));
    for form in forms.filter(|f| f.len() <= KERNEL_PATH_MAX) {
        let resolved = location.resolve(&form)?;
        places.insert(resolved.path.to_string_lossy().into_owned());
    }
    for place in places {
        out.push(PermissionRequest::path("read", place.clone(), Risk::Read));
        if !read_only {
            out.push(
                PermissionRequest::path("edit", place, Risk::Write)
                    .with_note("a path given to an upstream tool that may write it"),
            );
        }
    }
    Ok(())
}

/// `~user/rest` as Python's `os.path.expanduser` and the shells read it:
/// under that user's home, from the user database (`/etc/passwd`); `None`
/// for any other text, or a user it does not list (then the text is left
/// as written by those readers too).
fn other_users_home(path: &str) -> Option<String> {
    let rest = path.strip_prefix('~')?;
    let (user, tail) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    if user.is_empty() {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    let home = passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next() == Some(user))
            .then(|| fields.nth(4))
            .flatten()
    })?;
    Some(format!("{}{tail}", home.trim_end_matches('/')))
}

/// `path` made absolute (`~` from the home, a relative one from `root`)
/// with `.`, `..` and repeated `/` folded by the names alone, when that
/// differs from how it is written.
fn folded(path: &str, root: &Path) -> Option<String> {
    let expanded = expand_home(path);
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        root.join(expanded)
    };
    let folded = toolgate_core::path_text::lexical(&absolute);
    let text = folded.to_str()?;
    (text != path).then(|| text.to_string())
}

/// The path a `file:` URL names (`file:///p`, `file:/p`,
/// `file://localhost/p`, percent-escapes decoded); `None` for any other
/// text. A `file:` URL that names no local path, or one that is not UTF-8,
/// is refused: it cannot be judged as the path it may reach.
fn file_url_path(s: &str) -> Result<Option<String>, ToolError> {
    let t = s.trim();
    if !t.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("file:")) {
        return Ok(None);
    }
    let refuse = || {
        let mut shown: String = t.chars().take(200).collect();
        if shown.len() < t.len() {
            shown.push('…');
        }
        ToolError::InvalidInput(format!(
            "a file URL that names no local path toolgate can judge: {shown:?}"
        ))
    };
    let url = reqwest::Url::parse(t).map_err(|_| refuse())?;
    let path = url.to_file_path().map_err(|()| refuse())?;
    let text = path.into_os_string().into_string().map_err(|_| refuse())?;
    Ok(Some(text))
}

/// The URL `s` is to a WHATWG URL parser (Node's `fetch` and `URL`,
/// browsers, the `url` crate behind the built-in `webfetch`) when it reaches
/// the network: a web scheme however it is spelled (`http:/h`, `http:\\h`,
/// `http:h` and tabs or line breaks inside all parse as `http://h/`, and
/// Node fetched them while only the `http://` spelling was judged), or any
/// other scheme with a host (`gopher://h`). `file:` URLs are paths.
fn network_url(s: &str) -> Option<reqwest::Url> {
    let t = s.trim();
    if !t.contains(':') {
        return None;
    }
    let url = reqwest::Url::parse(t).ok()?;
    match url.scheme() {
        "http" | "https" | "ws" | "wss" | "ftp" => Some(url),
        "file" => None,
        _ => url.host().is_some().then_some(url),
    }
}

/// A member name's words, lower-case: split at anything but letters and
/// digits and where a lower-case letter or digit meets an upper-case one
/// (`dbHost` is `db`, `host`; `remote_host` is `remote`, `host`).
fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut last_lower = false;
    for c in key.chars() {
        let boundary = !c.is_ascii_alphanumeric() || (c.is_ascii_uppercase() && last_lower);
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_ascii_alphanumeric() {
            word.push(c.to_ascii_lowercase());
        }
        last_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether a member name names a host: one of its words is `host`,
/// `hostname` or `ip` (`host`, `dbHost`, `remote_host`, `server_ip`,
/// `ip_address`).
fn names_host(key: &str) -> bool {
    key_words(key)
        .iter()
        .any(|w| matches!(w.as_str(), "host" | "hostname" | "ip"))
}

/// Whether a member name names a URL or an address (`url`, `baseUrl`,
/// `endpoint`, `server`, `address`, `redis_addr`, `domain`): a fetch
/// server puts `http://` in front of a URL given without a scheme, so an
/// address there ([`address_shaped`]) is judged as a host is.
fn names_url(key: &str) -> bool {
    key_words(key).iter().any(|w| {
        matches!(
            w.as_str(),
            "url" | "uri" | "endpoint" | "server" | "address" | "addr" | "domain"
        )
    })
}

/// The host part of a one-word text given without a scheme (before its
/// first `/`, `?` or `#`), when it has that shape: no white space, no
/// `@` (an e-mail address), no `://`.
fn schemeless_host(s: &str) -> Option<&str> {
    let t = s.trim();
    if t.is_empty() || t.chars().any(char::is_whitespace) || t.contains('@') || t.contains("://") {
        return None;
    }
    let host = t.split(['/', '?', '#']).next().unwrap_or_default();
    (!host.is_empty()).then_some(host)
}

/// Whether a text given without a scheme has an address's shape: a host
/// with a port, a dotted name or address, a bracketed IPv6 address or
/// `localhost` (not a bare word such as `github`, nor a path).
fn address_shaped(s: &str) -> bool {
    schemeless_host(s).is_some_and(|host| {
        !host.starts_with(['.', '~'])
            && (host.starts_with('[')
                || host.contains(['.', ':'])
                || host.eq_ignore_ascii_case("localhost"))
    })
}

/// Whether a text is a network endpoint by its shape alone, under any key:
/// an IP address (IPv4 in any dotted or hexadecimal spelling, bracketed
/// IPv6) or `localhost` with a port
/// (`127.0.0.1:6379`, `[::1]:8080/x`). Review s43: under a key no list
/// names (`target`, `to`, `peer`) one reached loopback.
fn endpoint_shaped(s: &str) -> bool {
    let Some(host) = schemeless_host(s) else {
        return false;
    };
    let Some(name) = host
        .rsplit_once(':')
        .filter(|(_, port)| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
        .map(|(name, _)| name)
    else {
        return false;
    };
    // An IPv4 address as `inet_aton` (and so `getaddrinfo`) reads it too
    // (`127.1`, `0x7f.0.0.1`): dotted or hexadecimal, never a bare number
    // (`12:30` is a time).
    let ipv4 = (name.contains('.') || name.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("0x")))
        && reqwest::Url::parse(&format!("http://{name}/"))
            .ok()
            .and_then(|u| u.host_str()?.parse::<std::net::Ipv4Addr>().ok())
            .is_some();
    name.eq_ignore_ascii_case("localhost")
        || ipv4
        || name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .is_some_and(|n| n.parse::<std::net::Ipv6Addr>().is_ok())
}

/// Whether a member name names a command: `script`, `shell`, `argv` or
/// `exec`, or one of its words is `command`, `cmd`, `cmdline` or
/// `commandline` (`command`, `cmd`, `commandLine`, `shell_command`,
/// `run_cmd`). Review s42: only the
/// four exact names were, so `{"commandLine": "cat ~/.ssh/id_rsa"}` went
/// to a shell upstream with no command judged.
fn names_command(key: &str) -> bool {
    matches!(
        key.to_ascii_lowercase().as_str(),
        "script" | "shell" | "argv" | "exec"
    ) || key_words(key)
        .iter()
        .any(|w| matches!(w.as_str(), "command" | "cmd" | "cmdline" | "commandline"))
}

/// Whether a member name names a program's arguments: `args`,
/// `arguments` or `argv`.
fn names_arguments(key: &str) -> bool {
    matches!(
        key.to_ascii_lowercase().as_str(),
        "args" | "arguments" | "argv"
    )
}

/// The command lines of a program and its arguments given under sibling
/// members (`{"command": "find", "args": [".", "-exec", "sh", "-c", "cat
/// ~/.ssh/id_rsa", ";"]}`): the program (a string, or an argument vector,
/// under a key naming a command) followed by the arguments (an array of
/// strings under a key naming them). Review s43: each piece was judged
/// alone, `find` was allowed and the key was read.
fn split_command(map: &Map<String, Value>) -> Vec<String> {
    let strings = |v: &Value| -> Option<Vec<String>> {
        match v {
            Value::String(s) if !s.trim().is_empty() => Some(vec![s.clone()]),
            Value::Array(items) if !items.is_empty() => items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect(),
            _ => None,
        }
    };
    let Some(arguments) = map
        .iter()
        .filter(|(k, v)| names_arguments(k) && v.is_array())
        .find_map(|(_, v)| strings(v))
    else {
        return Vec::new();
    };
    // The program: under a member naming a command; without one, any string
    // beside the arguments may be it (`{"program": "sh", "args": [...]}`,
    // `"exe"`, `"binary"`: review s43's follow-up found one no list named).
    let named: Vec<Vec<String>> = map
        .iter()
        .filter(|(k, _)| names_command(k) && !names_arguments(k))
        .filter_map(|(_, v)| strings(v))
        .take(1)
        .collect();
    let programs = if named.is_empty() {
        map.iter()
            .filter(|(k, v)| !names_arguments(k) && v.is_string())
            .filter_map(|(_, v)| strings(v))
            .take(MAX_PROGRAM_CANDIDATES)
            .collect()
    } else {
        named
    };
    programs
        .into_iter()
        .flat_map(|mut words| {
            words.extend(arguments.iter().cloned());
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            argv_lines(&words)
        })
        .collect()
}

/// How many strings beside an arguments array are judged as its program
/// when no member names one.
const MAX_PROGRAM_CANDIDATES: usize = 8;

/// An argument vector (`["sh", "-c", "cat ~/.ssh/id_rsa"]`) as the
/// command lines an upstream may run it as: each word quoted, as `execve`
/// passes it, and the words joined by spaces, as a server that hands the
/// line to a shell runs it (the same text when no word needs quoting).
fn argv_lines(words: &[&str]) -> Vec<String> {
    let quoted = toolgate_core::shell_text::argv_line(words);
    let joined = words.join(" ");
    if quoted == joined {
        vec![quoted]
    } else {
        vec![quoted, joined]
    }
}

/// A host given without a URL under a key that names one (`{"host":
/// "127.0.0.1", "port": 6379}`), as the web URL it is judged as: an
/// upstream connects to it as it would to a URL's host (review s42: a bare
/// host reached loopback with nothing but the tool's rule asked).
/// `Ok(None)` for text that is not one word; refused when the word cannot
/// be read as a host.
fn bare_host(s: &str) -> Result<Option<reqwest::Url>, ToolError> {
    let t = s.trim();
    if t.is_empty() || t.chars().any(char::is_whitespace) || t.contains("://") {
        return Ok(None);
    }
    reqwest::Url::parse(&format!("http://{t}"))
        .map(Some)
        .map_err(|_| {
            let shown: String = t.chars().take(200).collect();
            ToolError::InvalidInput(format!(
                "a host toolgate cannot read as an address or name: {shown:?}"
            ))
        })
}

/// The value a string encodes when it is JSON text of an object, an array
/// or a string (white space around it allowed); `None` for any other text.
fn json_text(s: &str) -> Option<Value> {
    let t = s.trim();
    if !(t.starts_with('{') || t.starts_with('[') || t.starts_with('"')) {
        return None;
    }
    serde_json::from_str::<Value>(t)
        .ok()
        .filter(|v| v.is_object() || v.is_array() || v.is_string())
}

/// The built-in `webfetch`'s refusal of `url`'s host named literally, for a
/// URL of any scheme: the refusal is of the address, and an upstream
/// reaches it over `gopher:`, `ftp:`, `ws:` or a database's scheme as
/// readily as over `http:`. A non-web scheme's host is opaque to the URL
/// parser (`gopher://0x7f.1/` keeps `0x7f.1`, which `inet_aton` reads as
/// 127.0.0.1), so it is read as a web URL's host is; a host that cannot be
/// read so is refused, since it cannot be judged.
///
/// The built-in `webfetch` also refuses a name that resolves to a
/// non-public address, when it connects; an upstream resolves names itself,
/// so here a name is judged by its spelling, as the shell analyser judges a
/// command's hosts: `localhost` and `*.localhost`, `*.local`, `*.internal`
/// and the other special-use and private suffixes, a single-label name
/// (`redis`), a cloud metadata service's name
/// (`metadata.google.internal`) are refused (review s42: all four reached
/// an upstream with only the webfetch rule asked).
fn host_refusal(
    config: &toolgate_tools::web_tools::WebToolsConfig,
    url: &reqwest::Url,
) -> Option<String> {
    use toolgate_tools::web_tools::literal_refusal;
    let web = if matches!(url.scheme(), "http" | "https") {
        url.clone()
    } else {
        let host = url.host_str()?;
        let as_web = match url.port_or_known_default() {
            Some(port) => format!("http://{host}:{port}/"),
            None => format!("http://{host}/"),
        };
        match reqwest::Url::parse(&as_web) {
            Ok(web) => web,
            Err(_) => {
                return Some(format!(
                    "refusing to fetch a {}: URL whose host toolgate cannot read as an address or name: {host:?}",
                    url.scheme()
                ));
            }
        }
    };
    if let Some(refusal) = literal_refusal(config, web.as_str()) {
        return Some(refusal);
    }
    if config.allow_private_network {
        return None;
    }
    let host = web.host_str()?;
    if let Some(port) = web.port_or_known_default()
        && config.allowed_hosts.contains(&format!("{host}:{port}"))
    {
        return None;
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let local = toolgate_core::metadata_host::is_metadata_host(bare)
        || toolgate_core::local_host::local_host_of_word(&format!("http://{host}/")).is_some();
    local.then(|| {
        format!(
            "refusing to fetch {host}: a name not proved public (this machine's, a local network's or special-use such as .local, .internal, .test, a single label, or a cloud metadata service's); an upstream resolves names itself, so a name is judged by how it is spelled"
        )
    })
}

/// A string shaped as a path whatever key holds it: absolute, from the
/// home, relative with `./` or `..`, or naming a secret file by its last
/// component.
fn shaped_like_path(t: &str) -> bool {
    if t.is_empty() || t.contains('\n') {
        return false;
    }
    t.starts_with('/')
        || t == "~"
        || t.starts_with("~/")
        || (t.starts_with('~') && other_users_home(t).is_some())
        || t.starts_with("./")
        || t == ".."
        || t.starts_with("../")
        || (t.contains('/') && t.split('/').any(|c| c == ".."))
        // A secret file's name is a path under any key (`{"name": ".env"}`),
        // however long the text before it.
        || (!t.chars().any(char::is_whitespace)
            && toolgate_core::credential::names_credential_file(
                t.trim_end_matches('/').rsplit('/').next().unwrap_or(t),
            ))
}

/// A path by its shape (trimmed), or any one-line string under a key that
/// names a path.
fn looks_like_path(key: &str, s: &str) -> bool {
    if s.is_empty() {
        return false;
    }
    if shaped_like_path(s.trim()) {
        return true;
    }
    !s.contains('\n')
        && [
            "path",
            "file",
            "dir",
            "folder",
            "root",
            "source",
            "destination",
            "target",
            "cwd",
        ]
        .iter()
        .any(|k| key.contains(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_from_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        let args = json!({"path": "a.txt", "url": "https://example.com/x", "command": "ls",
                          "nested": {"files": ["/etc/passwd"]}, "note": "hello", "n": 3});
        let r = requests("fs__read", args.as_object().unwrap(), &location, false).unwrap();
        let got: Vec<(String, String)> = r
            .iter()
            .map(|r| (r.action.clone(), r.resource.clone()))
            .collect();
        assert_eq!(got[0], ("mcp".into(), "fs__read".into()));
        assert!(got.iter().any(|(a, r)| a == "bash" && r == "ls"));
        assert!(got.iter().any(|(a, _)| a == "webfetch"));
        assert!(got.iter().any(|(a, r)| a == "read" && r == "/etc/passwd"));
        assert!(got.iter().any(|(a, r)| a == "edit" && r.ends_with("a.txt")));
        assert!(!got.iter().any(|(_, r)| r.contains("hello")));
        let r = requests("fs__read", args.as_object().unwrap(), &location, true).unwrap();
        assert!(!r.iter().any(|r| r.action == "edit"));
    }

    /// SSRF through an upstream: a URL argument naming a cloud metadata,
    /// loopback or private address literally is refused before anyone is
    /// asked, with the built-in `webfetch`'s message (an approval must not
    /// be able to send an upstream there).
    #[test]
    fn a_metadata_address_in_upstream_arguments_is_refused_before_anyone_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        for url in [
            "http://169.254.169.254/latest/meta-data/",
            "https://127.0.0.1:8080/admin",
            "http://[::ffff:10.0.0.1]/",
        ] {
            let args = json!({"name": "x.gz", "nested": {"data": url}});
            let err =
                requests("ev__gzip", args.as_object().unwrap(), &location, false).expect_err(url);
            assert!(
                err.to_string().contains("refusing to fetch"),
                "{url}: {err}"
            );
        }
        let public = json!({"data": "https://example.com/x"});
        let r = requests("ev__gzip", public.as_object().unwrap(), &location, false).unwrap();
        assert!(r.iter().any(|r| r.action == "webfetch"));
    }

    /// A secret file named under a key that does not say "path" is still
    /// judged as a path (review s36: `{"name": ".env"}` was not).
    #[test]
    fn a_secret_file_named_under_any_key_is_judged_as_a_path() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        let args =
            json!({"name": ".env", "key": "deploy/id_rsa", "glob": "**/.npmrc", "q": "README"});
        let r = requests("fs__get", args.as_object().unwrap(), &location, true).unwrap();
        for secret in [".env", "deploy/id_rsa", "**/.npmrc"] {
            assert!(
                r.iter()
                    .any(|r| r.action == "read" && r.resource.ends_with(secret)),
                "{secret}: {r:?}"
            );
        }
        assert!(!r.iter().any(|r| r.resource.ends_with("README")));
    }

    /// Review s42: the literal private-address refusal applied to `http`
    /// and `https` URLs only: `gopher://127.0.0.1:6379/_…` (a classic way
    /// to drive Redis), `ftp://`, `ws://` to the metadata address went to
    /// the upstream with only the webfetch rule asked (allowed by `"*"`).
    /// A non-special scheme's host is opaque to the URL parser
    /// (`gopher://0x7f.1/` keeps `0x7f.1`), so it is read as a web host is.
    #[test]
    fn a_private_address_behind_any_scheme_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        for url in [
            "gopher://127.0.0.1:6379/_INFO",
            "gopher://0x7f.1:6379/_INFO",
            "ftp://127.0.0.1/x",
            "ws://169.254.169.254/latest/meta-data/",
            "wss://[::1]/",
            "redis://2130706433:6379/",
            "dict://10.0.0.1:11211/stats",
        ] {
            let args = json!({"data": url});
            let err =
                requests("ev__gzip", args.as_object().unwrap(), &location, false).expect_err(url);
            assert!(
                err.to_string().contains("refusing to fetch"),
                "{url}: {err}"
            );
        }
        let public = json!({"data": "gopher://example.com/1"});
        let r = requests("ev__gzip", public.as_object().unwrap(), &location, false).unwrap();
        assert!(r.iter().any(|r| r.action == "webfetch"));
    }

    /// Review s42: a string argument holding JSON (`{"options":
    /// "{\"path\": \"~/.ssh/id_rsa\"}"}`, as tools that take their options
    /// as JSON text read it) was judged as plain text: the path and URL in
    /// it were not.
    #[test]
    fn paths_and_urls_in_json_text_arguments_are_judged() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        let inner = json!({"path": "~/.ssh/id_rsa", "more": ["/etc/shadow"]}).to_string();
        let twice = json!({"wrapped": inner.clone()}).to_string();
        for text in [
            inner.clone(),
            format!("  {twice}\n"),
            json!("/root/.aws/credentials").to_string(),
        ] {
            let args = json!({"options": text});
            let r = requests("fs__x", args.as_object().unwrap(), &location, true).unwrap();
            let reads = reads(&r);
            assert!(
                reads
                    .iter()
                    .any(|p| p.ends_with(".ssh/id_rsa") || p == "/root/.aws/credentials"),
                "{text}: {reads:?}"
            );
        }
        let args = json!({"options": json!({"u": "http://169.254.169.254/"}).to_string()});
        let err = requests("fs__x", args.as_object().unwrap(), &location, true).unwrap_err();
        assert!(err.to_string().contains("refusing to fetch"), "{err}");
        // Text that merely starts like JSON is judged as text.
        let args = json!({"note": "{not json} /etc/passwd is mentioned"});
        let r = requests("fs__x", args.as_object().unwrap(), &location, true).unwrap();
        assert!(reads(&r).is_empty(), "{r:?}");
    }

    /// Review s42: a URL naming a local host by name (`localhost`, a
    /// `.local` or `.internal` name, a single-label name, a metadata
    /// service's name) reached the upstream, which resolves it itself: the
    /// literal refusal only knew addresses.
    #[test]
    fn a_local_or_metadata_host_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        for url in [
            "http://localhost:9/",
            "http://LOCALHOST./admin",
            "http://api.localhost/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://metadata/computeMetadata/v1/",
            "http://printer.local/",
            "http://redis:6379/",
            "gopher://localhost:6379/_INFO",
            "ws://instance-data/latest/",
        ] {
            let args = json!({"url": url});
            let err =
                requests("ev__get", args.as_object().unwrap(), &location, false).expect_err(url);
            assert!(
                err.to_string().contains("refusing to fetch"),
                "{url}: {err}"
            );
        }
        for public in [
            "https://example.com/x",
            "http://docs.rs/serde",
            "https://93.184.216.34/",
        ] {
            let args = json!({"url": public});
            let r = requests("ev__get", args.as_object().unwrap(), &location, false).expect(public);
            assert!(r.iter().any(|r| r.action == "webfetch"), "{public}");
        }
    }

    /// Review s42: a host given without a URL (`{"host": "127.0.0.1",
    /// "port": 18765}`) reached loopback: only URLs were judged.
    #[test]
    fn a_host_given_without_a_url_is_judged_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        for (key, host) in [
            ("host", "127.0.0.1"),
            ("dbHost", "localhost"),
            ("remote_host", "169.254.169.254:80"),
            ("server_ip", "10.0.0.7"),
            ("hostname", "0x7f.1"),
            ("ip_address", "[::1]"),
            ("host", "redis"),
        ] {
            let args = json!({key: host, "port": 6379});
            let err =
                requests("h__probe", args.as_object().unwrap(), &location, false).expect_err(host);
            assert!(
                err.to_string().contains("refusing to fetch"),
                "{key}={host}: {err}"
            );
        }
        // Review s43: under a key naming a URL or an address, or as an
        // endpoint (an address with a port) under any key.
        for (key, address) in [
            ("url", "127.0.0.1:6379/admin"),
            ("baseUrl", "localhost:8080"),
            ("endpoint", "169.254.169.254"),
            ("redis_addr", "10.0.0.7:6379"),
            ("server", "[::1]"),
            ("domain", "metadata.google.internal"),
            ("target", "127.0.0.1:2375"),
            ("peer", "[::ffff:10.0.0.1]:22"),
            ("peer", "127.1:22"),
            ("node", "0x7f.0.0.1:6379"),
            ("to", "localhost:5432/db"),
        ] {
            let args = json!({key: address});
            let err = requests("h__fetch", args.as_object().unwrap(), &location, false)
                .expect_err(address);
            assert!(
                err.to_string().contains("refusing to fetch"),
                "{key}={address}: {err}"
            );
        }
        // Not addresses: a bare word under a URL key, an e-mail address,
        // a path, a time; a dotted public name is judged (asked).
        let args = json!({"server": "github", "email_address": "me@example.com",
                          "url": "./docs/index.html", "time": "12:30", "note": "10.0.0.1",
                          "uri": "example.com/page"});
        let r = requests("h__fetch", args.as_object().unwrap(), &location, false).unwrap();
        let fetched: Vec<&str> = r
            .iter()
            .filter(|r| r.action == "webfetch")
            .map(|r| r.resource.as_str())
            .collect();
        assert_eq!(fetched, ["http://example.com/page"], "{r:?}");
        let args = json!({"host": "example.com", "ghost": "127.0.0.1", "note": "10.0.0.1"});
        let r = requests("h__probe", args.as_object().unwrap(), &location, false).unwrap();
        let fetched: Vec<&str> = r
            .iter()
            .filter(|r| r.action == "webfetch")
            .map(|r| r.resource.as_str())
            .collect();
        assert_eq!(fetched, ["http://example.com/"], "{r:?}");
    }

    /// Review s42: a command under a key other than the four exact names
    /// (`commandLine`, `shell_command`) was not judged at all, and an
    /// argument vector (`{"command": ["cat", "~/.ssh/id_rsa"]}`) was judged
    /// word by word as separate commands.
    #[test]
    fn a_command_under_any_command_key_or_as_an_argv_is_judged_as_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        let commands = |args: Value| -> Vec<String> {
            requests("sh__run", args.as_object().unwrap(), &location, false)
                .unwrap()
                .into_iter()
                .filter(|r| r.action == "bash")
                .map(|r| r.resource)
                .collect()
        };
        for key in [
            "commandLine",
            "shell_command",
            "run_cmd",
            "cmdline",
            "command",
        ] {
            assert_eq!(
                commands(json!({key: "cat ~/.ssh/id_rsa"})),
                ["cat ~/.ssh/id_rsa"],
                "{key}"
            );
        }
        assert_eq!(
            commands(json!({"command": ["sh", "-c", "cat ~/.ssh/id_rsa"]})),
            ["sh -c 'cat ~/.ssh/id_rsa'", "sh -c cat ~/.ssh/id_rsa"]
        );
        assert_eq!(commands(json!({"argv_command": ["ls", "-la"]})), ["ls -la"]);
        assert!(commands(json!({"commander": "x", "description": "run it"})).is_empty());
        // Review s43: a program and its arguments under sibling members,
        // and an argument vector under `argv`, are one command line.
        let split = commands(
            json!({"command": "find", "args": [".", "-exec", "sh", "-c", "cat ~/.ssh/id_rsa", ";"]}),
        );
        assert!(
            split.contains(&"find . -exec sh -c 'cat ~/.ssh/id_rsa' ';'".to_string()),
            "{split:?}"
        );
        assert_eq!(
            commands(json!({"argv": ["sh", "-c", "cat ~/.ssh/id_rsa"]})),
            ["sh -c 'cat ~/.ssh/id_rsa'", "sh -c cat ~/.ssh/id_rsa"]
        );
        assert!(
            commands(json!({"exec": "cat ~/.aws/credentials"}))
                .contains(&"cat ~/.aws/credentials".to_string())
        );
        // Arguments alone, or an object of them, are not a command.
        assert!(commands(json!({"args": ["-c", "x"], "arguments": {"a": 1}})).is_empty());
        // Each word is judged by its shape too.
        let r = requests(
            "sh__run",
            json!({"command": ["cat", "/etc/shadow"]})
                .as_object()
                .unwrap(),
            &location,
            false,
        )
        .unwrap();
        assert!(reads(&r).iter().any(|p| p == "/etc/shadow"), "{r:?}");
    }

    #[test]
    fn a_private_address_spelled_another_way_is_refused_too() {
        // The class: any spelling the URL parser reads as a private,
        // loopback or link-local address (IPv6 loopback, an IPv4 address
        // as one decimal or hex number, a short dotted form, a URL in an
        // array or behind a user part).
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        for url in [
            "http://[::1]:9000/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://user@169.254.169.254/",
        ] {
            let args = json!({"urls": ["https://example.com/", url]});
            let err =
                requests("ev__gzip", args.as_object().unwrap(), &location, false).expect_err(url);
            assert!(
                err.to_string().contains("refusing to fetch"),
                "{url}: {err}"
            );
        }
    }

    /// Review s43's follow-up, through a hook: a program under a member no
    /// list names (`program`, `exe`) beside its arguments, and a secret file
    /// named inside code, were not judged.
    #[test]
    fn a_program_under_any_member_and_a_secret_named_in_code_are_judged() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        let judged =
            |args: Value| requests("sh__run", args.as_object().unwrap(), &location, false).unwrap();
        let r = judged(json!({"program": "sh", "arguments": ["-c", "cat ~/.ssh/id_rsa"]}));
        assert!(
            r.iter()
                .any(|r| r.action == "bash" && r.resource == "sh -c 'cat ~/.ssh/id_rsa'"),
            "{r:?}"
        );
        // A member naming the command is the program; its siblings are not.
        let r = judged(json!({"command": "ls", "title": "x", "args": ["-la"]}));
        let lines: Vec<&str> = r
            .iter()
            .filter(|r| r.action == "bash")
            .map(|r| r.resource.as_str())
            .collect();
        assert_eq!(lines, ["ls -la", "ls"], "{r:?}");
        let r = judged(json!({"code": "print(open('/root/.ssh/id_rsa').read())"}));
        assert!(reads(&r).iter().any(|p| p == "/root/.ssh/id_rsa"), "{r:?}");
        // A path in prose that names no secret asks nothing.
        let r = judged(json!({"body": "see /usr/share/doc/x and ~/notes.txt for details"}));
        assert!(reads(&r).is_empty(), "{r:?}");
    }

    fn reads(r: &[PermissionRequest]) -> Vec<String> {
        r.iter()
            .filter(|r| r.action == "read")
            .map(|r| r.resource.clone())
            .collect()
    }

    /// A path padded past what the kernel opens (`./` or `/` repeated):
    /// Node's `path.resolve` folds it to the file, and `mcp-server-filesystem`
    /// read it, while the gate judged nothing longer than 4096 bytes.
    #[test]
    fn a_path_padded_past_4096_bytes_is_judged_by_its_folded_form() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let location = Location::new(&root).unwrap();
        let secret = root.join(".env").display().to_string();
        for padded in [
            format!("{}/{}.env", root.display(), "./".repeat(2100)),
            format!("{}{}/.env", "/".repeat(5000), root.display()),
            format!("{}/{}.env", root.display(), "y/../".repeat(1000)),
            format!("{}.env", "./".repeat(3000)),
        ] {
            let args = json!({"path": padded});
            let r = requests("fs__read", args.as_object().unwrap(), &location, true).unwrap();
            assert!(reads(&r).contains(&secret), "{:?}", reads(&r));
        }
    }

    /// A `file:` URL names a path: judged as that path (`read`, `edit`),
    /// not as a `webfetch` of a URL, which no rule for paths reached.
    #[test]
    fn a_file_url_is_judged_as_the_path_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let location = Location::new(&root).unwrap();
        let key = root.join(".ssh/id_rsa").display().to_string();
        let escaped = key.replace(".ssh", "%2Essh");
        for url in [
            format!("file://{key}"),
            format!("FILE://localhost{key}"),
            format!("file:{key}"),
            format!(" file://{escaped}"),
        ] {
            let args = json!({"uri": url});
            let r = requests("ls__open", args.as_object().unwrap(), &location, false).unwrap();
            assert!(reads(&r).contains(&key), "{url}: {r:?}");
            assert!(r.iter().any(|r| r.action == "edit" && r.resource == key));
            assert!(!r.iter().any(|r| r.action == "webfetch"), "{url}: {r:?}");
        }
        let args = json!({"uri": "file://fileserver/share/x"});
        let err = requests("ls__open", args.as_object().unwrap(), &location, true);
        assert!(err.is_err(), "{err:?}");
    }

    /// A path given as an object's key (`{"files": {"/etc/passwd": "r"}}`)
    /// was never looked at; ordinary keys are not paths.
    #[test]
    fn a_path_as_an_object_key_is_judged() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        let args = json!({"files": {"/etc/passwd": "r", "~/.ssh/id_rsa": {"mode": "r"}},
                          "/etc/shadow": 1, "file": {"name": "x", "content": "y"}});
        let r = requests("up__get", args.as_object().unwrap(), &location, false).unwrap();
        let got = reads(&r);
        for want in ["/etc/passwd", "/etc/shadow", "/.ssh/id_rsa"] {
            assert!(got.iter().any(|g| g.ends_with(want)), "{want}: {got:?}");
        }
        assert!(
            !got.iter()
                .any(|g| g.ends_with("/name") || g.ends_with("/content")),
            "{got:?}"
        );
    }

    /// A temporary directory (canonical) and the workspace `ws` made in it.
    fn workspace_below() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("ws");
        std::fs::create_dir_all(&root).unwrap();
        (dir, base, root)
    }

    /// A workspace link `l -> a/b/c`: `ws/l/../../x` is `ws/a/x` to the
    /// kernel but `ws/../x` once folded by names, as Node's `path.resolve`
    /// folds it before opening. Both places are judged.
    #[test]
    fn a_path_through_a_link_and_dot_dot_is_judged_both_ways() {
        let (_dir, base, root) = workspace_below();
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::os::unix::fs::symlink("a/b/c", root.join("l")).unwrap();
        let location = Location::new(&root).unwrap();
        let path = format!("{}/l/../../.bashrc", root.display());
        let args = json!({"path": path});
        let r = requests("fs__write", args.as_object().unwrap(), &location, false).unwrap();
        let edits: Vec<&str> = r
            .iter()
            .filter(|r| r.action == "edit")
            .map(|r| r.resource.as_str())
            .collect();
        let folded = base.join(".bashrc").display().to_string();
        assert!(edits.contains(&folded.as_str()), "{edits:?}");
        assert!(
            edits.iter().any(|e| e.ends_with("ws/a/.bashrc")),
            "{edits:?}"
        );
    }

    /// White space around a path (`" /etc/passwd"`, `"~/.bashrc\n"`): an
    /// upstream that trims it opens the path; it is judged trimmed too.
    /// A `..` anywhere makes a string a path under any key.
    #[test]
    fn a_padded_or_climbing_path_under_any_key_is_judged() {
        let (_dir, base, root) = workspace_below();
        let location = Location::new(&root).unwrap();
        let args = json!({"path": " /etc/passwd", "note": "/etc/hosts\n",
                          "name": "docs/../../outside.txt", "q": "see ../x for more"});
        let r = requests("up__get", args.as_object().unwrap(), &location, true).unwrap();
        let got = reads(&r);
        assert!(got.contains(&"/etc/passwd".to_string()), "{got:?}");
        assert!(got.contains(&"/etc/hosts".to_string()), "{got:?}");
        let outside = base.join("outside.txt").display().to_string();
        assert!(got.contains(&outside), "{got:?}");
        assert!(!got.iter().any(|g| g.contains("see ")), "{got:?}");
    }

    /// A loopback or metadata URL spelled as a WHATWG parser reads it
    /// (`http:/h`, `http:\\h`, `http:h`, a tab inside the scheme): Node's
    /// `fetch` fetched it from a local service through an upstream, while
    /// only strings starting `http://` were judged as URLs at all.
    #[test]
    fn a_url_spelled_as_the_whatwg_parser_reads_it_is_judged_as_a_url() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        for url in [
            "http:/127.0.0.1:8080/admin",
            "http:\\\\169.254.169.254/latest/meta-data/",
            "http:169.254.169.254/latest/",
            "HTTP:/[::1]/",
            "ht\ttp://127.0.0.1/",
            "https:/10.0.0.1/",
        ] {
            let args = json!({"url": url});
            let err =
                requests("f__fetch", args.as_object().unwrap(), &location, true).expect_err(url);
            assert!(
                err.to_string().contains("refusing to fetch"),
                "{url}: {err}"
            );
        }
        for (url, judged) in [
            ("https:/example.com/x", "https://example.com/x"),
            ("gopher://example.com/1", "gopher://example.com/1"),
        ] {
            let args = json!({"target": url});
            let r = requests("f__fetch", args.as_object().unwrap(), &location, true).unwrap();
            assert!(
                r.iter()
                    .any(|r| r.action == "webfetch" && r.resource == judged),
                "{url}: {r:?}"
            );
        }
        // Text with a colon is no URL.
        let args = json!({"note": "key: value", "time": "12:30", "drive": "C:\\x"});
        let r = requests("f__fetch", args.as_object().unwrap(), &location, true).unwrap();
        assert!(!r.iter().any(|r| r.action == "webfetch"), "{r:?}");
    }

    /// Member names are judged, but only those shaped as a path or a URL
    /// count against the budget of strings: a map of 400 ordinary entries
    /// is judged as before keys were looked at.
    #[test]
    fn ordinary_member_names_do_not_use_up_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        let map: Map<String, Value> = (0..400)
            .map(|i| (format!("name{i}"), json!(format!("value {i}"))))
            .collect();
        let args = json!({ "entries": map });
        requests("up__put", args.as_object().unwrap(), &location, true).unwrap();
    }

    /// `~root/.bashrc`: Python's `expanduser` (the test fixture's
    /// `read_text` uses it) opens `/root/.bashrc`; the gate judged
    /// `ROOT/~root/.bashrc`, inside the location.
    #[test]
    fn another_users_home_is_judged_as_expanduser_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        let args = json!({"name": "~root/.bashrc"});
        let r = requests("fx__read_text", args.as_object().unwrap(), &location, false).unwrap();
        assert!(
            r.iter()
                .any(|r| r.action == "edit" && r.resource == "/root/.bashrc"),
            "{r:?}"
        );
        assert_eq!(other_users_home("~no-such-user-s41/x"), None);
        assert_eq!(other_users_home("~/x"), None);
        assert_eq!(other_users_home("x~root"), None);
        // Text that only starts with `~` is no path.
        let args = json!({"note": "~50ms", "q": "~no-such-user-s41/x"});
        let r = requests("fx__read_text", args.as_object().unwrap(), &location, false).unwrap();
        assert_eq!(r.len(), 1, "{r:?}");
    }
}
