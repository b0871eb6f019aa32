//! Step 2 of the decision tree: from the base requests a tool emits to the
//! requests the gate judges.
//!
//! What happens to a request follows its [`ResourceKind`], whichever tool
//! asked. A command is split by the shell analyser into one request per
//! sub-command, redirect, credential path and external directory. A path is
//! raised to `credential` for secrets and, outside the location, one level up
//! with an added `external_directory` request. A URL that embeds credentials is
//! `credential`. Destructive and opaque requests lose their save pattern: no
//! approval for them is ever saved or reused.

use std::path::{Path, PathBuf};

use toolgate_core::{Location, PermissionRequest, ResourceKind, Risk};

use toolgate_core::credential::CredentialKind;

use crate::classify::credential_of;
use crate::shell::{self, ShellContext};

/// A request ready to be judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expanded {
    /// The request, risk raised.
    pub request: PermissionRequest,
    /// The shell analyser could not see what it does (invariant 4).
    pub opaque: bool,
    /// Why the risk is what it is, when raised (`credential path`, `outside the
    /// location`, the analyser's reason).
    pub reason: Option<String>,
}

/// Expands and raises the base requests of one call, within the decision's
/// CPU budget (the shell analyser's, 50 ms in a release build): once it is
/// spent, each request left is judged as one that could not be analysed —
/// at least `ask`, never saved — with the reason
/// [`crate::shell::TOO_COMPLEX`]. Whatever a tool's intent gives (20,000
/// file sections of a patch), the gate answers in bounded time.
///
/// Shell commands are judged as run with the environment toolgate itself
/// inherited (as `check` and the hooks of other agents see them); see
/// [`expand_with`].
pub fn expand(requests: Vec<PermissionRequest>, location: &Location, home: &Path) -> Vec<Expanded> {
    expand_with(requests, location, home, crate::shell::BUDGET, true)
}

/// [`expand`] with a budget of `budget`, and shell commands judged as run
/// with toolgate's inherited environment (`inherited_env`: `check`, hooks,
/// an unconfined run) or with only the sandbox's allowlisted variables
/// (toolgate's own bash tool, confined): see
/// [`crate::shell::ShellContext::inherited_env`].
pub fn expand_with(
    requests: Vec<PermissionRequest>,
    location: &Location,
    home: &Path,
    budget: std::time::Duration,
    inherited_env: bool,
) -> Vec<Expanded> {
    let deadline = std::time::Instant::now() + budget;
    let mut out: Vec<Expanded> = Vec::with_capacity(requests.len() + 2);
    for request in requests {
        if std::time::Instant::now() > deadline {
            push(&mut out, out_of_budget(request));
            continue;
        }
        match request.kind {
            ResourceKind::Command => {
                expand_command(request, location, home, inherited_env, &mut out)
            }
            ResourceKind::Url => out.push(raise_url(request)),
            ResourceKind::Path => raise_path(request, None, false, location, home, &mut out),
            ResourceKind::Other => push(&mut out, plain(request)),
        }
    }
    for e in &mut out {
        if e.opaque || e.request.risk == Risk::Destructive {
            e.request.save_pattern = None;
        }
    }
    out
}

/// A request judged after the budget was spent: opaque, so at least `ask`.
fn out_of_budget(mut request: PermissionRequest) -> Expanded {
    request.save_pattern = None;
    Expanded {
        request,
        opaque: true,
        reason: Some(format!(
            "{}: the call's requests took longer than the decision budget to judge",
            crate::shell::TOO_COMPLEX
        )),
    }
}

fn plain(request: PermissionRequest) -> Expanded {
    Expanded {
        request,
        opaque: false,
        reason: None,
    }
}

/// Adds `e`, merging it into an identical (action, resource) request already there
/// (keeping the higher risk, and opaque if either is).
fn push(out: &mut Vec<Expanded>, e: Expanded) {
    if let Some(prev) = out
        .iter_mut()
        .find(|p| p.request.action == e.request.action && p.request.resource == e.request.resource)
    {
        if e.request.risk > prev.request.risk {
            prev.request.risk = e.request.risk;
            prev.reason = e.reason.or(prev.reason.take());
        }
        prev.opaque |= e.opaque;
        if prev.request.save_pattern != e.request.save_pattern {
            // Two parts with different save patterns: saving either would be broader
            // than one of them, so save neither.
            prev.request.save_pattern = None;
        }
        return;
    }
    out.push(e);
}

