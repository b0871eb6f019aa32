"""A stand-in model for Gemini CLI on loopback: answers
`:streamGenerateContent?alt=sse` (and `:generateContent`) and plays a fixed
script of function calls, one per turn, then says "done". Every request body
is appended to LOG (JSON lines); a request to /leak/... is recorded as a leak.
`__PORT__` in the script is this server's port.

usage: gemini_model.py SCRIPT.json LOG   (prints the port on stdout)
SCRIPT: [{"name": "run_shell_command", "args": {"command": "ls"}}, ...]
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


def function_responses(body):
    n = 0
    for c in body.get("contents", []):
        for p in c.get("parts", []) or []:
            if isinstance(p, dict) and "functionResponse" in p:
                n += 1
    return n


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
        self.reply(200, "application/json", b"{}")

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
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
        if ":countTokens" in self.path:
            return self.reply(200, "application/json", json.dumps({"totalTokens": 10}).encode())
        main = bool(body.get("tools"))
        step = function_responses(body) if main else len(SCRIPT)
        if step < len(SCRIPT):
            call = SCRIPT[step]
            parts = [{"functionCall": {"name": call["name"], "args": call["args"]}}]
        elif ":generateContent" in self.path:
            # A side question (next speaker, a summary): a JSON answer.
            parts = [{"text": json.dumps({"reasoning": "done", "next_speaker": "user"})}]
        else:
            parts = [{"text": "done"}]
        chunk = {"candidates": [{"content": {"role": "model", "parts": parts},
                                 "finishReason": "STOP", "index": 0}],
                 "usageMetadata": usage, "modelVersion": "gemini-2.5-pro"}
        if "alt=sse" in self.path:
            data = f"data: {json.dumps(chunk)}\r\n\r\n".encode()
            return self.reply(200, "text/event-stream", data)
        self.reply(200, "application/json", json.dumps(chunk).encode())


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
SCRIPT = json.loads(SCRIPT_TEXT.replace("__PORT__", str(server.server_address[1])))
print(server.server_address[1], flush=True)
server.serve_forever()
