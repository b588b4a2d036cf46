#!/usr/bin/env python3
"""A stand-in for the card processor, speaking the documented subset the board uses, on
127.0.0.1 only (the tests of paid postings start it):

- POST /v1/checkout/sessions: a form body with bracketed keys (`line_items[0][price_data]
  [unit_amount]` or `line_items[0][price]`, `metadata[order_id]`, ...), the secret key as
  a bearer token, and the `Idempotency-Key` honoured (the same key answers the same
  session).
- POST /v1/prices (`unit_amount`, `currency`, `product_data[name]`): a price defined at
  the processor, which a session's `line_items[0][price]` names (a pack of posts).
- GET /v1/checkout/sessions/{id}: the session as it is now.
- GET /pay/{id}: the hosted payment page (a button); POST /pay/{id} pays and redirects to
  the session's success URL, as a payer would.
- Test controls: POST /test/pay/{id}, /test/expire/{id}, /test/refund/{id} move a session
  and send the event; POST /test/resend/{id}?times=N sends the session's last event again;
  GET /test/sessions lists the sessions; POST /test/events-off and /test/events-on stop and
  resume sending events (a lost webhook); GET /test/pending counts the events waiting to
  be sent again.

Events go to the webhook URL given at start, signed with the processor's official Python
library (`stripe.WebhookSignature`), so what the board verifies is the processor's own
signature. An event the board does not answer (or answers with a 5xx) is sent again at
once up to 5 times, and then, as the processor keeps retrying for days, every half second
for STANDIN_RETRY_SECONDS (300 unless set) in the background.

    python3 scripts/processor-standin.py SECRET_KEY WEBHOOK_SECRET WEBHOOK_URL

Prints `listening on PORT` once ready.
"""

import http.server
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse
import urllib.request

from stripe import WebhookSignature

SECRET_KEY, WEBHOOK_SECRET, WEBHOOK_URL = sys.argv[1], sys.argv[2], sys.argv[3]
LOCK = threading.Lock()
SESSIONS = {}
BY_KEY = {}
LAST_EVENT = {}
STATE = {"events": True}
PORT = [0]
PRICES = {}
# Events not yet answered with a 2xx: [event, give up at].
RETRIES = []
RETRY_SECONDS = float(os.environ.get("STANDIN_RETRY_SECONDS", "300"))


def nested(pairs):
    """`a[b][0][c]=v` pairs as nested dicts (lists are dicts keyed by index here)."""
    out = {}
    for key, value in pairs:
        parts = key.replace("]", "").split("[")
        d = out
        for p in parts[:-1]:
            d = d.setdefault(p, {})
        d[parts[-1]] = value
    return out


def signed_header(payload):
    t = int(time.time())
    sig = WebhookSignature._compute_signature(f"{t}.{payload}", WEBHOOK_SECRET)
    return f"t={t},v1={sig}"


def delivered(status):
    return status != 0 and status < 500


def send(event, attempts=5):
    """Sends `event` up to `attempts` times; its last status (0: not answered)."""
    payload = json.dumps(event)
    for _ in range(attempts):
        req = urllib.request.Request(WEBHOOK_URL, data=payload.encode(), method="POST", headers={
            "content-type": "application/json",
            "stripe-signature": signed_header(payload),
        })
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                if 200 <= r.status < 300:
                    return r.status
        except urllib.error.HTTPError as e:
            if e.code < 500:
                return e.code
        except OSError:
            pass
        time.sleep(0.2)
    return 0


def event_of(kind, obj):
    return {"id": "evt_" + secrets.token_hex(12), "object": "event", "type": kind,
            "created": int(time.time()), "data": {"object": obj}}


def emit(session_id, kind, obj):
    event = event_of(kind, obj)
    with LOCK:
        LAST_EVENT[session_id] = event
        on = STATE["events"]
    if not on:
        return 0
    status = send(event)
    if not delivered(status):
        with LOCK:
            RETRIES.append([event, time.time() + RETRY_SECONDS])
    return status


def retry_forever():
    """Sends the events not yet delivered again, each once per round."""
    while True:
        time.sleep(0.5)
        with LOCK:
            due = list(RETRIES)
        for entry in due:
            event, give_up = entry
            done = delivered(send(event, attempts=1)) or time.time() > give_up
            if done:
                with LOCK:
                    if entry in RETRIES:
                        RETRIES.remove(entry)


