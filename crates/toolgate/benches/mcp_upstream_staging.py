#!/usr/bin/env python3
"""What staging an upstream's workspace writes adds to a write call through
the gateway. Written apart from the Rust code, like `mcp_gateway_client.py`.

Raw JSON-RPC over stdio to `toolgate mcp`, proxying one upstream: a small
MCP server on the system's Python whose `write` tool writes 4 KB to a file
of the workspace. Two configurations, alternated round by round, a fresh
toolgate (and upstream) per round:

- `direct`: the upstream unconfined (`sandbox = false`), writing the
  workspace itself;
- `staged`: the upstream in toolgate's sandbox (the default), its writes
  staged in an overlay and, after each call, judged, landed by copying and
  recorded as a change set (`toolgate undo`).

Three workloads: a call that writes nothing (what settling costs every
call of a confined upstream), the same file written again each call, and a
new file each call (the overlay's upper layer then grows by one file a
call, and each settling walks it). Each round makes WARMUP calls, then CALLS measured
calls. Measured: toolgate's CPU per call (`/proc/PID/stat`, every thread;
the settling runs in toolgate), the upstream's, and the client's p50 wall
time per call.

    cargo build --release -p toolgate
    python3 crates/toolgate/benches/mcp_upstream_staging.py target/release/toolgate
"""

import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_mcp import Server, cmdline, cpu_seconds  # noqa: E402

WARMUP = int(os.environ.get("BENCH_WARMUP", "20"))
CALLS = int(os.environ.get("BENCH_CALLS", "500"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))

UPSTREAM = r'''
import json, sys
BODY = ("0123456789abcdef" * 4)[:63] + "\n"
calls = 0
for line in sys.stdin:
    m = json.loads(line); i = m.get("id")
    if m.get("method") == "initialize":
        r = {"protocolVersion": m["params"].get("protocolVersion", "2025-06-18"),
             "capabilities": {"tools": {}}, "serverInfo": {"name": "w", "version": "1"}}
    elif m.get("method") == "tools/list":
        r = {"tools": [{"name": "write", "description": "writes 4 KB",
                        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]}
    elif i is None:
        continue
    elif m.get("method") == "tools/call":
        n = m["params"].get("arguments", {}).get("n", 0)
        calls += 1
        # New content every call, so that every call's write lands; none
        # for n < 0 (what settling costs a call that writes nothing).
        if n >= 0:
            with open(f"out-{n}.txt", "w") as f:
                f.write(BODY * 63 + f"{calls:063d}\n")
        r = {"content": [{"type": "text", "text": "written"}]}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": i, "result": r}) + "\n")
    sys.stdout.flush()
'''


def descendants(pid):
    """Every process below `pid`."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for tid in os.listdir(f"/proc/{p}/task"):
            try:
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    kids = [int(c) for c in f.read().split()]
            except FileNotFoundError:
                kids = []
            out.extend(kids)
            todo.extend(kids)
    return out


def run_round(toolgate, base, how, workload, index):
    root = os.path.join(base, f"ws-{how}-{workload}-{index}")
    os.makedirs(root)
    data = os.path.join(base, f"data-{how}-{workload}-{index}")
    script = os.path.join(base, "upstream", "server.py")
    config = os.path.join(base, f"gate-{how}.toml")
    with open(config, "w") as f:
        f.write(
            "[upstreams.w]\n"
            f'command = "python3"\nargs = [{json.dumps(script)}]\n'
            f"readable = [{json.dumps(os.path.dirname(script))}]\n"
            f"sandbox = {'true' if how == 'staged' else 'false'}\n"
            '[permission.mcp]\n"w__*" = "allow"\n'
        )
    env = dict(
        os.environ,
        TOOLGATE_DATA_DIR=data,
        TOOLGATE_MANAGED_CONFIG=os.path.join(data, "none.toml"),
    )
    argv = [toolgate, "mcp", "--root", root, "--no-web", "--mode", "accept-edits",
            "--config", config]
    server = Server(argv, env, client="staging-bench")
    try:
        upstream = next((p for p in descendants(server.proc.pid)
                         if cmdline(p).startswith("python3 ") and script in cmdline(p)), None)
        n = 0

        def one():
            nonlocal n
            n += 1
            arg = {"new file": n, "same file": 0, "no write": -1}[workload]
            server.call("w__write", {"n": arg})

        for _ in range(WARMUP):
            one()
        pids = [server.proc.pid] + ([upstream] if upstream else [])
        before = [cpu_seconds(p) for p in pids]
        walls = []
        for _ in range(CALLS):
            t0 = time.perf_counter_ns()
            one()
            walls.append((time.perf_counter_ns() - t0) / 1e3)
        after = [cpu_seconds(p) for p in pids]
    finally:
        server.close()
    expected = {"same file": 1, "new file": WARMUP + CALLS, "no write": 0}[workload]
    landed = len([n for n in os.listdir(root) if n.startswith("out-")])
    if landed != expected:
        sys.exit(f"{how}/{workload}: {landed} files in the workspace, expected {expected}")
    if workload != "no write":
        check_last(root, workload)
    per_call = [(a - b) / CALLS * 1e6 for a, b in zip(after, before)]
    return per_call[0], (per_call[1] if upstream else None), statistics.median(walls)


def check_last(root, workload):
    """The last write landed whole."""
    with open(os.path.join(root, "out-0.txt" if workload == "same file" else f"out-{WARMUP + CALLS}.txt")) as f:
        last = f.read().splitlines()[-1]
    if workload == "same file" and int(last) != WARMUP + CALLS:
        sys.exit(f"{workload}: the last write did not land ({last})")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: mcp_upstream_staging.py PATH/TO/toolgate")
    toolgate = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as base:
        os.makedirs(os.path.join(base, "upstream"))
        with open(os.path.join(base, "upstream", "server.py"), "w") as f:
            f.write(UPSTREAM)
        load = os.getloadavg()
        print(f"{WARMUP} warm-up then {CALLS} calls per round, {ROUNDS} rounds alternating; "
              f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        for workload in ("no write", "same file", "new file"):
            rows = {"direct": [], "staged": []}
            for i in range(ROUNDS):
                for how in ("direct", "staged"):
                    own, up, p50 = run_round(toolgate, base, how, workload, i)
                    rows[how].append((own, up, p50))
                    up_text = f"  upstream CPU {up:6.0f} µs" if up is not None else ""
                    print(f"  write 4 KB, {workload:<9} {how:<7} toolgate CPU {own:6.0f} µs"
                          f"{up_text}  p50 wall {p50:7.0f} µs")
            med = lambda how, k: statistics.median(r[k] for r in rows[how])
            print(f"write 4 KB, {workload}: toolgate CPU direct {med('direct', 0):.0f} µs, "
                  f"staged {med('staged', 0):.0f} µs (+{med('staged', 0) - med('direct', 0):.0f}); "
                  f"p50 wall direct {med('direct', 2):.0f} µs, staged {med('staged', 2):.0f} µs "
                  f"(+{med('staged', 2) - med('direct', 2):.0f})")
        load = os.getloadavg()
        print(f"load at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
