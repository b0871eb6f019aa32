"""What the independent MCP bench clients share (`mcp_cpu_client.py`,
`mcp_gateway_client.py`, `mcp_upstream_staging.py`): a server spoken to in raw JSON-RPC over stdio, and
a process's CPU time read from `/proc/PID/stat`. Nothing of toolgate's own
code, so the clients measure toolgate from outside."""

import json
import os
import subprocess

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 of the line; 12 and 13 after ')'.
    return (int(fields[11]) + int(fields[12])) / TICK


def cmdline(pid):
    """The command line of process `pid`, its arguments joined by spaces
    ("" once it has gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        return ""


class Server:
    """An MCP server on stdio, initialised as `client`."""

    def __init__(self, argv, env=None, client="raw-client"):
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 1
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": client, "version": "1"},
            },
        )
        self.notify("notifications/initialized")

    def notify(self, method):
        line = json.dumps({"jsonrpc": "2.0", "method": method}) + "\n"
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            raw = self.proc.stdout.readline()
            if not raw:
                raise RuntimeError(f"{method}: the server hung up")
            answer = json.loads(raw)
            if answer.get("id") == rid:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def call(self, tool, args):
        result = self.request("tools/call", {"name": tool, "arguments": args})
        if result.get("isError"):
            raise RuntimeError(f"{tool}: {result}")
        return result

    def close(self, timeout=20):
        self.proc.stdin.close()
        self.proc.wait(timeout=timeout)
