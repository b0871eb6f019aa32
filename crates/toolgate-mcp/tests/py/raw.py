"""Bad input over the wire, below any SDK: malformed JSON-RPC, unknown methods,
a 50 MB request, wrong or missing bearer tokens, foreign Host and Origin.

Usage: raw.py stdio CMD | raw.py http URL TOKEN
Python standard library only; exits non-zero with a message on a mismatch.
"""

import http.client
import json
import os
import queue
import subprocess
import sys
import threading
import urllib.parse

from checks import check, fail

BIG = 50 * 1024 * 1024
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "0.0.1"},
    },
}


def echo_call(id_, text):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": text}}}


def big_call(id_):
    return echo_call(id_, "x" * BIG)


# ---------------------------------------------------------------- stdio


class StdioServer:
    def __init__(self, command):
        self.proc = subprocess.Popen(
            [command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ, RUST_LOG="warn")
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send_bytes(self, data):
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def send(self, message):
        self.send_bytes(json.dumps(message).encode())

    def receive(self, timeout=30):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            fail("no reply within the timeout")
        check(line is not None, "the server closed stdout")
        return json.loads(line)


def stdio(command):
    server = StdioServer(command)
    server.send(INIT)
    reply = server.receive()
    check(reply.get("result", {}).get("protocolVersion") == "2025-11-25", f"initialize: {reply}")
    check(reply["result"]["serverInfo"]["name"] == "toolgate", f"serverInfo: {reply}")
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    server.send_bytes(b'{"jsonrpc": "2.0", "id": 2, "method": ')
    reply = server.receive()
    check(reply.get("error", {}).get("code") == -32700 and reply.get("id") is None, f"parse error: {reply}")

    server.send({"jsonrpc": "2.0", "id": 3, "method": "no/such_method"})
    reply = server.receive()
    check(reply.get("id") == 3 and reply.get("error", {}).get("code") == -32601, f"unknown method: {reply}")
    check("no/such_method" in reply["error"]["message"], f"unknown method message: {reply}")

    server.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call"})
    reply = server.receive()
    check(reply.get("id") == 4 and reply.get("error", {}).get("code") == -32602, f"no params: {reply}")
    check("tools/call" in reply["error"]["message"], f"no params message: {reply}")

    server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": 5}})
    reply = server.receive()
    check(reply.get("id") == 7 and reply.get("error", {}).get("code") == -32602, f"bad params: {reply}")

    server.send(big_call(5))
    reply = server.receive(timeout=120)
    error = reply.get("error", {})
    check(reply.get("id") == 5 and error.get("code") == -32600, f"50 MB request: {str(reply)[:300]}")
    check("request too large" in error.get("message", ""), f"50 MB message: {error}")

    server.send(echo_call(6, "alive"))
    reply = server.receive()
    check(reply.get("id") == 6, f"after bad input: {reply}")
    check(reply["result"]["content"][0]["text"] == "alive", f"echo after bad input: {reply}")

    server.proc.stdin.close()
    code = server.proc.wait(timeout=30)
    check(code == 0, f"the server exited with {code} after stdin closed")


# ---------------------------------------------------------------- http


class Http:
    def __init__(self, url, token):
        self.url = urllib.parse.urlsplit(url)
        self.token = token

    def post(self, body, token="default", host=None, origin=None, session=None):
        conn = http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=120)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        token = self.token if token == "default" else token
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if origin is not None:
            headers["Origin"] = origin
        if session is not None:
            headers["Mcp-Session-Id"] = session
            headers["MCP-Protocol-Version"] = "2025-11-25"
        conn.putrequest("POST", self.url.path, skip_host=host is not None)
        if host is not None:
            conn.putheader("Host", host)
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers["Content-Length"] = str(len(data))
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.endheaders()
        try:
            conn.send(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may refuse before reading it all; the status still comes
        response = conn.getresponse()
        raw = response.read()
        conn.close()
        return response.status, dict((k.lower(), v) for k, v in response.getheaders()), raw

    @staticmethod
    def messages(headers, raw):
        """JSON-RPC messages of a JSON or SSE response body."""
        text = raw.decode(errors="replace")
        if headers.get("content-type", "").startswith("text/event-stream"):
            return [json.loads(l[5:]) for l in text.splitlines() if l.startswith("data:") and l[5:].strip()]
        try:
            return [json.loads(text)] if text.strip() else []
        except ValueError:
            fail(f"response body is not JSON-RPC: {headers.get('content-type')} {text[:300]!r}")

    def session(self):
        status, headers, raw = self.post(INIT)
        check(status == 200, f"initialize: {status} {raw[:200]!r}")
        session = headers.get("mcp-session-id")
        check(session, f"no session id: {headers}")
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session=session)
        return session


def http_(url, token):
    h = Http(url, token)

    status, headers, raw = h.post(INIT, token=None)
    check(status == 401 and b"missing bearer token" in raw, f"no token: {status} {raw!r}")
    check(headers.get("www-authenticate") == "Bearer", f"401 without challenge: {headers}")
    status, _, raw = h.post(INIT, token="wrong-token-wrong-token")
    check(status == 401 and b"invalid bearer token" in raw, f"wrong token: {status} {raw!r}")

    status, _, raw = h.post(INIT, host="evil.example")
    check(status == 403 and b"DNS-rebinding" in raw, f"foreign Host: {status} {raw!r}")
    status, _, raw = h.post(INIT, host=f"localhost.evil.example:{h.url.port}")
    check(status == 403, f"look-alike Host: {status} {raw!r}")
    status, _, raw = h.post(INIT, origin="http://evil.example")
    check(status == 403 and b"Origin" in raw, f"foreign Origin: {status} {raw!r}")
    status, _, raw = h.post(INIT, origin="null")
    check(status == 403, f"null Origin: {status} {raw!r}")
    status, _, raw = h.post(INIT, origin=f"http://localhost:{h.url.port}")
    check(status == 200, f"loopback Origin: {status} {raw!r}")

    session = h.session()
    status, headers, raw = h.post(b'{"jsonrpc": "2.0", "id": 2, "method": ', session=session)
    check(400 <= status < 500, f"malformed JSON: {status} {raw!r}")
    messages = h.messages(headers, raw)
    check(messages and messages[0].get("error", {}).get("code") == -32700, f"parse error body: {raw!r}")

    status, headers, raw = h.post({"jsonrpc": "2.0", "id": 3, "method": "no/such_method"}, session=session)
    messages = h.messages(headers, raw)
    check(
        any(m.get("id") == 3 and m.get("error", {}).get("code") == -32601 for m in messages),
        f"unknown method: {status} {raw!r}",
    )

    status, headers, raw = h.post(big_call(4), session=session)
    check(status == 413, f"50 MB request: {status} {raw[:300]!r}")
    error = h.messages(headers, raw)[0]
    check(error.get("id") == 4 and "request too large" in error["error"]["message"], f"50 MB answer: {error}")

    status, headers, raw = h.post(echo_call(5, "alive"), session=session)
    messages = h.messages(headers, raw)
    check(
        any(m.get("id") == 5 and m.get("result", {}).get("content", [{}])[0].get("text") == "alive" for m in messages),
        f"echo after bad input: {status} {raw!r}",
    )


def main():
    if sys.argv[1] == "stdio":
        stdio(sys.argv[2])
    else:
        http_(sys.argv[2], sys.argv[3])
    print(f"ok: raw {sys.argv[1]}")


if __name__ == "__main__":
    main()
