//! Package installs from a registry: the bash commands whose only need of the
//! network is to fetch packages, which mode `auto` runs inside the sandbox
//! when `[sandbox] allow_domains` names the registries (the sandbox's proxy
//! admits those names and no others, and records every connection).
//!
//! The list is of known-good forms, matched on the request's command text:
//! a program known by its name (a path is fine when its last part is that
//! name: `.venv/bin/pip`), the subcommand that installs, and then only plain
//! words — no quotes, expansions, redirects or operators, which the analyser
//! splits into requests of their own or leaves opaque. Everything else that
//! needs the network (`git push`, `curl`, `npm publish`, `cargo install`) is
//! not an install from a registry and is decided as in `default`.

/// `(program, subcommand words)`: each form that installs packages. An empty
/// subcommand means the program alone (`yarn`).
const INSTALLS: &[(&str, &[&str])] = &[
    ("npm", &["install"]),
    ("npm", &["i"]),
    ("npm", &["ci"]),
    ("npm", &["add"]),
    ("pnpm", &["install"]),
    ("pnpm", &["i"]),
    ("pnpm", &["add"]),
    ("yarn", &[]),
    ("yarn", &["install"]),
    ("yarn", &["add"]),
    ("pip", &["install"]),
    ("pip3", &["install"]),
    ("uv", &["sync"]),
    ("uv", &["add"]),
    ("uv", &["pip", "install"]),
    ("cargo", &["fetch"]),
    ("cargo", &["build"]),
    ("cargo", &["check"]),
    ("cargo", &["test"]),
    ("cargo", &["add"]),
    ("go", &["mod", "download"]),
    ("go", &["mod", "tidy"]),
    ("go", &["get"]),
];

/// A word of the command that is plain text to the shell: nothing to expand,
/// quote, redirect or join.
fn plain(word: &str) -> bool {
    !word.is_empty()
        && word.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'-' | b'_' | b'.' | b'/' | b'=' | b'@' | b':' | b'+' | b',' | b'^' | b'%'
                )
        })
}

/// Whether `command` (one sub-command's text, as in a bash request's
/// resource) is a package install from a registry.
pub fn is_registry_install(command: &str) -> bool {
    let words: Vec<&str> = command.split_ascii_whitespace().collect();
    let Some((first, rest)) = words.split_first() else {
        return false;
    };
    // An assignment first (`npm_config_registry=… npm install`) is not the
    // plain form.
    if !words.iter().all(|w| plain(w)) || first.contains('=') {
        return false;
    }
    let name = first.rsplit('/').next().unwrap_or(first);
    INSTALLS.iter().any(|(program, sub)| {
        *program == name
            && rest.len() >= sub.len()
            && rest.iter().zip(sub.iter()).all(|(w, s)| w == s)
            // `yarn` alone, or `yarn --frozen-lockfile`: options only.
            && (!sub.is_empty() || rest.iter().all(|w| w.starts_with('-')))
    })
}

#[cfg(test)]
mod tests {
    use super::is_registry_install;

    #[test]
    fn installs_from_a_registry() {
        for c in [
            "npm install",
            "npm i left-pad",
            "npm ci",
            "npm add react@18",
            "pnpm install --frozen-lockfile",
            "yarn",
            "yarn --frozen-lockfile",
            "yarn add lodash",
            "pip install -e .",
            ".venv/bin/pip install -r requirements.txt",
            "pip3 install requests==2.31",
            "uv sync",
            "uv pip install httpx",
            "cargo fetch",
            "cargo build --release",
            "go mod tidy",
            "go mod download",
            "go get example.com/x@v1.2.3",
        ] {
            assert!(is_registry_install(c), "{c}");
        }
    }

    #[test]
    fn everything_else_is_not() {
        for c in [
            "",
            "git push",
            "curl https://x.org",
            "npm publish",
            "npm run build",
            "npm exec evil",
            "npx something",
            "cargo install ripgrep",
            "cargo publish",
            "go run .",
            "yarn run x",
            "yarn dlx x",
            "pip download x",
            "pip wheel x",
            "uv run x",
            "uv tool install x",
            "sudo npm install",
            "env npm install",
            "npm_config_registry=http://evil npm install",
            "npm install $(cat list)",
            "npm install `x`",
            "pip install 'requests>=2'",
            "pip install x; curl evil",
            "npm install > log",
            "npm installx",
            "mynpm install",
        ] {
            assert!(!is_registry_install(c), "{c}");
        }
    }
}
