"""A real MCP client (the Python `mcp` SDK) driving `toolgate mcp` over stdio,
with the approval page answered over HTTP like the page's own script does.

Usage: channels.py --toolgate BIN --root DIR --mode legacy|2026-07-28 [--server-arg ARG]... SCENARIO

The user config ($HOME/.config/toolgate/config.toml, written by the Rust
test) sets the approval channel order. The server's stderr goes to a file, where the page URL
it prints is read. Each scenario exits non-zero with a message on the first
mismatch.
"""

import argparse
import asyncio
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import httpx2
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

# The helpers the MCP crate's Python clients share (its venv runs this too).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "toolgate-mcp/tests/py"))
from checks import check, fail, text_of  # noqa: E402


class Server:
    """`toolgate mcp` as the client's stdio server, its stderr kept in a file."""

    def __init__(self, args):
        self.args = args
        self.errlog = tempfile.NamedTemporaryFile("w+", prefix="toolgate-stderr-", delete=False)

    def client(self, **kwargs):
        env = {k: os.environ[k] for k in ("PATH", "HOME", "TOOLGATE_DATA_DIR", "TOOLGATE_MANAGED_CONFIG")
               if k in os.environ}
        env["RUST_LOG"] = "warn"
        argv = ["mcp", "--root", self.args.root] + (self.args.server_arg or [])
        params = StdioServerParameters(command=self.args.toolgate, args=argv, env=env)
        info = types.Implementation(name="toolgate-channels-test", version="1.0")
        transport = stdio_client(params, errlog=self.errlog)
        return Client(transport, mode=self.args.mode, client_info=info, read_timeout_seconds=60, **kwargs)

    def stderr(self):
        with open(self.errlog.name) as f:
            return f.read()

    async def page(self):
        """Signs in to the approval page at the URL the server printed."""
        deadline = time.monotonic() + 20
        while True:
            m = re.search(r"approval page at (http://\S+)", self.stderr())
            if m:
                return await Page.sign_in(m.group(1))
            check(time.monotonic() < deadline, f"no page URL on stderr: {self.stderr()!r}")
            await asyncio.sleep(0.05)


class HttpServer:
    """`toolgate serve` on a free loopback port with a known token."""

    TOKEN = "channels-test-token-0123456789abcdef"

    def __init__(self, args):
        self.args = args
        self.errlog = tempfile.NamedTemporaryFile("w+", prefix="toolgate-serve-", delete=False)

    async def __aenter__(self):
        argv = [self.args.toolgate, "serve", "--listen", "127.0.0.1:0", "--root", self.args.root,
                "--token", self.TOKEN] + (self.args.server_arg or [])
        self.process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=self.errlog)
        deadline = time.monotonic() + 30
        while True:
            with open(self.errlog.name) as f:
                m = re.search(r"MCP endpoint (http://\S+)", f.read())
            if m:
                self.url = m.group(1)
                return self
            check(self.process.returncode is None, "serve exited early")
            check(time.monotonic() < deadline, "serve did not print its endpoint")
            await asyncio.sleep(0.05)

    async def __aexit__(self, *exc):
        self.process.terminate()
        await self.process.wait()

    def client(self, **kwargs):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.TOKEN}"}, timeout=30)
        info = types.Implementation(name="toolgate-channels-test", version="1.0")
        transport = streamable_http_client(self.url, http_client=http)
        return Client(transport, mode=self.args.mode, client_info=info, read_timeout_seconds=60, **kwargs)


