"""A small site with sessions, for the HAR tests: a login form guarded by a CSRF token in a
hidden input (a wrong token is refused with 403), an account page whose script asks a JSON API
for the user's orders, and order pages that answer only for ids the API gave this session.
Prints the port it listens on (127.0.0.1, a free one), then serves until killed."""

import json
import secrets
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SESSIONS = {}  # sid -> {"csrf": str, "user": str or None, "orders": set of ids}
PASSWORD = sys.argv[1] if len(sys.argv) > 1 else "s3cret"

LOGIN = """<!doctype html><html><head><title>Log in</title>
<link rel="stylesheet" href="/static/site.css"></head><body>
<form method="post" action="/login">
<input type="hidden" name="csrf" value="{csrf}">
<input name="user"> <input name="password" type="password">
<button type="submit">Log in</button></form></body></html>"""

ACCOUNT = """<!doctype html><html><head><title>Account</title>
<link rel="stylesheet" href="/static/site.css"></head><body>
<p>Hello {user}</p><a id="order" href="#">loading</a>
<script>
fetch('/api/orders').then(r => r.json()).then(j => {{
  const a = document.getElementById('order');
  a.href = '/orders/' + j.orders[0].id;
  a.textContent = 'your order';
  document.body.dataset.ready = '1';
}});
</script></body></html>"""


class Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="text/html; charset=utf-8", headers=()):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def session(self):
        for part in self.headers.get("Cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == "sid" and value in SESSIONS:
                return value, SESSIONS[value]
        return None, None

    def do_GET(self):
        sid, s = self.session()
        path = urllib.parse.urlsplit(self.path).path
        if path == "/login":
            headers = []
            if s is None:
                sid = secrets.token_hex(16)
                s = SESSIONS[sid] = {"user": None, "orders": set()}
                headers.append(("Set-Cookie", f"sid={sid}; Path=/; HttpOnly"))
            s["csrf"] = secrets.token_hex(16)
            return self.reply(200, LOGIN.format(csrf=s["csrf"]), headers=headers)
        if path == "/static/site.css":
            return self.reply(200, "body { font-family: sans-serif }", "text/css")
        if s is None or s["user"] is None:
            return self.reply(403, "log in first\n", "text/plain")
        if path == "/account":
            return self.reply(200, ACCOUNT.format(user=s["user"]))
        if path == "/api/orders":
            order = str(secrets.randbelow(900000) + 100000)
            s["orders"].add(order)
            body = json.dumps({"orders": [{"id": int(order), "total": "12.50"}]})
            return self.reply(200, body, "application/json")
        if path.startswith("/orders/"):
            if path[len("/orders/"):] in s["orders"]:
                return self.reply(200, f"<!doctype html><title>Order</title><p>order {path[8:]}</p>")
            return self.reply(404, "no such order in this session\n", "text/plain")
        return self.reply(404, "not found\n", "text/plain")

    def do_POST(self):
        sid, s = self.session()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        if self.path != "/login":
            return self.reply(404, "not found\n", "text/plain")
        form = urllib.parse.parse_qs(body)
        if s is None or form.get("csrf") != [s.get("csrf")]:
            return self.reply(403, "bad CSRF token\n", "text/plain")
        if form.get("password") != [PASSWORD]:
            return self.reply(401, "wrong password\n", "text/plain")
        s["user"] = form.get("user", ["?"])[0]
        self.reply(303, "", headers=[("Location", "/account")])


server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
print(server.server_address[1], flush=True)
server.serve_forever()
