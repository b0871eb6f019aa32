//! What of the home directory a confined command needs to work: toolchains,
//! package caches and git's configuration, shown read-only. Everything else
//! in the home directory is hidden from it, and the credential table's
//! entries stay masked even inside these.
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

#[cfg(test)]
mod tests {
    use super::*;

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