class Page:
    def __init__(self, base, cookie):
        self.base = base
        self.http = httpx2.AsyncClient(timeout=10, headers={"Cookie": cookie})

    @staticmethod
    async def sign_in(url):
        base = url.split("/?")[0]
        async with httpx2.AsyncClient(timeout=10) as http:
            r = await http.get(url)
        check(r.status_code == 200, f"sign-in: {r.status_code}")
        cookie = r.headers["set-cookie"].split(";")[0]
        return Page(base, cookie)

    async def pending(self):
        r = await self.http.get(f"{self.base}/approvals/pending", headers={"Accept": "application/json"})
        check(r.status_code == 200, f"pending: {r.status_code} {r.text}")
        return r.json()

    async def wait_for_ask(self, seconds=20):
        deadline = time.monotonic() + seconds
        while True:
            asks = await self.pending()
            if asks:
                return asks[0]
            check(time.monotonic() < deadline, "no ask appeared on the page")
            await asyncio.sleep(0.05)

    async def questions(self):
        r = await self.http.get(f"{self.base}/approvals/questions", headers={"Accept": "application/json"})
        check(r.status_code == 200, f"questions: {r.status_code} {r.text}")
        return r.json()

    async def wait_for_question(self, seconds=20):
        deadline = time.monotonic() + seconds
        while True:
            pending = await self.questions()
            if pending:
                return pending[0]
            check(time.monotonic() < deadline, "no question appeared on the page")
            await asyncio.sleep(0.05)

    async def reply(self, question_id, body, status=200):
        r = await self.http.post(
            f"{self.base}/approvals/questions/{question_id}/answer",
            json=body,
            headers={"Origin": self.base, "Accept": "application/json"},
        )
        check(r.status_code == status, f"reply {body}: {r.status_code} {r.text}")
        return r.json()

    async def answer(self, ask_id, answer):
        r = await self.http.post(
            f"{self.base}/approvals/pending/{ask_id}/answer",
            data={"answer": answer},
            headers={"Origin": self.base, "Accept": "application/json"},
        )
        check(r.status_code == 200, f"answer: {r.status_code} {r.text}")


async def answer_on_page(server, expect_resource):
    page = await server.page()
    ask = await page.wait_for_ask()
    resources = [i["resource"] for i in ask["prompt"]["items"]]
    check(any(expect_resource in r for r in resources), f"ask on the page: {ask}")
    await page.answer(ask["id"], "once")
    return page


async def web_answers(args):
    """No elicitation capability: the client cannot be asked, so the page is, at once."""
    server = Server(args)
    async with server.client() as client:
        answering = asyncio.create_task(answer_on_page(server, "touch made.txt"))
        started = time.monotonic()
        result = await client.call_tool("bash", {"command": "touch made.txt"})
        await answering
        check(not result.is_error, f"the page said once, the call must run: {text_of(result)!r}")
        check(os.path.exists(os.path.join(args.root, "made.txt")), "made.txt was not created")
        check(time.monotonic() - started < 20, "the page must be asked at once, not after a timeout")


async def client_first(args):
    """The client answers first; with escalate_after = 30 the page is never asked."""
    server = Server(args)
    page_seen = []

    async def callback(context, params):
        page = await server.page()
        page_seen.append(await page.pending())
        return types.ElicitResult(action="accept", content={"decision": "once"})

    async with server.client(elicitation_callback=callback) as client:
        result = await client.call_tool("bash", {"command": "touch first.txt"})
        check(not result.is_error, f"the client said once: {text_of(result)!r}")
        check(page_seen == [[]], f"the page must not have been asked while the client was: {page_seen}")


async def escalates_to_web(args):
    """The client is asked and sits on the form; after escalate_after (1 s) the
    page is asked too and answers; the client's form is withdrawn."""
    server = Server(args)
    answered = asyncio.Event()
    asked_at = []

    async def callback(context, params):
        asked_at.append(time.monotonic())
        page = await server.page()
        check(await page.pending() == [], "the page must wait for its turn")
        try:
            await asyncio.wait_for(answered.wait(), 30)
        except asyncio.TimeoutError:
            fail("the page was never asked")
        return types.ElicitResult(action="decline")

    async def page_answers():
        page = await server.page()
        ask = await page.wait_for_ask(30)
        check(asked_at, "the client must be asked before the page")
        # Measured from the call's start: the server asks the client at or
        # after it, so the page must come at least 1 s after it. (From the
        # client's callback the gap shrinks by however late a loaded machine
        # runs the callback; the callback checks the page was empty then.)
        waited = time.monotonic() - call_started[0]
        check(waited >= 1.0, f"the page was asked {waited:.2f}s after the call; escalate_after is 1 s")
        await page.answer(ask["id"], "once")
        answered.set()

    call_started = []
    async with server.client(elicitation_callback=callback) as client:
        task = asyncio.create_task(page_answers())
        call_started.append(time.monotonic())
        result = await client.call_tool("bash", {"command": "touch late.txt"})
        await task
        check(not result.is_error, f"the page said once: {text_of(result)!r}")
        check(os.path.exists(os.path.join(args.root, "late.txt")), "late.txt was not created")


