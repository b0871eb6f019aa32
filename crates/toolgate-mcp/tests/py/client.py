"""A real MCP client (the Python `mcp` SDK) driving toolgate's MCP server.

Usage: client.py (--stdio CMD | --url URL --token TOKEN) --mode legacy|2026-07-28 SCENARIO

Each scenario asserts what a client sees and exits non-zero with a message on
the first mismatch. The server under test serves four test tools: echo
(read-only), slow (progress, cancellable), guarded (asks through elicitation)
and forbidden (denied by the test policy).
"""

import argparse
import asyncio
import os

import httpx2
import mcp.types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from checks import check, fail, text_of

TEST_ENV = ("TOOLGATE_MCP_TEST_ROLE", "TOOLGATE_MCP_TEST_ROOT", "TOOLGATE_MCP_TEST_DATA", "HOME", "PATH")


def connect(args, **kwargs):
    if args.stdio:
        env = {k: os.environ[k] for k in TEST_ENV if k in os.environ}
        env["RUST_LOG"] = os.environ.get("RUST_LOG", "warn")
        server = StdioServerParameters(command=args.stdio, env=env)
    else:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {args.token}"}, timeout=30)
        server = streamable_http_client(args.url, http_client=http)
    info = types.Implementation(name="toolgate-py-test", version="9.8.7")
    return Client(server, mode=args.mode, client_info=info, read_timeout_seconds=30, **kwargs)


async def catalogue(args):
    async with connect(args) as client:
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        builtins = {"read", "write", "edit", "apply_patch", "bash", "list", "glob", "grep", "websearch"}
        expected = {"echo", "slow", "guarded", "forbidden"} | builtins
        check(expected <= set(tools), f"tools: {sorted(tools)}")
        check("webfetch" not in tools, "a tool the policy denies wholesale is not listed")
        for name in ("write", "edit", "apply_patch", "bash"):
            hints = tools[name].annotations
            check(hints.destructive_hint is True and hints.read_only_hint is False, f"{name}: {hints}")
        for name in ("read", "list", "glob", "grep"):
            check(tools[name].annotations.read_only_hint is True, f"{name}: {tools[name].annotations}")
        check(tools["websearch"].annotations.open_world_hint is True, f"websearch: {tools['websearch'].annotations}")
        check(tools["read"].annotations.open_world_hint is False, "read is closed-world")
        check("path" in tools["read"].input_schema["properties"], f"read schema: {tools['read'].input_schema}")
        check(tools["bash"].output_schema["type"] == "object", f"bash output schema: {tools['bash'].output_schema}")
        echo = tools["echo"]
        check(echo.description == "Repeats its input.", f"description: {echo.description!r}")
        check(echo.input_schema["type"] == "object", f"input schema: {echo.input_schema}")
        check(echo.input_schema["properties"]["text"]["type"] == "string", "echo.text is a string")
        check("text" in echo.input_schema.get("required", []), "echo.text is required")
        check(echo.output_schema and echo.output_schema["type"] == "object", f"output schema: {echo.output_schema}")
        check(echo.annotations.read_only_hint is True, f"echo annotations: {echo.annotations}")
        check(echo.annotations.destructive_hint is False, "echo is not destructive")
        check(echo.annotations.open_world_hint is False, "echo is closed-world")
        guarded = tools["guarded"].annotations
        check(guarded.read_only_hint is False and guarded.destructive_hint is True, f"guarded: {guarded}")
        forbidden = tools["forbidden"].annotations
        check(forbidden.open_world_hint is True, f"forbidden: {forbidden}")
        check(tools["slow"].annotations.destructive_hint is False, "slow is not destructive")