fn expand_command(
    request: PermissionRequest,
    location: &Location,
    home: &Path,
    inherited_env: bool,
    out: &mut Vec<Expanded>,
) {
    let cwd = request
        .cwd
        .as_deref()
        .map_or_else(|| location.root().to_path_buf(), PathBuf::from);
    let ctx = ShellContext {
        location,
        cwd: cwd.clone(),
        home: home.to_path_buf(),
        inherited_env,
    };
    if !location.contains(&cwd) {
        // Everything the command touches by relative path is outside.
        let dir = cwd.display().to_string();
        push(
            out,
            Expanded {
                request: PermissionRequest::path(
                    "external_directory",
                    dir.clone(),
                    request.risk.raised(),
                )
                .with_save_pattern(Some(format!("{}/**", dir.trim_end_matches('/')))),
                opaque: false,
                reason: Some(format!("the command runs in {dir}, outside the location")),
            },
        );
    }
    let parts = shell::analyze(&request.resource, &ctx);
    if parts.is_empty() {
        // Nothing to analyse (an empty command, a comment): judge it as given.
        push(out, plain(request));
        return;
    }
    for part in parts {
        let mut r = part.request;
        if r.cwd.is_none() && r.kind == ResourceKind::Command {
            r.cwd = Some(cwd.display().to_string());
        }
        let reason = (!part.reason.is_empty()).then_some(part.reason);
        // The analyser already raised its path requests (credential, outside the
        // location, symlinks leading out) and added `external_directory`.
        push(
            out,
            Expanded {
                request: r,
                opaque: part.opaque,
                reason,
            },
        );
    }
}

/// Credential paths become `credential`; paths outside the location are raised one
/// level and add an `external_directory` request for their directory.
fn raise_path(
    mut request: PermissionRequest,
    mut reason: Option<String>,
    opaque: bool,
    location: &Location,
    home: &Path,
    out: &mut Vec<Expanded>,
) {
    let path = PathBuf::from(&request.resource);
    let roots: Vec<&Path> = location.roots().collect();
    if let Some(kind) = credential_of(&path, home, &roots) {
        let risk = Risk::Credential;
        // A tool may already say `credential` (the file tools do): the reason
        // is given all the same.
        if risk > request.risk || (risk == request.risk && reason.is_none()) {
            request.risk = risk;
            reason = Some(match kind {
                CredentialKind::HardLink(_) => {
                    format!("{} is a {} path: {kind}", request.resource, risk)
                }
                _ => format!("{} is a {} path", request.resource, risk),
            });
        }
    }
    let mut external = None;
    if path.is_absolute() && !location.contains(&path) {
        request.risk = request.risk.raised();
        reason.get_or_insert_with(|| format!("{} is outside the location", request.resource));
        let dir = if path.is_dir() {
            path.clone()
        } else {
            path.parent()
                .map_or_else(|| path.clone(), Path::to_path_buf)
        };
        let dir_text = dir.display().to_string();
        let pattern = if dir_text == "/" {
            "/**".to_string()
        } else {
            format!("{dir_text}/**")
        };
        external = Some(Expanded {
            request: PermissionRequest::path("external_directory", dir_text.clone(), request.risk)
                .with_save_pattern(Some(pattern)),
            opaque: false,
            reason: Some(format!("{dir_text} is outside the location")),
        });
    }
    push(
        out,
        Expanded {
            request,
            opaque,
            reason,
        },
    );
    if let Some(e) = external {
        push(out, e);
    }
}

/// Query parameters whose value is a secret.
const SECRET_PARAMS: &[&str] = &[
    "access_token",
    "api_key",
    "apikey",
    "auth",
    "client_secret",
    "key",
    "password",
    "passwd",
    "private_token",
    "secret",
    "sig",
    "signature",
    "token",
];

/// Whether a URL carries credentials: `user:pass@` in the authority, or a query
/// parameter that is a secret.
pub fn url_has_credentials(url: &str) -> bool {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority_end = after_scheme
        .find(['/', '?', '#'])
        .unwrap_or(after_scheme.len());
    if after_scheme[..authority_end].contains('@') {
        return true;
    }
    let Some((_, query)) = after_scheme.split_once('?') else {
        return false;
    };
    let query = query.split('#').next().unwrap_or_default();
    query.split('&').any(|pair| {
        let name = pair
            .split('=')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        SECRET_PARAMS.contains(&name.as_str())
    })
}

fn raise_url(mut request: PermissionRequest) -> Expanded {
    let mut reason = None;
    if url_has_credentials(&request.resource) && request.risk < Risk::Credential {
        request.risk = Risk::Credential;
        reason = Some("the URL embeds credentials".to_string());
    }
    Expanded {
        request,
        opaque: false,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_with_credentials() {
        assert!(url_has_credentials("https://user:pw@example.com/x"));
        assert!(url_has_credentials("https://tok@example.com"));
        assert!(url_has_credentials(
            "https://example.com/a?x=1&access_token=abc"
        ));
        assert!(url_has_credentials("https://example.com/?API_KEY=abc#frag"));
        assert!(!url_has_credentials("https://example.com/a@b"));
        assert!(!url_has_credentials("https://example.com/?q=token"));
        assert!(!url_has_credentials("https://docs.rs/regex"));
    }
}
