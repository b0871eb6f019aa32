"""A stand-in model for OpenCode on loopback: speaks OpenAI Chat Completions
(SSE) and plays a fixed script of tool calls, one per turn, then says "done".
Every request body is appended to LOG (JSON lines); a request to /leak/... is
a leak. `__PORT__` in the script is this server's port.

usage: chat_model.py SCRIPT.json LOG   (prints the port on stdout)
SCRIPT: [{"name": "bash", "args": {"command": "ls", "description": "list"}}, ...]
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT_TEXT = open(sys.argv[1]).read()
LOG = sys.argv[2]
SCRIPT = []


def log(entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, ctype, data):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.startswith("/leak"):
            log({"leak": self.path})
            return self.reply(200, "text/plain", b"ok")
        if self.path.rstrip("/").endswith("/models"):
            return self.reply(200, "application/json", json.dumps(
                {"object": "list", "data": [{"id": "stand-in", "object": "model"}]}).encode())
        self.reply(404, "text/plain", b"")

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        if self.path.startswith("/leak"):
            log({"leak": self.path})
            return self.reply(200, "text/plain", b"ok")
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        log({"path": self.path, "body": body})
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
        base = {"id": f"chatcmpl-{step}", "object": "chat.completion.chunk", "created": 0,
                "model": body.get("model", "stand-in")}
        chunks = []
        if step < len(SCRIPT) and body.get("tools"):
            call = SCRIPT[step]
            delta = {"role": "assistant", "content": None, "tool_calls": [{
                "index": 0, "id": f"call_{step}", "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["args"])}}]}
            finish = "tool_calls"
        else:
            delta = {"role": "assistant", "content": "done"}
            finish = "stop"
        chunks.append(dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]))
        chunks.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}],
                           usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}))
        if body.get("stream"):
            data = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"
            return self.reply(200, "text/event-stream", data)
        message = {"role": "assistant", "content": delta.get("content"), "tool_calls": delta.get("tool_calls")}
        self.reply(200, "application/json", json.dumps(dict(base, object="chat.completion",
            choices=[{"index": 0, "message": message, "finish_reason": finish}],
            usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})).encode())


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
SCRIPT = json.loads(SCRIPT_TEXT.replace("__PORT__", str(server.server_address[1])))
print(server.server_address[1], flush=True)
server.serve_forever()
