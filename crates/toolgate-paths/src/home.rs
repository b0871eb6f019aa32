//! What of the home directory a confined command needs to work: toolchains,
//! package caches and git's configuration, shown read-only. Everything else
//! in the home directory is hidden from it, and the credential table's
//! entries stay masked even inside these, at any depth but in the trees of
//! installed packages ([`PACKAGE_TREES`]).
//!
//! The list is of places, not of secrets: a place is here because common
//! build and test commands read it (a compiler's toolchain, a package
//! manager's download cache, a version manager's shims). A person adds more
//! with `[sandbox] readable = [...]`.
//!
//! ```
//! use toolgate_paths::home::{HOME_READABLE, readable_in};
//! use std::path::Path;
//! assert!(HOME_READABLE.iter().any(|(p, _)| *p == ".cargo"));
//! let places = readable_in(Path::new("/home/u"));
//! assert!(places.contains(&Path::new("/home/u/.rustup").to_path_buf()));
//! ```

use std::path::{Path, PathBuf};

/// Places under the home directory shown read-only inside the sandbox, with
/// what reads them.
pub const HOME_READABLE: &[(&str, &str)] = &[
    (".cargo", "Rust: cargo's binaries, registry and git caches"),
    (".rustup", "Rust: the installed toolchains"),
    (".npm", "Node.js: npm's download cache"),
    (".nvm", "Node.js: nvm's installed versions"),
    (".volta", "Node.js: Volta's installed tools"),
    (".bun", "Bun: the runtime and its cache"),
    (".deno", "Deno: the runtime's cache"),
    (".yarn", "Node.js: Yarn's cache and releases"),
    (
        ".cache",
        "the XDG cache (pip, go-build, yarn, pnpm, bazel, ...)",
    ),
    (
        ".local/bin",
        "programs installed for this user (pipx, pip --user)",
    ),
    (".local/lib", "Python packages installed with pip --user"),
    (".local/share/pnpm", "Node.js: pnpm's store and binaries"),
    (".local/share/mise", "mise's installed tools"),
    (".pyenv", "Python: pyenv's installed versions"),
    (".rbenv", "Ruby: rbenv's installed versions"),
    (".gem", "Ruby: installed gems"),
    (".sdkman", "JVM: SDKMAN's installed SDKs"),
    (".m2/repository", "Maven's download cache"),
    (".gradle/caches", "Gradle's download cache"),
    (".gradle/wrapper", "Gradle's wrapper distributions"),
    ("go/pkg", "Go: the module cache"),
    ("go/bin", "Go: installed programs"),
    (".ghcup", "Haskell: GHCup's installed tools"),
    (".cabal", "Haskell: cabal's packages"),
    (".opam", "OCaml: opam's switches"),
    (".elan", "Lean: elan's toolchains"),
    (".dotnet", ".NET: the SDK and tools"),
    (".nuget/packages", ".NET: NuGet's package cache"),
    (".gitconfig", "git: the user's configuration"),
    (
        ".config/git",
        "git: the user's configuration and ignore file",
    ),
    (
        ".gitignore_global",
        "git: a common name of the user's global ignore file",
    ),
];

/// [`HOME_READABLE`]'s places under `home`.
pub fn readable_in(home: &Path) -> Vec<PathBuf> {
    HOME_READABLE.iter().map(|(p, _)| home.join(p)).collect()
}

/// The trees of installed packages inside the readable places:
/// `(parent, name, what)`, a directory called `name` inside one called
/// `parent` (`"*"`: inside any; a `name` ending in `*` is a prefix). Their
/// files are the packages' own, as the package manager unpacked them (a
/// Python's standard library ships test keys, a package its CA bundle
/// `cacert.pem`), never a file a person or a tool writes its secrets into:
/// the sandbox searches the readable places at every depth for credential
/// files but these trees. Names are compared exactly: a directory that only
/// looks like one (`Node_Modules`) is searched.
pub const PACKAGE_TREES: &[(&str, &str, &str)] = &[
    (
        "*",
        "node_modules",
        "Node.js packages (npm, Yarn, pnpm, Bun)",
    ),
    (
        "*",
        "site-packages",
        "Python packages (pip, pyenv's and pipx's Pythons)",
    ),
    ("*", "dist-packages", "Python packages (Debian's layout)"),
    (
        "lib",
        "python*",
        "a Python's standard library, `PREFIX/lib/pythonX.Y`",
    ),
    (
        "lib",
        "rustlib",
        "a Rust toolchain's libraries and sources, `PREFIX/lib/rustlib`",
    ),
    (
        "share",
        "doc",
        "installed documentation, `PREFIX/share/doc`",
    ),
    ("share", "man", "installed manual pages, `PREFIX/share/man`"),
    (
        ".cargo",
        "registry",
        "cargo's registry index, downloaded and unpacked crates",
    ),
    (
        ".cargo",
        "git",
        "cargo's clones and checkouts of git dependencies",
    ),
    (".npm", "_cacache", "npm's content-addressed download cache"),
    ("pkg", "mod", "Go's module cache, `~/go/pkg/mod`"),
    (".m2", "repository", "Maven's downloaded artifacts"),
    (
        ".gradle",
        "caches",
        "Gradle's downloaded and transformed artifacts",
    ),
    (".nuget", "packages", "NuGet's unpacked packages"),
    (
        "install",
        "cache",
        "Bun's cache of unpacked packages, `~/.bun/install/cache`",
    ),
    ("pip", "http", "pip's cache of downloads"),
    ("pip", "http-v2", "pip's cache of downloads"),
    ("pip", "wheels", "pip's cache of built wheels"),
    (".cache", "go-build", "Go's build cache"),
    (
        ".cache",
        "bazel",
        "Bazel's output and external repositories",
    ),
    ("pnpm", "store", "pnpm's content-addressed store"),
    ("deno", "npm", "Deno's unpacked npm packages"),
    ("deno", "remote", "Deno's downloaded modules"),
    (".dotnet", "sdk", "the .NET SDKs' files"),
    (".dotnet", "packs", "the .NET targeting packs"),
    (".dotnet", "shared", "the .NET runtimes"),
];

/// Whether a directory called `name` inside one called `parent` is the tree
/// of installed packages ([`PACKAGE_TREES`]).
pub fn is_package_tree(parent: &[u8], name: &[u8]) -> bool {
    PACKAGE_TREES.iter().any(|(p, n, _)| {
        let parent_ok = *p == "*" || parent == p.as_bytes();
        parent_ok
            && match n.strip_suffix('*') {
                Some(prefix) => name.len() > prefix.len() && name.starts_with(prefix.as_bytes()),
                None => name == n.as_bytes(),
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_trees_are_known_by_name_and_parent_exactly() {
        assert!(is_package_tree(b"lib", b"node_modules"));
        assert!(is_package_tree(b"anything", b"node_modules"));
        assert!(is_package_tree(b"lib", b"python3.12"));
        assert!(is_package_tree(b".cargo", b"registry"));
        assert!(!is_package_tree(b"lib", b"python"));
        assert!(!is_package_tree(b"src", b"python3.12"));
        assert!(!is_package_tree(b"lib", b"Node_Modules"));
        assert!(!is_package_tree(b"node", b"etc"));
        assert!(!is_package_tree(b"ws", b"registry"));
    }

    #[test]
    fn no_readable_place_is_a_credential_place() {
        let home = Path::new("/home/u");
        for p in readable_in(home) {
            assert!(
                crate::credential::is_credential(&p, home).is_none(),
                "{} is a credential place",
                p.display()
            );
        }
    }
}