async def only_mcp_denies(args):
    """channels = ["mcp"] and a client without elicitation: nobody can be asked,
    so the ask is denied at once, and the page never shows it."""
    server = Server(args)
    async with server.client() as client:
        started = time.monotonic()
        result = await client.call_tool("bash", {"command": "touch never.txt"})
        check(result.is_error, f"must be denied: {result}")
        text = text_of(result)
        check("no one could be asked" in text and "elicitation capability" in text, f"deny text: {text!r}")
        check(time.monotonic() - started < 20, "denied at once, not after the ask timeout")
        check(not os.path.exists(os.path.join(args.root, "never.txt")), "never.txt must not exist")
        page = await server.page()
        check(await page.pending() == [], "the page is not a channel here")


async def order_reloads(args):
    """The order is read at each ask: after the config changes, the next ask
    goes to the page."""
    server = Server(args)
    config = os.path.join(os.environ["HOME"], ".config", "toolgate", "config.toml")
    async with server.client() as client:
        first = await client.call_tool("bash", {"command": "touch one.txt"})
        check(first.is_error and "no one could be asked" in text_of(first), f"first: {text_of(first)!r}")
        with open(config, "w") as f:
            f.write('[approvals]\nchannels = ["mcp", "web"]\n')
        deadline = time.monotonic() + 20
        while "policy reloaded" not in server.stderr():
            check(time.monotonic() < deadline, f"no reload: {server.stderr()!r}")
            await asyncio.sleep(0.1)
        answering = asyncio.create_task(answer_on_page(server, "touch two.txt"))
        second = await client.call_tool("bash", {"command": "touch two.txt"})
        await answering
        check(not second.is_error, f"the page said once: {text_of(second)!r}")


QUESTIONS = [
    {"question": "Which database should the service use?", "options": ["sqlite", "postgres"]},
    {"question": "What should the table be called?"},
]


async def question_by_elicitation(args):
    """`question` goes to the client as a form; its answers come back in order."""
    server = Server(args)
    forms = []

    async def callback(context, params):
        forms.append(params)
        return types.ElicitResult(
            action="accept", content={"answer_1": "postgres", "answer_2": "  accounts "}
        )

    async with server.client(elicitation_callback=callback) as client:
        result = await client.call_tool("question", {"questions": QUESTIONS})
        check(not result.is_error, f"question failed: {text_of(result)!r}")
        check(len(forms) == 1, f"one form for both questions, got {len(forms)}")
        form = forms[0]
        check("Which database" in form.message and "table be called" in form.message, f"message: {form.message!r}")
        props = form.requested_schema["properties"]
        choices = [c["const"] for c in props["answer_1"]["oneOf"]]
        check(choices == ["sqlite", "postgres"], f"choices: {choices}")
        check(props["answer_2"]["title"] == "What should the table be called?", f"answer_2: {props['answer_2']}")
        answers = [a["answer"] for a in result.structured_content["answers"]]
        check(answers == ["postgres", "accounts"], f"answers: {result.structured_content}")
        check("A: postgres" in text_of(result), f"text: {text_of(result)!r}")


async def question_over_http(args):
    """`question` under `serve`: the HTTP client answers the form."""
    async def callback(context, params):
        return types.ElicitResult(action="accept", content={"answer_1": "sqlite", "answer_2": "users"})

    async with HttpServer(args) as server:
        async with server.client(elicitation_callback=callback) as client:
            result = await client.call_tool("question", {"questions": QUESTIONS})
            check(not result.is_error, f"question failed: {text_of(result)!r}")
            answers = [a["answer"] for a in result.structured_content["answers"]]
            check(answers == ["sqlite", "users"], f"answers: {result.structured_content}")


async def question_in_own_words(args):
    """The free-text field beats the choice."""
    server = Server(args)

    async def callback(context, params):
        return types.ElicitResult(
            action="accept",
            content={"answer_1": "sqlite", "answer_1_other": "duckdb", "answer_2": "t"},
        )

    async with server.client(elicitation_callback=callback) as client:
        result = await client.call_tool("question", {"questions": QUESTIONS})
        answers = [a["answer"] for a in result.structured_content["answers"]]
        check(answers == ["duckdb", "t"], f"answers: {result.structured_content}")


async def question_declined(args):
    """Declining the form is a tool error the model can read."""
    server = Server(args)

    async def callback(context, params):
        return types.ElicitResult(action="decline")

    async with server.client(elicitation_callback=callback) as client:
        result = await client.call_tool("question", {"questions": QUESTIONS})
        check(result.is_error, f"declined must be an error: {result}")
        check("declined to answer" in text_of(result), f"text: {text_of(result)!r}")