async def calls(args):
    async with connect(args) as client:
        await client.list_tools()
        ok = await client.call_tool("echo", {"text": "hello gate"})
        check(not ok.is_error, f"echo failed: {ok}")
        check(text_of(ok) == "hello gate", f"echo text: {text_of(ok)!r}")
        check(ok.structured_content == {"text": "hello gate", "length": 10}, f"structured: {ok.structured_content}")

        read = await client.call_tool("read", {"path": "hello.txt"})
        check(not read.is_error and "hello from the workspace" in text_of(read), f"read: {read}")
        check(isinstance(read.structured_content, dict), f"read structured: {read.structured_content}")

        denied = await client.call_tool("forbidden", {"url": "https://evil.example/x"})
        check(denied.is_error is True, f"forbidden must be an error result: {denied}")
        check("permission denied" in text_of(denied), f"deny text: {text_of(denied)!r}")
        check("no one could be asked" in text_of(denied), f"deny reason: {text_of(denied)!r}")

        secret = await client.call_tool("read", {"path": "secret/key.txt"})
        check(secret.is_error is True, f"a read the policy denies must be an error result: {secret}")
        check("permission denied" in text_of(secret) and "secret" in text_of(secret), f"rule deny: {text_of(secret)!r}")

        bad = await client.call_tool("echo", {"text": 5})
        check(bad.is_error is True, f"bad arguments must be an error result: {bad}")
        check("invalid input for echo at `text`" in text_of(bad), f"invalid text: {text_of(bad)!r}")
        missing = await client.call_tool("echo", {})
        check(missing.is_error and "missing field `text`" in text_of(missing), f"missing: {text_of(missing)!r}")
        extra = await client.call_tool("echo", {"text": "a", "bogus": 1})
        check(extra.is_error and "bogus" in text_of(extra), f"unknown field: {text_of(extra)!r}")

        try:
            result = await client.call_tool("no_such_tool", {})
            fail(f"unknown tool returned a result: {result}")
        except MCPError as e:
            check(e.code == -32602, f"unknown tool code: {e.code}")
            check("Unknown tool: no_such_tool" in e.message, f"unknown tool message: {e.message!r}")

        reports = []

        async def on_progress(progress, total, message):
            reports.append((progress, total, message))

        slow = await client.call_tool("slow", {"steps": 3, "step_ms": 50}, progress_callback=on_progress)
        check(not slow.is_error and slow.structured_content == {"steps_done": 3}, f"slow: {slow}")
        check(len(reports) >= 1, "no progress notification arrived")
        check(reports[-1][1] == 3.0 and (reports[-1][2] or "").startswith("step"), f"progress: {reports}")
        check(all(a[0] < b[0] for a, b in zip(reports, reports[1:])), f"progress must increase: {reports}")


def answering(decision, message=None):
    seen = []

    async def callback(context, params):
        seen.append(params)
        content = {"decision": decision}
        if message is not None:
            content["message"] = message
        return types.ElicitResult(action="accept", content=content)

    return callback, seen


async def elicit_once(args):
    callback, seen = answering("once")
    async with connect(args, elicitation_callback=callback) as client:
        result = await client.call_tool("guarded", {"target": "marker.txt"})
        check(not result.is_error, f"approved call failed: {text_of(result)!r}")
        check(len(seen) == 1, f"expected one elicitation, got {len(seen)}")
        form = seen[0]
        check("guarded" in form.message and "marker.txt" in form.message, f"form message: {form.message!r}")
        check("risk: write" in form.message and "reason:" in form.message, f"form message: {form.message!r}")
        schema = form.requested_schema
        choices = [c["const"] for c in schema["properties"]["decision"]["oneOf"]]
        check(choices == ["once", "session", "always", "reject"], f"choices: {choices}")


async def elicit_reject(args):
    callback, seen = answering("reject", "write it under tmp/ instead")
    async with connect(args, elicitation_callback=callback) as client:
        result = await client.call_tool("guarded", {"target": "marker.txt"})
        check(result.is_error is True, f"rejected call must be an error: {result}")
        check("write it under tmp/ instead" in text_of(result), f"reject text: {text_of(result)!r}")
        check(len(seen) == 1, "one elicitation")


async def no_elicitation(args):
    async with connect(args) as client:
        result = await client.call_tool("guarded", {"target": "marker.txt"})
        check(result.is_error is True, f"unanswerable ask must be denied: {result}")
        check("permission denied" in text_of(result), f"text: {text_of(result)!r}")


async def cancel(args):
    async with connect(args) as client:
        started = asyncio.Event()

        async def on_progress(progress, total, message):
            started.set()

        task = asyncio.create_task(
            client.call_tool("slow", {"steps": 600, "step_ms": 50}, progress_callback=on_progress)
        )
        await asyncio.wait_for(started.wait(), 20)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        ok = await client.call_tool("echo", {"text": "still here"})
        check(text_of(ok) == "still here", "the connection keeps serving after a cancel")
        await asyncio.sleep(0.5)


async def disconnect(args):
    """Starts a long call and dies without a goodbye once it runs."""
    async with connect(args) as client:
        started = asyncio.Event()

        async def on_progress(progress, total, message):
            started.set()

        asyncio.create_task(client.call_tool("slow", {"steps": 600, "step_ms": 50}, progress_callback=on_progress))
        await asyncio.wait_for(started.wait(), 20)
        print("CALL RUNNING", flush=True)
        os._exit(0)


SCENARIOS = {
    "catalogue": catalogue,
    "calls": calls,
    "elicit-once": elicit_once,
    "elicit-reject": elicit_reject,
    "no-elicitation": no_elicitation,
    "cancel": cancel,
    "disconnect": disconnect,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stdio")
    parser.add_argument("--url")
    parser.add_argument("--token")
    parser.add_argument("--mode", default="legacy")
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    asyncio.run(SCENARIOS[args.scenario](args))
    print(f"ok: {args.scenario}")


if __name__ == "__main__":
    main()
