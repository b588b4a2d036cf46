#!/usr/bin/env python3
"""A stand-in for the search engines' instant indexing endpoints, speaking the documented
subset the board uses, on 127.0.0.1 only (the indexing tests start it):

- POST /token: Google's OAuth token endpoint for service accounts (RFC 7523): a form with
  `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and the `assertion`, checked
  with Google's own library (`google.auth.jwt.decode`: the RS256 signature against the
  service account's public key, `aud` this endpoint, `iat` and `exp`), its `iss` the
  account and its `scope` the Indexing API's. Answers an access token.
- POST /v3/urlNotifications:publish: the Indexing API (`{"url", "type": "URL_UPDATED" |
  "URL_DELETED"}` with a bearer token it issued), within a daily quota (STANDIN_QUOTA,
  200 unless set): past it, `429 RESOURCE_EXHAUSTED` as Google answers.
- POST /indexnow: the IndexNow protocol (`host`, `key`, `keyLocation`, `urlList`): the key
  is checked by fetching `keyLocation` (which must be on `host`, and so must every URL),
  as the engines do; `200` when it holds the key, `403` otherwise, `422` for URLs of
  another host.
- Test controls: GET /test/received (every notification taken, every refusal), POST
  /test/next-day (the quota starts again), POST /test/fail?n=N (the next N requests to
  either API answer 503).

    python3 scripts/indexing-standin.py SERVICE_ACCOUNT_JSON

Prints `listening on PORT` once ready.
"""

import http.server
import json
import secrets
import sys
import threading
import urllib.parse
import urllib.request

from cryptography.hazmat.primitives import serialization
from google.auth import jwt

ACCOUNT = json.load(open(sys.argv[1]))
PUBLIC_PEM = (
    serialization.load_pem_private_key(ACCOUNT["private_key"].encode(), password=None)
    .public_key()
    .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
)
QUOTA = int(__import__("os").environ.get("STANDIN_QUOTA", "200"))
SCOPE = "https://www.googleapis.com/auth/indexing"
LOCK = threading.Lock()
STATE = {"tokens": set(), "google": [], "indexnow": [], "refused": [], "used": 0, "day": 0, "fail": 0}
PORT = [0]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n)

    def refuse(self, status, what, body):
        with LOCK:
            STATE["refused"].append({"status": status, "what": what})
        self.answer(status, body)

    def failing(self):
        with LOCK:
            if STATE["fail"] > 0:
                STATE["fail"] -= 1
                return True
        return False

    def do_GET(self):
        if self.path == "/test/received":
            with LOCK:
                out = {k: STATE[k] for k in ("google", "indexnow", "refused", "used", "day")}
            return self.answer(200, out)
        self.answer(404, {})

    def do_POST(self):
        path = urllib.parse.urlparse(self.path)
        raw = self.body()
        if path.path == "/test/next-day":
            with LOCK:
                STATE["used"] = 0
                STATE["day"] += 1
            return self.answer(200, {})
        if path.path == "/test/fail":
            n = int(urllib.parse.parse_qs(path.query).get("n", ["1"])[0])
            with LOCK:
                STATE["fail"] = n
            return self.answer(200, {})
        if path.path == "/token":
            form = urllib.parse.parse_qs(raw.decode())
            if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
                return self.refuse(400, "grant_type", {"error": "unsupported_grant_type"})
            try:
                claims = jwt.decode(
                    form["assertion"][0],
                    certs=PUBLIC_PEM,
                    audience=f"http://127.0.0.1:{PORT[0]}/token",
                )
            except Exception as e:  # noqa: BLE001 - any refusal is the client's
                return self.refuse(400, f"assertion: {e}", {"error": "invalid_grant"})
            if claims.get("iss") != ACCOUNT["client_email"] or claims.get("scope") != SCOPE:
                return self.refuse(400, "claims", {"error": "invalid_scope"})
            token = secrets.token_urlsafe(24)
            with LOCK:
                STATE["tokens"].add(token)
            return self.answer(200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer"})
        if path.path == "/v3/urlNotifications:publish":
            auth = self.headers.get("authorization", "")
            with LOCK:
                known = auth.startswith("Bearer ") and auth[7:] in STATE["tokens"]
            if not known:
                return self.refuse(401, "token", {"error": {"code": 401, "status": "UNAUTHENTICATED"}})
            if self.failing():
                return self.answer(503, {"error": {"code": 503, "status": "UNAVAILABLE"}})
            try:
                body = json.loads(raw)
            except ValueError:
                return self.refuse(400, "json", {"error": {"code": 400, "status": "INVALID_ARGUMENT"}})
            if body.get("type") not in ("URL_UPDATED", "URL_DELETED") or not body.get("url"):
                return self.refuse(400, "body", {"error": {"code": 400, "status": "INVALID_ARGUMENT"}})
            with LOCK:
                if STATE["used"] >= QUOTA:
                    STATE["refused"].append({"status": 429, "what": body["url"]})
                    over = True
                else:
                    STATE["used"] += 1
                    STATE["google"].append({"url": body["url"], "type": body["type"], "day": STATE["day"]})
                    over = False
            if over:
                return self.answer(429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}})
            return self.answer(200, {"urlNotificationMetadata": {"url": body["url"], "latestUpdate": {"url": body["url"], "type": body["type"]}}})
        if path.path == "/indexnow":
            if self.failing():
                return self.answer(503, {})
            try:
                body = json.loads(raw)
                host, key, location, urls = body["host"], body["key"], body["keyLocation"], body["urlList"]
            except (ValueError, KeyError):
                return self.refuse(400, "body", {})
            if urllib.parse.urlparse(location).hostname != urllib.parse.urlparse(f"//{host}").hostname:
                return self.refuse(422, "keyLocation", {})
            if any(urllib.parse.urlparse(u).netloc != urllib.parse.urlparse(location).netloc for u in urls):
                return self.refuse(422, "urlList", {})
            if urllib.parse.urlparse(location).hostname not in ("127.0.0.1", "localhost"):
                return self.refuse(403, "not loopback", {})
            try:
                with urllib.request.urlopen(location, timeout=10) as r:
                    held = r.read().decode().strip()
            except Exception as e:  # noqa: BLE001
                return self.refuse(403, f"key file: {e}", {})
            if held != key:
                return self.refuse(403, "key", {})
            with LOCK:
                STATE["indexnow"].append({"host": host, "key": key, "urls": urls})
            return self.answer(200, {})
        self.answer(404, {})


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
PORT[0] = server.server_address[1]
print(f"listening on {PORT[0]}", flush=True)
server.serve_forever()