async def question_bad_answer(args):
    """A choice that was not offered is an error naming it; nothing is made up.
    (The config lists only the client, so the page does not take over.)"""
    server = Server(args)

    async def callback(context, params):
        return types.ElicitResult(action="accept", content={"answer_1": "mysql", "answer_2": "t"})

    async with server.client(elicitation_callback=callback) as client:
        result = await client.call_tool("question", {"questions": QUESTIONS})
        check(result.is_error, f"a bad answer must be an error: {result}")
        text = text_of(result)
        check("\"mysql\" is not one of the options of question 1" in text, f"text: {text!r}")


async def question_on_web(args):
    """A client without elicitation: the question goes to the page, where a
    person answers over HTTP as the page's script does; a wrong number of
    answers is refused first and answers nothing."""
    server = Server(args)

    async def answer_on_page():
        page = await server.page()
        asked = await page.wait_for_question()
        texts = [q["question"] for q in asked["questions"]]
        check(texts == [q["question"] for q in QUESTIONS], f"questions on the page: {asked}")
        check(asked["questions"][0]["options"] == ["sqlite", "postgres"], f"options: {asked}")
        refused = await page.reply(asked["id"], {"answers": ["postgres"]}, status=400)
        check("2 question(s) but 1 answer(s)" in refused["error"], f"refused: {refused}")
        check(len(await page.questions()) == 1, "a refused reply must answer nothing")
        await page.reply(asked["id"], {"answers": ["postgres", " accounts "]})
        check(await page.questions() == [], "an answered question leaves the page")

    async with server.client() as client:
        answering = asyncio.create_task(answer_on_page())
        result = await client.call_tool("question", {"questions": QUESTIONS})
        await answering
        check(not result.is_error, f"question failed: {text_of(result)!r}")
        answers = [a["answer"] for a in result.structured_content["answers"]]
        check(answers == ["postgres", "accounts"], f"answers: {result.structured_content}")
        check("A: postgres" in text_of(result), f"text: {text_of(result)!r}")


async def question_declined_on_web(args):
    """Declining on the page is a tool error carrying the reason."""
    server = Server(args)

    async def decline_on_page():
        page = await server.page()
        asked = await page.wait_for_question()
        await page.reply(asked["id"], {"decline": True, "message": "decide it yourself"})

    async with server.client() as client:
        declining = asyncio.create_task(decline_on_page())
        result = await client.call_tool("question", {"questions": QUESTIONS})
        await declining
        check(result.is_error, f"declined must be an error: {result}")
        text = text_of(result)
        check("declined to answer: decide it yourself" in text, f"text: {text!r}")


async def question_no_channel(args):
    """A client without elicitation, the page off (--no-web) and no terminal:
    the tool fails saying no channel can ask, with each channel's reason."""
    server = Server(args)
    async with server.client() as client:
        result = await client.call_tool("question", {"questions": QUESTIONS})
        check(result.is_error, f"must fail: {result}")
        text = text_of(result)
        check("no channel can ask the user" in text, f"text: {text!r}")
        check("mcp: no MCP client with the elicitation capability" in text, f"text: {text!r}")
        check("web: the approval page is off (--no-web)" in text, f"text: {text!r}")
        check("terminal: no terminal to ask on" in text, f"the terminal must be tried last: {text!r}")


SCENARIOS = {
    "question-over-http": question_over_http,
    "order-reloads": order_reloads,
    "question-by-elicitation": question_by_elicitation,
    "question-in-own-words": question_in_own_words,
    "question-declined": question_declined,
    "question-bad-answer": question_bad_answer,
    "question-no-channel": question_no_channel,
    "question-on-web": question_on_web,
    "question-declined-on-web": question_declined_on_web,
    "web-answers": web_answers,
    "client-first": client_first,
    "escalates-to-web": escalates_to_web,
    "only-mcp-denies": only_mcp_denies,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--toolgate", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--mode", default="legacy")
    parser.add_argument("--server-arg", action="append", help="an extra argument for `toolgate mcp`")
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    asyncio.run(SCENARIOS[args.scenario](args))
    print(f"ok: {args.scenario}")


if __name__ == "__main__":
    main()
