#!/usr/bin/env bash
# The friction benchmark: how often toolgate asks during routine work.
#
# Creates fixture repositories (a Rust crate, a Node app, a Python package, a
# Go module, a Makefile project, a git feature branch, a documentation edit,
# a container image build), then has `toolgate check --batch` judge each
# workflow's tool calls — the JSON a coding agent sends — in mode `auto` and
# in mode `default`, and prints the asks (and denies) per workflow.
#
# It judges; it runs nothing. Usage:
#   scripts/friction-bench.sh [PATH-TO-toolgate]     (default: builds target/release/toolgate)
#   FRICTION_VERBOSE=1 scripts/friction-bench.sh      (also lists every ask)
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLGATE="${1:-}"
if [ -z "$TOOLGATE" ]; then
    cargo build --release -q -p toolgate
    TOOLGATE="${CARGO_TARGET_DIR:-target}/release/toolgate"
fi
command -v jq >/dev/null || { echo "friction-bench: needs jq (apt-get install jq)" >&2; exit 2; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
WORK="$(cd "$WORK" && pwd -P)"
export HOME="$WORK/home" TOOLGATE_DATA_DIR="$WORK/data"
export TOOLGATE_MANAGED_CONFIG="$WORK/no-managed.toml"
unset XDG_CONFIG_HOME XDG_DATA_HOME
mkdir -p "$HOME/.config/toolgate"
# A new user's config: the package registries they use, nothing else.
cat >"$HOME/.config/toolgate/config.toml" <<'EOF'
[sandbox]
allow_domains = ["registry.npmjs.org", "pypi.org", "files.pythonhosted.org",
                 "proxy.golang.org", "sum.golang.org", "crates.io", "*.crates.io"]
EOF

git_init() { git -C "$1" init -q -b main && git -C "$1" -c user.email=b@x -c user.name=b add -A \
    && git -C "$1" -c user.email=b@x -c user.name=b commit -qm init; }

fixture() { mkdir -p "$WORK/$1"; cd "$WORK/$1"; }

# --- fixtures -------------------------------------------------------------
fixture rust; mkdir -p src
printf '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n' >Cargo.toml
printf 'pub fn add(a: u32, b: u32) -> u32 { a + b }\n' >src/lib.rs; git_init .
fixture node; mkdir -p src
printf '{"name":"app","version":"1.0.0","scripts":{"test":"node test.js","build":"node build.js","lint":"node lint.js"}}\n' >package.json
printf 'console.log("hi")\n' >index.js; git_init .
fixture python; mkdir -p pkg tests
printf '[project]\nname = "pkg"\nversion = "0.1.0"\n' >pyproject.toml
printf '__version__ = "0.1.0"\n' >pkg/__init__.py
printf 'def test_one():\n    assert 1\n' >tests/test_x.py; git_init .
fixture go
printf 'module example.com/demo\n\ngo 1.21\n' >go.mod
printf 'package main\n\nfunc main() {}\n' >main.go; git_init .
fixture make
printf 'all:\n\tcc -o demo demo.c\ntest: all\n\t./demo\nclean:\n\trm -f demo\n' >Makefile
printf 'int main(void){return 0;}\n' >demo.c; git_init .
fixture gitflow; printf 'a\n' >notes.txt; git_init .
git remote add origin https://example.com/team/gitflow.git
fixture docs; mkdir -p docs; printf '# Demo\nTODO: foo\n' >README.md; printf 'old\n' >docs/old.md; git_init .
fixture container
printf 'FROM debian:stable-slim\nCOPY . /app\n' >Dockerfile; git_init .
cd "$WORK"

# --- workflows: one JSON tool call per line -------------------------------
b() { jq -cn --arg c "$1" '{tool:"bash",input:{command:$c}}'; }
r() { jq -cn --arg p "$1" '{tool:"read",input:{path:$p}}'; }
w() { jq -cn --arg p "$1" '{tool:"write",input:{path:$p,content:"x\n"}}'; }
e() { jq -cn --arg p "$1" --arg o "$2" '{tool:"edit",input:{path:$p,old_string:$o,new_string:"changed"}}'; }
g() { jq -cn --arg p "$1" '{tool:"grep",input:{pattern:$p}}'; }
gl() { jq -cn --arg p "$1" '{tool:"glob",input:{pattern:$p}}'; }

wf_rust() { r Cargo.toml; g "fn "; e src/lib.rs "a + b"; b "cargo build"; b "cargo test";
    b "cargo clippy --all-targets"; b "cargo fmt"; b "cargo doc --no-deps"; b "git diff"; }
wf_node() { r package.json; w src/util.js; e index.js "hi"; b "npm install"; b "npm test";
    b "npm run build"; b "node index.js"; b "npm run lint"; }
wf_python() { r pyproject.toml; w tests/test_more.py; b "python3 -m venv .venv";
    b ".venv/bin/pip install -e ."; b "python3 -m pytest -q"; b "python3 -m pytest tests/test_x.py -k one";
    b "python3 -m compileall -q pkg"; b "python3 -c 'import pkg; print(pkg.__version__)'"; }
wf_go() { r go.mod; e main.go "func main() {}"; b "gofmt -w main.go"; b "go build ./...";
    b "go vet ./..."; b "go test ./..."; b "go run ."; b "go mod tidy"; }
wf_make() { r Makefile; b "make"; b "make test"; b "make -j2 all"; e Makefile "cc -o";
    b "make clean"; b "make all test"; }
wf_gitflow() { b "git status"; b "git checkout -b feature"; e notes.txt "a"; b "git add -A";
    b "git commit -m feature"; b "git log --oneline -5"; b "git rebase main"; b "git stash";
    b "git stash pop"; b "git push -u origin feature"; }
wf_docs() { gl "**/*.md"; g TODO; r README.md; e README.md "TODO: foo"; w docs/new.md;
    b "mkdir -p docs/img"; b "mv docs/old.md docs/archive.md"; b "sed -i 's/foo/bar/' README.md";
    b "git diff --stat"; }
wf_container() { r Dockerfile; e Dockerfile "COPY . /app"; w .dockerignore;
    b "curl -fsSLO https://downloads.example.dev/tool.tar.gz"; b "tar -xzf tool.tar.gz";
    b "docker build -t demo ."; b "docker image ls"; }

WORKFLOWS="rust node python go make gitflow docs container"
declare -A ASKS
total_steps=0
for wf in $WORKFLOWS; do
    "wf_$wf" | jq -c --arg root "$WORK/$wf" '. + {root:$root} | .input.path |= (if . == null then null elif startswith("/") then . else $root + "/" + . end) | if .input.path == null then del(.input.path) else . end' >"$WORK/$wf.jsonl"
    total_steps=$((total_steps + $(wc -l <"$WORK/$wf.jsonl")))
done

printf '%-10s %5s  %-14s %-14s\n' workflow steps "auto ask/deny" "default ask/deny"
ta=0; td=0; tad=0; tdd=0
for wf in $WORKFLOWS; do
    steps=$(wc -l <"$WORK/$wf.jsonl")
    for mode in auto default; do
        "$TOOLGATE" check --batch "$WORK/$wf.jsonl" --root "$WORK/$wf" --mode "$mode" >"$WORK/$wf.$mode.out"
        if grep -q '"error"' "$WORK/$wf.$mode.out"; then
            echo "friction-bench: a step of $wf could not be judged:" >&2; grep '"error"' "$WORK/$wf.$mode.out" >&2; exit 1
        fi
    done
    aa=$(jq -s 'map(select(.decision=="ask"))|length' "$WORK/$wf.auto.out")
    ad=$(jq -s 'map(select(.decision=="deny"))|length' "$WORK/$wf.auto.out")
    da=$(jq -s 'map(select(.decision=="ask"))|length' "$WORK/$wf.default.out")
    dd=$(jq -s 'map(select(.decision=="deny"))|length' "$WORK/$wf.default.out")
    printf '%-10s %5d  %6s         %6s\n' "$wf" "$steps" "$aa/$ad" "$da/$dd"
    ta=$((ta + aa)); tad=$((tad + ad)); td=$((td + da)); tdd=$((tdd + dd))
    if [ -n "${FRICTION_VERBOSE:-}" ]; then
        n=0
        while IFS= read -r out; do
            n=$((n + 1))
            if [ "$(jq -r .decision <<<"$out")" != allow ]; then
                step=$(sed -n "${n}p" "$WORK/$wf.jsonl" | jq -c .input)
                echo "    auto $(jq -r .decision <<<"$out"): $step — $(jq -r .reason <<<"$out" | cut -c1-160)"
            fi
        done <"$WORK/$wf.auto.out"
    fi
done
printf '%-10s %5d  %6s         %6s\n' total "$total_steps" "$ta/$tad" "$td/$tdd"
echo "sandbox: $("$TOOLGATE" sandbox status --json | jq -r 'if .available then "available (" + .mechanism + ")" else "NOT available: auto = default" end')"
