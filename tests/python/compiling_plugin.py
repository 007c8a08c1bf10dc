#!/usr/bin/env python3
"""A server whose plugin is not compiled yet, as the official Python `mcp` SDK sees it.

Usage: compiling_plugin.py <tool name> <server binary> [server args...]

Starts the server over stdio (the `initialize` handshake), times `initialize`, lists the tools
(the plugin still compiling is not among them), calls the tool at once (the call waits for its
compile), waits for `notifications/tools/list_changed` and lists the tools again. Prints one
JSON object: {"initializeSeconds", "listedFirst", "call": {"text", "isError", "seconds"},
"listChanged", "listedAfter"}. Any failure, or 120 s, exits non-zero with a message on stderr.
"""

import json
import os
import sys
import time

import anyio
from mcp import Client, StdioServerParameters

TIMEOUT_SECONDS = 120


async def run(tool: str, binary: str, server_args: list[str]) -> dict:
    changed = anyio.Event()

    async def on_message(message) -> None:
        notification = getattr(message, "root", message)
        if getattr(notification, "method", None) == "notifications/tools/list_changed":
            changed.set()

    server = StdioServerParameters(command=binary, args=server_args, env=dict(os.environ))
    output = {}
    with anyio.fail_after(TIMEOUT_SECONDS):
        started = time.monotonic()
        async with Client(server, mode="legacy", message_handler=on_message) as client:
            output["initializeSeconds"] = time.monotonic() - started
            output["listedFirst"] = [t.name for t in (await client.list_tools()).tools]
            started = time.monotonic()
            result = await client.call_tool(tool, {})
            texts = [item.text for item in result.content if getattr(item, "type", None) == "text"]
            output["call"] = {
                "text": "\n".join(texts),
                "isError": bool(result.is_error),
                "seconds": time.monotonic() - started,
            }
            with anyio.move_on_after(30):
                await changed.wait()
            output["listChanged"] = changed.is_set()
            output["listedAfter"] = [t.name for t in (await client.list_tools()).tools]
    return output


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        output = anyio.run(run, sys.argv[1], sys.argv[2], sys.argv[3:])
    except Exception as error:  # noqa: BLE001 - every failure must become a message and exit 1
        print(f"compiling_plugin.py: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(json.dumps(output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
