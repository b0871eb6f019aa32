#!/usr/bin/env python3
"""An independent client for the MCP per-call cost: toolgate's `mcp` server
against `@modelcontextprotocol/server-filesystem`, written apart from the Rust
bench (`mcp_vs_filesystem.rs`) so that the two can be compared.

Raw JSON-RPC over stdio, one fresh server per operation, WARMUP calls then
CALLS measured calls; the server's CPU per call is read from
`/proc/PID/stat` (utime + stime) before and after the measured calls. The
servers alternate operation by operation, in the same run.

    scripts/setup-bench-peers.sh
    cargo build --release -p toolgate
    python3 crates/toolgate/benches/mcp_cpu_client.py target/release/toolgate

Prints, per operation, the microseconds of server CPU per call for each
server, the ratio toolgate / reference, and how many entries each `list`
answer held. toolgate runs with its audit log on at default durability, in
mode `accept-edits` so that writes are allowed.
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_mcp import Server, cpu_seconds  # noqa: E402

WARMUP = 20
CALLS = int(os.environ.get("BENCH_CALLS", "300"))
REFERENCE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "../../../bench-data/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
)


def fixture(base):
    root = os.path.join(base, "ws")
    os.makedirs(os.path.join(root, "dir1000"))
    os.makedirs(os.path.join(root, "dir3"))
    line = "0123456789abcdef" * 4 + "\n"
    with open(os.path.join(root, "file4k.txt"), "w") as f:
        f.write(line[:64] * 64)
    for i in range(1000):
        with open(os.path.join(root, "dir1000", f"entry-{i:04}.txt"), "w") as f:
            f.write("x")
    for i in range(3):
        with open(os.path.join(root, "dir3", f"e{i}.txt"), "w") as f:
            f.write("x")
    return root


def text_of(result):
    return "".join(c.get("text", "") for c in result.get("content", []))


def measure(server, tool, make_args):
    for i in range(WARMUP):
        server.call(tool, make_args(i))
    before = cpu_seconds(server.proc.pid)
    last = None
    for i in range(CALLS):
        last = server.call(tool, make_args(WARMUP + i))
    after = cpu_seconds(server.proc.pid)
    return (after - before) / CALLS * 1e6, last


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: mcp_cpu_client.py PATH/TO/toolgate")
    toolgate = os.path.abspath(sys.argv[1])
    if not os.path.exists(REFERENCE):
        sys.exit(f"missing {REFERENCE}: run scripts/setup-bench-peers.sh")
    with tempfile.TemporaryDirectory() as base:
        root = fixture(base)
        data = os.path.join(base, "data")
        env = dict(os.environ, TOOLGATE_DATA_DIR=data, TOOLGATE_MANAGED_CONFIG=os.path.join(data, "none.toml"))

        def start_toolgate():
            return Server([toolgate, "mcp", "--root", root, "--mode", "accept-edits"], env, client="cpu-client")

        def start_reference():
            return Server(["node", REFERENCE, root], client="cpu-client")

        content = "y" * 4096
        operations = [
            ("read 4 KB",
             ("read", lambda i: {"path": "file4k.txt"}),
             ("read_text_file", lambda i: {"path": f"{root}/file4k.txt"})),
            ("write 4 KB",
             ("write", lambda i: {"path": f"out/t{i}.txt", "content": content}),
             ("write_file", lambda i: {"path": f"{root}/out/r{i}.txt", "content": content})),
            ("list 1,000 entries",
             ("list", lambda i: {"path": "dir1000"}),
             ("list_directory", lambda i: {"path": f"{root}/dir1000"})),
            ("list 3 entries",
             ("list", lambda i: {"path": "dir3"}),
             ("list_directory", lambda i: {"path": f"{root}/dir3"})),
        ]
        os.makedirs(os.path.join(root, "out"))
        print(f"server CPU per call (µs), {WARMUP} warm-up then {CALLS} calls, a fresh server per operation")
        for name, (tg_tool, tg_args), (ref_tool, ref_args) in operations:
            figures = {}
            for label, start, tool, args in [
                ("toolgate", start_toolgate, tg_tool, tg_args),
                ("reference", start_reference, ref_tool, ref_args),
            ]:
                server = start()
                try:
                    cost, last = measure(server, tool, args)
                finally:
                    server.close()
                entries = text_of(last).count(".txt") if "list" in name else None
                figures[label] = (cost, entries)
            (tg, tg_entries), (ref, ref_entries) = figures["toolgate"], figures["reference"]
            extra = ""
            if tg_entries is not None:
                extra = f"  entries returned: toolgate {tg_entries}, reference {ref_entries}"
            print(f"{name:<20} toolgate {tg:8.0f}  reference {ref:8.0f}  ratio {tg / ref:5.2f}{extra}")


if __name__ == "__main__":
    main()
