#!/usr/bin/env python3
"""Progress and cancellation as the official Python `mcp` SDK uses them.

Usage: progress_cancel.py <server binary> <fixture url> [server args...]

MCP_CLIENT_MODE picks how the SDK connects (`auto`: 2026-07-28; `legacy`: `initialize`).
Opens the fixture, then:
1. calls `evaluate_script` with a script that answers after 3.5 s, with a progress callback:
   the notifications it heard are reported;
2. calls `evaluate_script` with a script that keeps the page busy for 60 s, with a 2-s read
   timeout: the SDK gives up and sends `notifications/cancelled`;
3. calls `evaluate_script` reading `document.title` on the same page: timed, it must not wait
   for the 60-s script (the cancellation stopped it in Chromium and freed the page's lane).

Prints one JSON object: {"protocolVersion", "progress": [[progress, total, message], ...],
"slow": {text, isError}, "cancelled": "<error>", "cancelSeconds", "after": {text, isError},
"afterSeconds"}. Any other failure, or taking longer than 90 s, exits non-zero.
"""

import json
import os
import sys
import time

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

SLOW = "() => new Promise(resolve => setTimeout(() => resolve('done'), 3500))"
BUSY = "() => { const end = Date.now() + 60000; while (Date.now() < end) {} return 'never'; }"


def summarize(result) -> dict:
    texts = [item.text for item in result.content if getattr(item, "type", None) == "text"]
    return {"text": "\n".join(texts), "isError": bool(result.is_error)}


async def run(binary: str, url: str, server_args: list[str]) -> dict:
    mode = os.environ.get("MCP_CLIENT_MODE", "auto")
    server = StdioServerParameters(command=binary, args=server_args, env=dict(os.environ))
    heard = []

    async def on_progress(progress, total, message):
        heard.append([progress, total, message])

    with anyio.fail_after(90):
        async with Client(server, mode=mode) as client:
            output = {"protocolVersion": client.protocol_version}
            opened = await client.call_tool("new_page", {"url": url})
            output["opened"] = summarize(opened)
            slow = await client.call_tool("evaluate_script", {"function": SLOW}, progress_callback=on_progress)
            output["slow"] = summarize(slow)
            output["progress"] = heard
            started = time.monotonic()
            try:
                await client.call_tool("evaluate_script", {"function": BUSY}, read_timeout_seconds=2)
                output["cancelled"] = None
            except (MCPError, TimeoutError) as error:
                output["cancelled"] = f"{type(error).__name__}: {error}"
            output["cancelSeconds"] = time.monotonic() - started
            started = time.monotonic()
            after = await client.call_tool("evaluate_script", {"function": "() => document.title"})
            output["afterSeconds"] = time.monotonic() - started
            output["after"] = summarize(after)
            return output


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        output = anyio.run(run, sys.argv[1], sys.argv[2], sys.argv[3:])
    except BaseException as error:  # noqa: BLE001 - reported, then a non-zero exit
        print(f"progress_cancel.py failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(json.dumps(output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