def pay(session_id):
    with LOCK:
        s = SESSIONS[session_id]
        s["status"] = "complete"
        s["payment_status"] = "paid"
        s["payment_intent"] = s["payment_intent"] or "pi_" + secrets.token_hex(12)
        obj = dict(s)
    return emit(session_id, "checkout.session.completed", obj)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type="application/json", headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def authorized(self):
        if self.headers.get("authorization") != f"Bearer {SECRET_KEY}":
            self.reply(401, {"error": {"type": "invalid_request_error", "message": "Invalid API Key provided."}})
            return False
        return True

    def body(self):
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n).decode()

    def do_GET(self):
        path = urllib.parse.urlparse(self.path).path
        if path.startswith("/v1/checkout/sessions/"):
            if not self.authorized():
                return
            with LOCK:
                s = SESSIONS.get(path.rsplit("/", 1)[1])
            return self.reply(200, s) if s else self.reply(404, {"error": {"message": "No such checkout.session"}})
        if path.startswith("/pay/"):
            sid = path.rsplit("/", 1)[1]
            with LOCK:
                s = SESSIONS.get(sid)
            if not s:
                return self.reply(404, b"no such session", "text/plain")
            amount = f"{s['amount_total'] / 100:.2f} {s['currency'].upper()}"
            page = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Pay {amount}</title></head>"
                    f"<body><main><h1>Pay {amount}</h1><form method=post action=/pay/{sid}>"
                    f"<button type=submit>Pay {amount}</button></form></main></body></html>")
            return self.reply(200, page.encode(), "text/html; charset=utf-8")
        if path == "/test/sessions":
            with LOCK:
                return self.reply(200, list(SESSIONS.values()))
        if path == "/test/pending":
            with LOCK:
                return self.reply(200, {"pending": len(RETRIES)})
        self.reply(404, {"error": {"message": "Unrecognized request URL"}})

    def do_POST(self):
        url = urllib.parse.urlparse(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        if path == "/v1/checkout/sessions":
            if not self.authorized():
                return
            key = self.headers.get("idempotency-key")
            form = nested(urllib.parse.parse_qsl(self.body(), keep_blank_values=True))
            with LOCK:
                if key and key in BY_KEY:
                    return self.reply(200, SESSIONS[BY_KEY[key]])
            item = form.get("line_items", {}).get("0", {})
            data = item.get("price_data", {})
            if item.get("price"):
                with LOCK:
                    price = PRICES.get(item["price"])
                if not price:
                    return self.reply(400, {"error": {"type": "invalid_request_error", "code": "resource_missing",
                                                      "message": f"No such price: '{item['price']}'"}})
                data = {"unit_amount": str(price["unit_amount"]), "currency": price["currency"],
                        "product_data": {"name": price["nickname"]}}
            if form.get("mode") != "payment" or not data.get("unit_amount") or not data.get("currency"):
                return self.reply(400, {"error": {"type": "invalid_request_error",
                                                  "message": "mode=payment and line_items[0][price_data] or [price] are required"}})
            sid = "cs_test_" + secrets.token_hex(16)
            s = {
                "id": sid, "object": "checkout.session", "mode": "payment", "status": "open",
                "payment_status": "unpaid",
                "amount_total": int(data["unit_amount"]) * int(item.get("quantity", "1")),
                "currency": data["currency"], "client_reference_id": form.get("client_reference_id"),
                "metadata": form.get("metadata", {}), "customer_email": form.get("customer_email"),
                "success_url": form.get("success_url"), "cancel_url": form.get("cancel_url"),
                "payment_intent": None, "url": f"http://127.0.0.1:{PORT[0]}/pay/{sid}",
                "line_item_name": data.get("product_data", {}).get("name"),
            }
            with LOCK:
                SESSIONS[sid] = s
                if key:
                    BY_KEY[key] = sid
            return self.reply(200, s)
        if path == "/v1/prices":
            if not self.authorized():
                return
            form = nested(urllib.parse.parse_qsl(self.body(), keep_blank_values=True))
            if not form.get("unit_amount", "").isdigit() or len(form.get("currency", "")) != 3:
                return self.reply(400, {"error": {"type": "invalid_request_error",
                                                  "message": "unit_amount and currency are required"}})
            price = {"id": "price_" + secrets.token_hex(12), "object": "price", "active": True,
                     "type": "one_time", "unit_amount": int(form["unit_amount"]),
                     "currency": form["currency"].lower(),
                     "nickname": form.get("product_data", {}).get("name")}
            with LOCK:
                PRICES[price["id"]] = price
            return self.reply(200, price)
        if path.startswith("/pay/"):
            sid = path.rsplit("/", 1)[1]
            with LOCK:
                s = SESSIONS.get(sid)
            if not s:
                return self.reply(404, b"no such session", "text/plain")
            pay(sid)
            return self.reply(303, b"", "text/plain",
                              {"location": s["success_url"].replace("{CHECKOUT_SESSION_ID}", sid)})
        parts = path.strip("/").split("/")
        if parts[0] == "test":
            if parts[1] == "events-off":
                STATE["events"] = False
                return self.reply(200, {})
            if parts[1] == "events-on":
                STATE["events"] = True
                return self.reply(200, {})
            sid = parts[2] if len(parts) > 2 else ""
            with LOCK:
                s = SESSIONS.get(sid)
            if not s:
                return self.reply(404, {"error": {"message": "No such checkout.session"}})
            if parts[1] == "pay":
                return self.reply(200, {"delivered": pay(sid)})
            if parts[1] == "expire":
                with LOCK:
                    s["status"] = "expired"
                    obj = dict(s)
                return self.reply(200, {"delivered": emit(sid, "checkout.session.expired", obj)})
            if parts[1] == "refund":
                charge = {"id": "ch_" + secrets.token_hex(12), "object": "charge", "refunded": True,
                          "amount_refunded": s["amount_total"], "payment_intent": s["payment_intent"]}
                return self.reply(200, {"delivered": emit(sid, "charge.refunded", charge)})
            if parts[1] == "resend":
                times = int(query.get("times", ["1"])[0])
                with LOCK:
                    event = LAST_EVENT.get(sid)
                statuses = [send(event, attempts=1) for _ in range(times)] if event else []
                return self.reply(200, {"delivered": statuses})
        self.reply(404, {"error": {"message": "Unrecognized request URL"}})


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    PORT[0] = server.server_address[1]
    threading.Thread(target=retry_forever, daemon=True).start()
    print(f"listening on {PORT[0]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
