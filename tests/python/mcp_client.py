#!/usr/bin/env python3
"""Drive the server with a client this project did not write: the official Python `mcp` SDK.

Usage: mcp_client.py <server binary> <fixture url> [server args...]

Connects over stdio, lists the tools, calls `new_page` with the url, then `take_snapshot`,
then `evaluate_script` reading `document.title`, and prints one JSON object to stdout:

    {"tools": [names], "calls": {"new_page": {"text": ..., "isError": ...}, ...}}

With MCP_CLIENT_ROOT=<dir> in the environment the client also offers that folder as its
MCP root and asks `take_snapshot` to save into it (the call is reported as "save_snapshot").

A tool answering with `isError` is reported in that object, not treated as a failure: the
caller asserts on it. Any protocol or transport failure, or taking longer than 60 s, exits
non-zero with a message on stderr. The server's own stderr passes through to ours.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import ListRootsResult, PaginatedRequestParams, Root

TIMEOUT_SECONDS = 60


def summarize(result) -> dict:
    """The text items joined with newlines, and the error flag, of a CallToolResult."""
    texts = [item.text for item in result.content if getattr(item, "type", None) == "text"]
    return {"text": "\n".join(texts), "isError": bool(result.is_error)}


async def list_tool_names(session: ClientSession) -> list[str]:
    """All tool names, following pagination."""
    names: list[str] = []
    result = await session.list_tools()
    names.extend(tool.name for tool in result.tools)
    while result.next_cursor is not None:
        result = await session.list_tools(params=PaginatedRequestParams(cursor=result.next_cursor))
        names.extend(tool.name for tool in result.tools)
    return names


async def run(binary: str, url: str, server_args: list[str]) -> dict:
    # Pass our whole environment (the SDK's default keeps only a few variables) so the
    # server sees the same CHROMIUM, RUST_LOG, HOME... as in the Rust tests.
    params = StdioServerParameters(command=binary, args=server_args, env=dict(os.environ))
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
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, list_roots_callback=list_roots) as session:
                await session.initialize()
                output = {"tools": await list_tool_names(session), "calls": {}}
                for name, arguments, label in calls:
                    result = await session.call_tool(name, arguments)
                    output["calls"][label] = summarize(result)
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
    binary, url, server_args = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        output = anyio.run(run, binary, url, server_args)
    except Exception as error:  # noqa: BLE001 - every failure must become a message and exit 1
        print(f"mcp_client.py: {describe(error)}", file=sys.stderr)
        return 1
    print(json.dumps(output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
