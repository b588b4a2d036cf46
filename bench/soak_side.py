#!/usr/bin/env python3
"""The outside world of bench/soak.sh, on 127.0.0.1 only (standard library):

- a slow webhook receiver: POST /hook answers 200 after SOAK_HOOK_DELAY seconds (0.2);
- a job feed to import: GET /feed.json, a JSON Feed 1.1 of 30 jobs, a third of them
  replaced every minute (so each import run creates, updates and expires some);
- an SMTP sink that takes every mail and keeps none.

Usage: soak_side.py HTTP_PORT SMTP_PORT. Prints "ready" once both listen; counts what it
received in SOAK_SIDE_COUNTS (a file rewritten every 10 s: "hooks mails feeds").
"""

import asyncio
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOOK_DELAY = float(os.environ.get("SOAK_HOOK_DELAY", "0.2"))
COUNTS = os.environ.get("SOAK_SIDE_COUNTS")
counts = {"hooks": 0, "mails": 0, "feeds": 0}
lock = threading.Lock()


def bump(name):
    with lock:
        counts[name] += 1


def feed(now):
    """30 jobs; ids of the form job-<minute>-<n> for a third, stable for the rest."""
    minute = int(now // 60)
    items = []
    for n in range(30):
        generation = minute - (n % 3) if n < 10 else 0
        items.append(
            {
                "id": f"job-{generation}-{n}",
                "title": f"Imported role {n}",
                "content_html": f"<p>A role read from the feed, generation {generation}.</p>",
                "url": f"https://feed.example/jobs/{generation}/{n}",
                "date_published": "2026-11-01T00:00:00Z",
                "authors": [{"name": "Feed Company"}],
            }
        )
    return {"version": "https://jsonfeed.org/version/1.1", "title": "Soak feed", "items": items}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", ctype="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if self.path.startswith("/hook"):
            time.sleep(HOOK_DELAY)
            bump("hooks")
            self.answer(200, b"ok")
        else:
            self.answer(404)

    def do_GET(self):
        if self.path.startswith("/feed.json"):
            bump("feeds")
            body = json.dumps(feed(time.time())).encode()
            self.answer(200, body, "application/feed+json")
        else:
            self.answer(404)


class Smtp(asyncio.Protocol):
    """Just enough SMTP to take mail: every command is accepted."""

    def connection_made(self, transport):
        self.t = transport
        self.buf = b""
        self.data = False
        self.t.write(b"220 sink ESMTP\r\n")

    def data_received(self, chunk):
        self.buf += chunk
        while True:
            if self.data:
                end = self.buf.find(b"\r\n.\r\n")
                if end < 0:
                    return
                self.buf = self.buf[end + 5 :]
                self.data = False
                bump("mails")
                self.t.write(b"250 kept nowhere\r\n")
                continue
            end = self.buf.find(b"\r\n")
            if end < 0:
                return
            line, self.buf = self.buf[:end], self.buf[end + 2 :]
            verb = line[:4].upper()
            if verb == b"EHLO":
                self.t.write(b"250-sink\r\n250 8BITMIME\r\n")
            elif verb == b"DATA":
                self.data = True
                self.t.write(b"354 go on\r\n")
            elif verb == b"QUIT":
                self.t.write(b"221 bye\r\n")
                self.t.close()
                return
            else:
                self.t.write(b"250 ok\r\n")


def write_counts():
    while COUNTS:
        with lock:
            line = f"{counts['hooks']} {counts['mails']} {counts['feeds']}\n"
        with open(COUNTS + ".tmp", "w") as f:
            f.write(line)
        os.replace(COUNTS + ".tmp", COUNTS)
        time.sleep(10)


async def main():
    http_port, smtp_port = int(sys.argv[1]), int(sys.argv[2])
    server = ThreadingHTTPServer(("127.0.0.1", http_port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(target=write_counts, daemon=True).start()
    loop = asyncio.get_running_loop()
    smtp = await loop.create_server(Smtp, "127.0.0.1", smtp_port)
    print("ready", flush=True)
    async with smtp:
        await smtp.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
