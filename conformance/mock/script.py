"""The scripted model shared by every API mock: a list of turns played in order, and a log of
every request body, so that a case can check what the model received.

A turn is {"text": "..."} (final text), {"tool": NAME, "input": {...}} (one tool call), or
{"calls": [{"tool": ..., "input": ...}, ...]} (parallel calls). Once the turns are played, every
further request gets the text "done.". Requests the agent makes on the side (a title, a quota
check: no tools offered) get short text and do not consume a turn.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    def __init__(self, turns, log_path):
        self.turns = list(turns)
        self.log_path = log_path
        self.lock = threading.Lock()
        self.played = 0

    def next_turn(self):
        with self.lock:
            if self.played < len(self.turns):
                turn = self.turns[self.played]
                self.played += 1
                return turn
            return {"text": "done."}

    def log(self, path, body):
        with self.lock, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": path, "body": body}) + "\n")


def calls_of(turn):
    """The tool calls of a turn, as (name, input) pairs."""
    if "tool" in turn:
        return [(turn["tool"], turn.get("input", {}))]
    return [(c["tool"], c.get("input", {})) for c in turn.get("calls", [])]


class Handler(BaseHTTPRequestHandler):
    """Base handler: reads and logs the body, then calls the API's `answer(path, body)`."""

    protocol_version = "HTTP/1.1"
    script: Script = None

    def log_message(self, *args):
        pass

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"raw": raw.decode("utf-8", "replace")}

    def do_GET(self):
        self.script.log(self.path, None)
        self.answer_get(self.path)

    def do_POST(self):
        body = self.body()
        self.script.log(self.path, body)
        self.answer(self.path, body)

    def answer_get(self, path):
        self.send_json(404, {"error": {"message": "not found: " + path}})

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events):
        """events: (event name or None, data object) pairs, sent as one SSE response."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            chunk = ""
            if name:
                chunk += "event: " + name + "\n"
            chunk += "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n"
            self.wfile.write(chunk.encode())
        self.wfile.flush()
        self.close_connection = True


def serve(handler_class, turns, log_path):
    """Starts the API on a free loopback port; returns (server, script). server.server_port."""
    script = Script(turns, log_path)
    cls = type(handler_class.__name__, (handler_class,), {"script": script})
    server = ThreadingHTTPServer(("127.0.0.1", 0), cls)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, script
