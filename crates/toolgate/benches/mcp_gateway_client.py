#!/usr/bin/env python3
"""An independent client for the gateway's per-call cost: a call through
`toolgate mcp` to an upstream MCP server against the same call made to the
upstream directly. Written apart from the Rust benches, like
`mcp_cpu_client.py`.

Raw JSON-RPC over stdio. Two operations, each on its own upstream:
`@modelcontextprotocol/server-filesystem`'s `read_text_file` of a 4 KB file,
and `@modelcontextprotocol/server-everything`'s `echo`. For each, ROUNDS
rounds alternate direct and through-the-gateway, a fresh server (and
upstream) per round; each round makes WARMUP calls, then CALLS measured
calls. Measured:

- CPU per call from `/proc/PID/stat` (utime + stime, every thread) before
  and after the measured calls: toolgate's own process, and the upstream's
  (the direct server, or toolgate's child) separately;
- wall time per call at the client (`perf_counter_ns` around each request),
  whose p50 difference is the latency the gateway adds.

    bash scripts/setup-node-mcp.sh
    cargo build --release -p toolgate
    python3 crates/toolgate/benches/mcp_gateway_client.py target/release/toolgate

toolgate runs with its audit log on at default durability, the upstreams
unconfined (`sandbox = false`: the sandbox costs at start, not per call),
and a rule allowing their tools. Prints each round and the medians.
"""

import json
import os
import statistics
import sys
import tempfile

import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_mcp import Server, cmdline, cpu_seconds  # noqa: E402

WARMUP = int(os.environ.get("BENCH_WARMUP", "50"))
CALLS = int(os.environ.get("BENCH_CALLS", "2000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
NODE_BIN = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "../../toolgate-mcp/.node/node_modules/.bin"
)
FILESYSTEM = os.path.join(NODE_BIN, "mcp-server-filesystem")
EVERYTHING = os.path.join(NODE_BIN, "mcp-server-everything")


def children(pid):
    """The direct children of `pid`, from every thread's `children` list."""
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.update(int(c) for c in f.read().split())
        except FileNotFoundError:
            pass
    return sorted(out)


def measure(server, upstream_pid, tool, args):
    """(server CPU µs/call, upstream CPU µs/call or None, wall times in µs)."""
    for _ in range(WARMUP):
        server.call(tool, args)
    pids = [server.proc.pid] + ([upstream_pid] if upstream_pid else [])
    before = [cpu_seconds(p) for p in pids]
    walls = []
    for _ in range(CALLS):
        t0 = time.perf_counter_ns()
        server.call(tool, args)
        walls.append((time.perf_counter_ns() - t0) / 1e3)
    after = [cpu_seconds(p) for p in pids]
    per_call = [(a - b) / CALLS * 1e6 for a, b in zip(after, before)]
    return per_call[0], (per_call[1] if upstream_pid else None), walls


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: mcp_gateway_client.py PATH/TO/toolgate")
    toolgate = os.path.abspath(sys.argv[1])
    for path in (FILESYSTEM, EVERYTHING):
        if not os.path.exists(path):
            sys.exit(f"missing {path}: run scripts/setup-node-mcp.sh")
    with tempfile.TemporaryDirectory() as base:
        root = os.path.join(base, "ws")
        os.makedirs(root)
        target = os.path.join(root, "file4k.txt")
        with open(target, "w") as f:
            f.write((("0123456789abcdef" * 4)[:63] + "\n") * 64)
        data = os.path.join(base, "data")
        servers = os.path.join(base, "servers.json")
        with open(servers, "w") as f:
            json.dump(
                {
                    "mcpServers": {
                        "fs": {"command": FILESYSTEM, "args": [root], "sandbox": False},
                        "ev": {"command": EVERYTHING, "args": ["stdio"], "sandbox": False},
                    }
                },
                f,
            )
        config = os.path.join(base, "gate.toml")
        with open(config, "w") as f:
            f.write('[permission.mcp]\n"fs__*" = "allow"\n"ev__*" = "allow"\n')
        env = dict(
            os.environ,
            TOOLGATE_DATA_DIR=data,
            TOOLGATE_MANAGED_CONFIG=os.path.join(data, "none.toml"),
        )

        gateway_argv = [toolgate, "mcp", "--root", root, "--no-web", "--mode", "accept-edits",
                        "--upstreams", servers, "--config", config]

        operations = [
            ("server-filesystem read_text_file 4 KB", [FILESYSTEM, root], "read_text_file",
             "fs__read_text_file", {"path": target}, "server-filesystem"),
            ("server-everything echo", [EVERYTHING, "stdio"], "echo", "ev__echo",
             {"message": "hello"}, "server-everything"),
        ]
        load = os.getloadavg()
        print(f"{WARMUP} warm-up then {CALLS} calls per round, {ROUNDS} rounds alternating; "
              f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        for name, command, tool, exposed, args, package in operations:
            rows = {"direct": [], "gateway": []}
            for _ in range(ROUNDS):
                for how in ("direct", "gateway"):
                    if how == "direct":
                        server = Server(command, client="gateway-client")
                        upstream = None
                        call_tool = tool
                    else:
                        server = Server(gateway_argv, env, client="gateway-client")
                        # Both upstreams are toolgate's children; the one
                        # measured is the one whose command line names it.
                        upstream = next(
                            (c for c in children(server.proc.pid) if package in cmdline(c)), None
                        )
                        call_tool = exposed
                    try:
                        own, up, walls = measure(server, upstream, call_tool, args)
                    finally:
                        server.close()
                    p50 = statistics.median(walls)
                    rows[how].append((own, up, p50))
                    up_text = f"  upstream CPU {up:6.0f} µs" if up is not None else ""
                    print(f"  {name:<40} {how:<8} server CPU {own:6.0f} µs{up_text}  p50 wall {p50:7.0f} µs")
            med = lambda how, i: statistics.median(r[i] for r in rows[how])
            direct_cpu, gw_cpu = med("direct", 0), med("gateway", 0)
            gw_up = statistics.median(r[1] for r in rows["gateway"] if r[1] is not None)
            added = med("gateway", 2) - med("direct", 2)
            print(f"{name}: upstream CPU direct {direct_cpu:.0f} µs, through the gateway {gw_up:.0f} µs; "
                  f"toolgate CPU per call {gw_cpu:.0f} µs (target ≤ 100); "
                  f"p50 wall direct {med('direct', 2):.0f} µs, gateway {med('gateway', 2):.0f} µs, "
                  f"added {added:.0f} µs (target ≤ 300)")


if __name__ == "__main__":
    main()
