"""A stand-in model for Claude Code on loopback: speaks the Anthropic Messages
API (SSE) and plays a fixed script of tool calls, one per turn, then says
"done". Every request body is appended to LOG (JSON lines), so a test can see
what reached the model; a GET or POST to /leak/... is recorded as a leak.

usage: anthropic_model.py SCRIPT.json LOG   (prints the port on stdout)
SCRIPT: [{"name": "Bash", "input": {"command": "ls"}}, ...]
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT_TEXT = open(sys.argv[1]).read()
LOG = sys.argv[2]


def log(entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


def tool_results(body):
    n = 0
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, list):
            n += sum(1 for c in content if isinstance(c, dict) and c.get("type") == "tool_result")
    return n


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def leak(self):
        log({"leak": self.path})
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def do_GET(self):
        if self.path.startswith("/leak"):
            return self.leak()
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        if self.path.startswith("/leak"):
            return self.leak()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        log({"path": self.path, "body": body})
        if "count_tokens" in self.path:
            data = json.dumps({"input_tokens": 10}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        main = bool(body.get("tools"))
        step = tool_results(body) if main else len(SCRIPT)
        model = body.get("model", "claude-sonnet-4-5")
        msg = {"id": f"msg_{step}", "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
        chunks = [sse("message_start", {"type": "message_start", "message": msg})]
        if step < len(SCRIPT):
            call = SCRIPT[step]
            chunks.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": f"toolu_{step:04d}", "name": call["name"], "input": {}}}))
            chunks.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(call["input"])}}))
            stop = "tool_use"
        else:
            chunks.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}))
            chunks.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "done"}}))
            stop = "end_turn"
        chunks.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        chunks.append(sse("message_delta", {"type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}))
        chunks.append(sse("message_stop", {"type": "message_stop"}))
        data = b"".join(chunks)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
# `__PORT__` in the script is this server's port (for calls to /leak).
SCRIPT = json.loads(SCRIPT_TEXT.replace("__PORT__", str(server.server_address[1])))
print(server.server_address[1], flush=True)
server.serve_forever()
