# The "hello" executor plugin: standard library only. `plugflow plugin build` puts this whole
# file into the sidecar's args, and the container runs it with `python3 -c`.
#
# Protocol (plugflow spec, document 000):
#   POST /api/v1/template.execute, Authorization: Bearer <token from the token file>
#   - any other path or method            -> 404
#   - wrong or missing Authorization      -> 403, no body
#   - template.plugin has no "hello" key  -> 200 {}
#   - otherwise                           -> 200 {"node": {...}} with a message and an output
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NAME = "hello"
PORT = int(os.environ.get("PLUGIN_PORT", "4355"))
# Only the agent, in the same pod, calls the plugin: loopback is enough.
HOST = os.environ.get("PLUGIN_HOST", "127.0.0.1")
TOKEN_PATH = os.environ.get("PLUGIN_TOKEN_PATH", "/var/run/workflow/token")
EXECUTE_PATH = "/api/v1/template.execute"


def read_token():
    # Read on every request: cheap, and a replaced token is honoured at once.
    try:
        with open(TOKEN_PATH, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the agent reuses its connection

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        if self.path.split("?")[0] != EXECUTE_PATH:
            return self.reply(404)
        token = read_token()
        if not token or self.headers.get("Authorization", "") != "Bearer " + token:
            return self.reply(403)
        try:
            args = json.loads(body or b"null")
            template = args["template"]
        except (ValueError, KeyError, TypeError):
            return self.reply(400, {"message": "the body is not an ExecuteTemplateArgs"})
        section = template.get("plugin") or {}
        if NAME not in section:
            return self.reply(200, {})
        config = section[NAME] if isinstance(section[NAME], dict) else {}
        message = "Hello, %s!" % config.get("name", "world")
        return self.reply(200, {
            "node": {
                "phase": "Succeeded",
                "message": message,
                "outputs": {"parameters": [{"name": "greeting", "value": message}]},
            }
        })

    def not_found(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > 0:
            self.rfile.read(length)
        self.reply(404)

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = not_found

    def reply(self, status, body=None):
        data = b"" if body is None else json.dumps(body).encode("utf-8")
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, fmt, *args):
        # Request lines only (never headers, which carry the token).
        print("hello: " + fmt % args, flush=True)


if __name__ == "__main__":
    server = ThreadingHTTPServer((HOST, PORT), Handler)
    print("hello plugin listening on %s:%d" % (HOST, server.server_address[1]), flush=True)
    server.serve_forever()
