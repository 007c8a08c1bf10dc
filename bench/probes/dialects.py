#!/usr/bin/env python3
"""Per-call overhead of the two protocol dialects over stdio, with the official Python `mcp`
SDK: its default mode (`server/discover`, 2026-07-28, no `initialize`) and its legacy mode
(`initialize`, 2025-11-25).

Usage: python3 bench/probes/dialects.py BINARY [CALLS] [ROUNDS] [-- SERVER ARGS...]

Each round starts one server per mode (alternating, default first), opens a page, then times
CALLS calls of `list_pages` (cheap: no page work), and prints per mode the median and 90th
percentile per call, and the time of the session's first call (a tool that does not exist,
answered without the browser: where a wait on a handshake would show). The
server args default to a headless, isolated Chromium from $CHROMIUM or /usr/bin/chromium.
"""

import os
import statistics
import sys
import time

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

MODES = ("auto", "legacy")


async def one_server(binary: str, args: list[str], mode: str, calls: int) -> tuple[float, list[float]]:
    params = StdioServerParameters(command=binary, args=args, env=dict(os.environ))
    async with Client(params, mode=mode) as client:
        started = time.monotonic()
        try:
            await client.call_tool("no_such_tool", {})
        except MCPError:
            pass  # refused by name, as expected: only its time matters
        first = time.monotonic() - started
        await client.call_tool("new_page", {"url": "about:blank"})
        times = []
        for _ in range(calls):
            started = time.monotonic()
            await client.call_tool("list_pages", {})
            times.append(time.monotonic() - started)
        return first, times


def main() -> int:
    argv = sys.argv[1:]
    server_args = None
    if "--" in argv:
        server_args = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    binary = argv[0]
    calls = int(argv[1]) if len(argv) > 1 else 50
    rounds = int(argv[2]) if len(argv) > 2 else 3
    if server_args is None:
        chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        server_args = ["--headless", "--isolated", "--executablePath", chromium, "--chromeArg=--no-sandbox"]
    firsts = {mode: [] for mode in MODES}
    per_call = {mode: [] for mode in MODES}
    for _ in range(rounds):
        for mode in MODES:
            first, times = anyio.run(one_server, binary, server_args, mode, calls)
            firsts[mode].append(first)
            per_call[mode].extend(times)
    print(f"{calls} list_pages calls x {rounds} servers per mode; load average {os.getloadavg()[0]:.1f}")
    print("| mode | protocol | median per call | p90 per call | first call (median of rounds) |")
    print("|---|---|---:|---:|---:|")
    for mode, protocol in zip(MODES, ("2026-07-28", "2025-11-25")):
        times = sorted(per_call[mode])
        p90 = times[int(len(times) * 0.9) - 1]
        print(
            f"| {mode} | {protocol} | {statistics.median(times) * 1000:.1f} ms | {p90 * 1000:.1f} ms "
            f"| {statistics.median(firsts[mode]) * 1000:.0f} ms |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
