#!/usr/bin/env bash
# Regenerates crates/toolgate/hook-text-order.ld: the functions a hook
# process runs, gathered in one place of `toolgate-hook`'s code so that
# starting it maps a few dozen pages of code instead of touching pages spread
# over the whole binary (README, "What a hook costs").
#
# Runs a release build of `toolgate-hook` under callgrind on a set of hook
# payloads (Claude Code's Bash, Read, Edit, Grep, WebFetch, an MCP tool, an
# outcome; Gemini's shell tool) in a scratch git repository, and writes
# every function that ran, in the order it first ran, as an input-section
# pattern of one output section placed before `.text`.
#
# Rust symbols end in a hash that differs between checkouts, toolchains and
# even between `cargo build` and `cargo bench` of the same tree (features
# unified with dev-dependencies change every crate's hash), so each function
# is matched by its name without the hash: every instance of a generic
# function that ran is gathered with it (about 2.4 MB of code in all, where
# the instances that ran are about 1 MB). A stale list is never wrong, only
# less effective: regenerate it after large changes to the hook's path.
#
# Needs valgrind and python3. Usage: scripts/hook-text-order.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=crates/toolgate/hook-text-order.ld

cargo build --profile release -p toolgate --bin toolgate-hook
hook=$root/target/release/toolgate-hook

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ws=$work/ws
mkdir -p "$ws/src" "$work/home"
printf 'fn main() {}\n' > "$ws/src/main.rs"
git -C "$ws" init -q

payloads=(
  "claude-code|{\"session_id\":\"s\",\"cwd\":\"$ws\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"git log --oneline --decorate -n 20 -- src/main.rs && git status --short && grep -rn main src | head\"},\"tool_use_id\":\"t1\"}"
  "claude-code|{\"session_id\":\"s\",\"cwd\":\"$ws\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\"$ws/src/main.rs\"},\"tool_use_id\":\"t2\"}"
  "claude-code|{\"session_id\":\"s\",\"cwd\":\"$ws\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"$ws/src/main.rs\",\"old_string\":\"main\",\"new_string\":\"start\"},\"tool_use_id\":\"t3\"}"
  "claude-code|{\"session_id\":\"s\",\"cwd\":\"$ws\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Grep\",\"tool_input\":{\"pattern\":\"main\",\"path\":\"$ws\"},\"tool_use_id\":\"t4\"}"
  "claude-code|{\"session_id\":\"s\",\"cwd\":\"$ws\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"cargo test 2>&1 | tail -5\"},\"tool_use_id\":\"t5\"}"
  "claude-code|{\"session_id\":\"s\",\"cwd\":\"$ws\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"WebFetch\",\"tool_input\":{\"url\":\"https://example.com/\",\"prompt\":\"x\"},\"tool_use_id\":\"t6\"}"
  "claude-code|{\"session_id\":\"s\",\"cwd\":\"$ws\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"mcp__fs__read_file\",\"tool_input\":{\"path\":\"$ws/src/main.rs\"},\"tool_use_id\":\"t7\"}"
  "claude-code|{\"session_id\":\"s\",\"cwd\":\"$ws\",\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"git status\"},\"tool_response\":{\"stdout\":\"\"},\"tool_use_id\":\"t1\"}"
  "gemini|{\"session_id\":\"s\",\"cwd\":\"$ws\",\"hook_event_name\":\"BeforeTool\",\"timestamp\":\"2026-12-05T00:00:00Z\",\"tool_name\":\"run_shell_command\",\"tool_input\":{\"command\":\"git status\"}}"
)
i=0
for entry in "${payloads[@]}"; do
  agent=${entry%%|*}
  payload=${entry#*|}
  i=$((i + 1))
  # Twice: the first run creates the audit log, the second is a usual one.
  for run in 1 2; do
    (cd "$ws" && printf '%s' "$payload" | env -u XDG_CONFIG_HOME -u XDG_DATA_HOME \
      HOME="$work/home" TOOLGATE_DATA_DIR="$work/data" \
      TOOLGATE_MANAGED_CONFIG="$work/home/none.toml" \
      valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$i.$run" \
      "$hook" "$agent" >/dev/null 2>&1) || true
  done
done

libc=$(cc -print-file-name=libc.a)
if [ -f "$libc" ]; then
  nm -A --defined-only "$libc" 2>/dev/null > "$work/libc-symbols" || true
else
  : > "$work/libc-symbols"
fi

python3 - "$work" "$out" <<'EOF'
import glob, re, sys

work, out = sys.argv[1], sys.argv[2]

# Functions that ran, in the order they first ran, over the payloads in turn.
order, seen = [], set()
for path in sorted(glob.glob(work + "/cg.*.2"), key=lambda p: int(p.split(".")[-2])):
    names = {}
    for line in open(path):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.strip())
        if not m:
            continue
        kind, ident, name = m.groups()
        if name:
            names[ident] = re.sub(r"'\d+$", "", name)
        if kind == "fn" and ident in names and names[ident] not in seen:
            seen.add(names[ident])
            order.append(names[ident])

def stem(name):
    m = re.match(r"^(_ZN.*)17h[0-9a-f]{16}E(\..*)?$", name)
    return m.group(1) if m else None

patterns, taken = [], set()
def take(pattern):
    if pattern not in taken:
        taken.add(pattern)
        patterns.append(pattern)

for name in order:
    s = stem(name)
    if s is not None:
        take(s + "17h*")
    elif re.match(r"^[A-Za-z_][A-Za-z0-9_.]*$", name):
        take(name)

# glibc's functions (static link): by the archive member that holds them,
# every CPU variant of a string function.
members = {}
for line in open(work + "/libc-symbols"):
    parts = line.split()
    if len(parts) == 3 and parts[1] in "TtWwi":
        members.setdefault(parts[2], parts[0].split(":")[1])
libc = []
for name in order:
    member = members.get(name)
    if member is None:
        continue
    m = re.match(r"^(.*?)-(avx2|evex|avx512|sse2|sse4|ssse3)", member)
    pattern = "*libc.a:%s-*.o(.text .text.*)" % m.group(1) if m else "*libc.a:%s(.text .text.*)" % member
    if pattern not in libc:
        libc.append(pattern)

with open(out, "w") as f:
    f.write("/* Generated by scripts/hook-text-order.sh: the functions a hook process\n")
    f.write("   runs, first, in the order they first run. See that script. */\n")
    f.write("SECTIONS\n{\n  .text.hook_hot : {\n")
    for p in patterns:
        f.write("    *(.text.%s .text.unlikely.%s)\n" % (p, p))
    for p in libc:
        f.write("    %s\n" % p)
    f.write("  }\n}\nINSERT BEFORE .text;\n")
print("%s: %d functions, %d glibc members" % (out, len(patterns), len(libc)))
EOF
