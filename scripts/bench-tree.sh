#!/usr/bin/env bash
# Builds the code trees the file-tool benchmarks search (crates/toolgate-tools/benches):
#   bench-data/large : `cargo vendor` of a pinned list of popular crates (>= 100 MB of code)
#   bench-data/small : the first 1,000 files of the large tree, in path order
# bench-data/ is gitignored; this script is the source of truth. Re-running it is cheap
# when the trees exist. Needs network access to crates.io only.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
data="$root/bench-data"
project="$data/project"
large="$data/large"
small="$data/small"

mkdir -p "$project/src"
cat > "$project/Cargo.toml" <<'TOML'
[package]
name = "bench-tree"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

# Popular crates, pinned so the tree is the same on every run.
[dependencies]
tokio = { version = "=1.54.1", features = ["full"] }
serde = { version = "=1.0.229", features = ["derive"] }
serde_json = "=1.0.154"
regex = "=1.13.2"
syn = { version = "=3.0.10", features = ["full"] }
clap = { version = "=4.6.9", features = ["derive"] }
reqwest = { version = "=0.13.5", features = ["json"] }
hyper = { version = "=1.12.0", features = ["full"] }
axum = "=0.8.9"
image = "=0.25.10"
rayon = "=1.12.0"
chrono = "=0.4.45"
tracing-subscriber = "=0.3.23"
rusqlite = { version = "=0.43.0", features = ["bundled"] }
gix = "=0.90.0"
wasmtime = "=48.0.8"
TOML
echo 'fn main() {}' > "$project/src/main.rs"

if [ ! -d "$large" ]; then
    echo "vendoring into $large (downloads from crates.io)…" >&2
    (cd "$project" && cargo vendor --versioned-dirs "$large" > /dev/null)
fi

if [ ! -d "$small" ]; then
    echo "copying 1,000 files into $small…" >&2
    mkdir -p "$small"
    (cd "$large" && find . -type f ! -name '.cargo-checksum.json' | LC_ALL=C sort | head -n 1000) |
        while read -r f; do
            mkdir -p "$small/$(dirname "$f")"
            cp "$large/$f" "$small/$f"
        done
fi

echo "large: $(du -sh "$large" | cut -f1), $(find "$large" -type f | wc -l) files" >&2
echo "small: $(du -sh "$small" | cut -f1), $(find "$small" -type f | wc -l) files" >&2
