#!/usr/bin/env python3
"""The server's own memory on a first start (an empty compiled-code cache, as after an
install) against later starts (the built-in tools' definitions remembered).

Usage: python3 bench/probes/first-start-memory.py BINARY [ROUNDS] [CACHE_PARENT]

Each round makes an empty cache folder (under CACHE_PARENT, default ~/.cache/devtools-mcp-probe:
the server refuses a cache inside the temp dir), then starts the server on it twice. Each start
answers `initialize`, opens a fixture page served on 127.0.0.1 and takes a snapshot, and its
`VmHWM` (peak resident memory), `RssAnon` and `RssFile` are read from /proc. Printed: the
median of each, first start against later start. Chromium is from $CHROMIUM or
/usr/bin/chromium.
"""

import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading

PAGE = b"<title>Fixture</title><h1>Hello</h1><a href='#'>link</a><button>Go</button>"


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


def start(binary, cache, url):
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    args = [binary, "--headless", "--isolated", "--no-page-id-routing", "--cache-dir", cache,
            "--executablePath", chromium, "--chromeArg=--no-sandbox"]
    child = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)

    def request(id, method, params):
        message = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
        child.stdin.write((json.dumps(message) + "\n").encode())
        child.stdin.flush()
        while True:
            line = child.stdout.readline()
            if not line:
                sys.exit("the server closed its output (run it by hand to see why)")
            answer = json.loads(line)
            if answer.get("id") == id:
                return answer

    request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "first-start-memory", "version": "0"}})
    child.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    child.stdin.flush()
    for id, (tool, arguments) in enumerate(
        [("navigate_page", {"type": "url", "url": url}), ("take_snapshot", {})], start=2
    ):
        answer = request(id, "tools/call", {"name": tool, "arguments": arguments})
        if answer.get("result", {}).get("isError"):
            sys.exit(f"{tool} failed: {answer}")
    status = {}
    with open(f"/proc/{child.pid}/status") as file:
        for line in file:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "RssAnon", "RssFile"):
                status[key] = int(value.split()[0]) / 1024
    child.stdin.close()
    child.wait(timeout=30)
    return status


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    parent = sys.argv[3] if len(sys.argv) > 3 else os.path.expanduser("~/.cache/devtools-mcp-probe")
    os.makedirs(parent, exist_ok=True)
    server = http.server.HTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/"
    first, later = [], []
    for _ in range(rounds):
        cache = tempfile.mkdtemp(dir=parent)
        try:
            first.append(start(binary, cache, url))
            later.append(start(binary, cache, url))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    print(f"{rounds} rounds, MiB (median)   first start   later start")
    for key in ("VmHWM", "RssAnon", "RssFile"):
        a = statistics.median(s[key] for s in first)
        b = statistics.median(s[key] for s in later)
        print(f"{key:<27}{a:>12.1f}{b:>14.1f}")


if __name__ == "__main__":
    main()
