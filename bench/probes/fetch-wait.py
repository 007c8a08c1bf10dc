"""The fetch-then-wait_for pair against chrome-devtools-mcp 1.11.0 at several fetch delays
(issue 50, item 3): `python3 bench/probes/fetch-wait.py SERVER REFERENCE_BIN_JS` (both over stdio,
5 runs per delay, medians). The page fetches `/slow?ms=N` on load and writes the answer; the
agent navigates to it, then waits for the text."""
import asyncio, sys, os, time, threading, http.server, statistics
from urllib.parse import urlparse, parse_qs
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client, StdioServerParameters
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        u = urlparse(self.path); q = parse_qs(u.query)
        if u.path == "/slow":
            time.sleep(int(q["ms"][0]) / 1000); body = b"the data"
            ct = "text/plain"
        else:
            ms = q.get("ms", ["300"])[0]
            body = f"""<!doctype html><title>Fetch</title><h1>Loading data</h1><script>fetch('/slow?ms={ms}').then(r => r.text()).then(t => {{ const p = document.createElement('p'); p.textContent = 'Data loaded: ' + t; document.body.append(p); }});</script>""".encode()
            ct = "text/html"
        self.send_response(200); self.send_header("Content-Type", ct); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=httpd.serve_forever, daemon=True).start()
base = f"http://127.0.0.1:{httpd.server_address[1]}"
async def run(label, cmd):
    async with stdio_client(StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ})) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            await s.call_tool("list_pages", {})
            await s.call_tool("navigate_page", {"type": "url", "url": base + "/page?ms=10"})
            for ms in (0, 50, 150, 300, 1500):
                navs, waits, tot = [], [], []
                for i in range(5):
                    t0 = time.time(); a = await s.call_tool("navigate_page", {"type": "url", "url": f"{base}/page?ms={ms}&i={i}"})
                    t1 = time.time(); b = await s.call_tool("wait_for", {"text": ["Data loaded"]})
                    t2 = time.time()
                    assert not a.is_error and not b.is_error, (a, b)
                    navs.append(t1 - t0); waits.append(t2 - t1); tot.append(t2 - t0)
                print(f"{label:10s} fetch {ms:5d} ms: navigate {1000*statistics.median(navs):5.0f}  wait_for {1000*statistics.median(waits):5.0f}  both {1000*statistics.median(tot):5.0f} ms", flush=True)
async def main():
    chromium = ["--executablePath", os.environ.get("CHROMIUM", "/usr/bin/chromium"), "--headless", "--isolated", "--chromeArg=--no-sandbox", "--no-usage-statistics"]
    await run("ours", [sys.argv[1]] + chromium + ["--no-page-id-routing"])
    await run("1.11.0", ["node", sys.argv[2]] + chromium + ["--no-page-id-routing"])
asyncio.run(main())
