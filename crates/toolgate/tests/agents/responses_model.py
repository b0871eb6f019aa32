"""A stand-in model for Codex on loopback: speaks the OpenAI Responses API
(SSE) and plays a fixed script of shell commands, one per turn, through
whichever shell tool the request offers, then says "done". Every request
body is appended to LOG (JSON lines); a request to /leak/... is a leak.
`__PORT__` in the script is this server's port.

usage: responses_model.py SCRIPT.json LOG   (prints the port on stdout)
SCRIPT: ["ls", "git status", ...]
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


def outputs(body):
    items = body.get("input", [])
    if not isinstance(items, list):
        return 0
    return sum(1 for i in items if isinstance(i, dict) and i.get("type") in
               ("function_call_output", "custom_tool_call_output"))


def shell_call(body, command):
    names = [t.get("name") for t in body.get("tools", []) if isinstance(t, dict)]
    if "shell_command" in names:
        return "shell_command", {"command": command}
    if "exec_command" in names:
        return "exec_command", {"cmd": command}
    return "shell", {"command": ["bash", "-lc", command]}


def sse(data):
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


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
            return self.reply(200, "application/json", json.dumps({"object": "list", "data": [
                {"id": "gpt-5", "object": "model"}]}).encode())
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
        step = outputs(body)
        rid = f"resp_{step}"
        events = [sse({"type": "response.created", "response": {"id": rid}})]
        if step < len(SCRIPT) and body.get("tools"):
            name, args = shell_call(body, SCRIPT[step])
            item = {"type": "function_call", "id": f"fc_{step}", "call_id": f"call_{step}",
                    "name": name, "arguments": json.dumps(args)}
        else:
            item = {"type": "message", "id": f"msg_{step}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "done", "annotations": []}]}
        events.append(sse({"type": "response.output_item.done", "output_index": 0, "item": item}))
        events.append(sse({"type": "response.completed", "response": {"id": rid, "usage": {
            "input_tokens": 10, "input_tokens_details": None, "output_tokens": 5,
            "output_tokens_details": None, "total_tokens": 15}}}))
        self.reply(200, "text/event-stream", b"".join(events))


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
SCRIPT = json.loads(SCRIPT_TEXT.replace("__PORT__", str(server.server_address[1])))
print(server.server_address[1], flush=True)
server.serve_forever()
