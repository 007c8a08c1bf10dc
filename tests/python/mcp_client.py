#!/usr/bin/env python3
"""Drive the server with a client this project did not write: the official Python `mcp` SDK.

Usage: mcp_client.py <server binary | http://HOST:PORT/mcp> <fixture url> [server args...]

Connects over stdio (a binary, started with the server args) or streamable HTTP (a URL, with
the bearer token in MCP_CLIENT_TOKEN), lists the tools, calls a tool that does not exist (timed:
it must answer at once), then `new_page` with the url, `take_snapshot`, and `evaluate_script`
reading `document.title` (on 2026-07-28 over stdio it first opens a `subscriptions/listen`
for tool-list changes), and prints one JSON object to stdout:

    {"mode": ..., "protocolVersion": ..., "instructions": ..., "tools": [names], "outputSchemas": N,
     "listenHonored": ..., "probeSeconds": ..., "calls": {"new_page": {"text": ..., "isError": ..., "seconds": ...,
     "structuredKeys": [keys] or null}, ...}}

MCP_CLIENT_MODE picks how the SDK connects: `auto` (its default: probe `server/discover` and
speak 2026-07-28, falling back to `initialize`), `legacy` (the `initialize` handshake) or a
protocol version to adopt without a probe. With MCP_CLIENT_ROOT=<dir> the client also offers
that folder as its MCP root and asks `take_snapshot` to save into it ("save_snapshot").

A tool answering with `isError` is reported in that object, not treated as a failure: the
caller asserts on it. Any protocol or transport failure, or taking longer than 60 s, exits
non-zero with a message on stderr. The server's own stderr passes through to ours, and so do
the SDK's warnings (e.g. a refused session termination).
"""

import json
import logging
import os
import sys
import time

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import ListRootsResult, Root

TIMEOUT_SECONDS = 60


def summarize(result, seconds: float) -> dict:
    """The text items joined with newlines, the error flag and the time of a CallToolResult."""
    texts = [item.text for item in result.content if getattr(item, "type", None) == "text"]
    structured = result.structured_content
    return {
        "text": "\n".join(texts),
        "isError": bool(result.is_error),
        "seconds": seconds,
        "structuredKeys": sorted(structured) if isinstance(structured, dict) else None,
    }


async def list_tools(client: Client) -> list:
    """All tools, following pagination."""
    result = await client.list_tools()
    tools = list(result.tools)
    while result.next_cursor is not None:
        result = await client.list_tools(cursor=result.next_cursor)
        tools.extend(result.tools)
    return tools


def server_for(target: str, server_args: list[str]):
    """A URL is served over streamable HTTP with MCP_CLIENT_TOKEN; anything else is a binary."""
    if target.startswith("http://"):
        token = os.environ.get("MCP_CLIENT_TOKEN", "")
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT_SECONDS)
        return streamable_http_client(target, http_client=http)
    # Pass our whole environment (the SDK's default keeps only a few variables) so the
    # server sees the same CHROMIUM, RUST_LOG, HOME... as in the Rust tests.
    return StdioServerParameters(command=target, args=server_args, env=dict(os.environ))


async def timed_call(client: Client, name: str, arguments: dict):
    started = time.monotonic()
    result = await client.call_tool(name, arguments)
    return result, time.monotonic() - started


async def run(target: str, url: str, server_args: list[str]) -> dict:
    mode = os.environ.get("MCP_CLIENT_MODE", "auto")
    calls = [
        ("new_page", {"url": url}, "new_page"),
        ("take_snapshot", {}, "take_snapshot"),
        ("evaluate_script", {"function": "() => document.title"}, "evaluate_script"),
    ]
    root = os.environ.get("MCP_CLIENT_ROOT")
    list_roots = None
    if root:
        calls.append(("take_snapshot", {"filePath": os.path.join(root, "from-python.txt")}, "save_snapshot"))

        async def list_roots(_context) -> ListRootsResult:
            return ListRootsResult(roots=[Root(uri=f"file://{root}", name="test root")])

    with anyio.fail_after(TIMEOUT_SECONDS):
        async with Client(server_for(target, server_args), mode=mode, list_roots_callback=list_roots) as client:
            output = {
                "mode": mode,
                "protocolVersion": client.protocol_version,
                "instructions": client.instructions,
                "calls": {},
            }
            tools = await list_tools(client)
            output["tools"] = [tool.name for tool in tools]
            # The SDK validates a call's structuredContent against the tool's outputSchema.
            output["outputSchemas"] = sum(1 for tool in tools if tool.output_schema)
            if client.protocol_version >= "2026-07-28" and not target.startswith("http://"):
                # This revision's way to hear of tool-list changes: a subscription.
                async with client.listen(tools_list_changed=True) as subscription:
                    output["listenHonored"] = bool(subscription.honored.tools_list_changed)
            # The first call of the session: it must not wait on a handshake.
            started = time.monotonic()
            try:
                await client.call_tool("no_such_tool", {})
                output["probe"] = "answered"
            except MCPError as error:
                output["probe"] = str(error)
            output["probeSeconds"] = time.monotonic() - started
            for name, arguments, label in calls:
                result, seconds = await timed_call(client, name, arguments)
                output["calls"][label] = summarize(result, seconds)
            return output


def describe(error: BaseException) -> str:
    """One line per leaf exception: anyio task groups wrap failures in exception groups."""
    if isinstance(error, BaseExceptionGroup):
        return "\n".join(describe(inner) for inner in error.exceptions)
    if isinstance(error, TimeoutError):
        return f"timed out after {TIMEOUT_SECONDS} s"
    return f"{type(error).__name__}: {error}"


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    target, url, server_args = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        output = anyio.run(run, target, url, server_args)
    except Exception as error:  # noqa: BLE001 - every failure must become a message and exit 1
        print(f"mcp_client.py: {describe(error)}", file=sys.stderr)
        return 1
    print(json.dumps(output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
