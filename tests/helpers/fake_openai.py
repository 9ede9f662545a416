"""A real OpenAI-compatible chat server on loopback, with injectable faults.

Tests and benches point the real `openai` client at it. It answers
``POST /v1/chat/completions`` with a letter chosen from the request's text
(deterministic) or a scripted reply (``replies``: the first ``[match, text]`` whose match is in the text), and can inject latency, 429 with ``Retry-After``, 500,
400, timeouts (it hangs), dropped connections, malformed JSON, a choice
without a message, empty or null content, a reply cut off at the token limit
(``finish_reason: length``), and a 401 or a 200 reply that echoes the ``Authorization``
header (to prove keys are redacted).

With ``echo="line"`` or ``echo="lines"`` it plays a model that copies the
choices it was shown instead of answering: the option lines of the request
(``A. T1 → T2``, ``B: ``…; or a bracketed list after "options", ``[Yes, No]``)
on one line or one per line (`echo_reply`).

With ``follow=BENCH`` (a benchmark folder) it plays the scripted instruction follower of
``follower.py``: the reply is a function of the request's text alone, so two tools that send the same
text get the same reply.

With ``sample=True`` a request with a temperature above 0 gets a random
letter, drawn from the request's ``seed`` when it has one (the same text and
seed give the same letter) and from fresh randomness when it has none, as a
sampling model would.

Requests are counted per *item key*: the text of the request's text parts,
joined by newlines (each test item has a distinct question, so
``item.question in key`` finds an item's count). Faults apply to the first
``times`` attempts of each item key whose text contains ``match``.

Start it in a thread (`FakeOpenAI.start()`) or as a separate process
(`FakeOpenAI.spawn()`, or ``python fake_openai.py --port 0``); either way it
is driven over HTTP (``/_config``, ``/_stats``, ``/_reset``) and binds only
to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import io
import json
import random
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

HOST = "127.0.0.1"
TEST_API_KEY = "sk-test-SECRET-5f1c9a7e3b"
"""A made-up key for tests that check keys never leak."""
FAULTS = ("429", "500", "timeout", "drop", "malformed", "no_message", "empty", "null", "length", "401_echo", "400",
          "echo_auth")


@dataclass
class State:
    """What the server is told to do and what it has seen."""

    latency: float = 0.0
    model: str = "fake-vlm"
    faults: list[dict[str, Any]] = field(default_factory=list)
    hang_s: float = 30.0
    counts: Counter[str] = field(default_factory=Counter)
    answered: Counter[str] = field(default_factory=Counter)
    inflight: int = 0
    max_inflight: int = 0
    epoch: int = 0
    """Bumped by a reset, so requests still hanging from before it are not counted in flight."""
    images: list[list[tuple[int, int]]] = field(default_factory=list)
    """Size (w, h) of every image of every request, in arrival order (when ``record_images``)."""
    record_images: bool = True
    auth: set[str] = field(default_factory=set)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    keep_bodies: bool = False
    sample: bool = False
    """Answer requests above temperature 0 at random (seeded by the request's ``seed`` when it has one)."""
    replies: list[list[str]] = field(default_factory=list)
    """``[match, text]`` pairs: a request whose text contains ``match`` (the first that does) is answered ``text``."""
    echo: str = ""
    """``"line"`` / ``"lines"``: answer with the options the request showed, on one line / one per line."""
    follow: str = ""
    """A benchmark folder: answer as `follower.Follower` does for its items."""
    first_at: float | None = None
    """`time.monotonic` (one clock for every process of the machine) when the first request arrived."""
    last_at: float | None = None
    """`time.monotonic` when the latest reply was sent."""
    inflight_area: float = 0.0
    """Requests in flight integrated over time since ``first_at`` (their mean is this over ``last_at - first_at``)."""
    changed_at: float = 0.0

    def flight(self, step: int) -> None:
        """Count a request in (``step`` 1) or out (-1) of flight, keeping the time integral."""
        now = time.monotonic()
        if self.first_at is None:
            self.first_at = self.changed_at = now
        self.inflight_area += self.inflight * (now - self.changed_at)
        self.changed_at = now
        self.inflight += step
        if step < 0:
            self.last_at = now


def item_key(body: dict[str, Any]) -> str:
    """The text of every text part of every message, joined by newlines."""
    texts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "text":
                texts.append(part["text"])
    return "\n".join(texts)


def answer_for(key: str) -> str:
    """A deterministic letter A-E for a request text."""
    return "ABCDE"[hashlib.sha256(key.encode()).digest()[0] % 5]


_OPTION_LINE = re.compile(r"^[ \t]*([A-Z])([.:)])[ \t]?(.*?)[ \t]*$", re.M)
_OPTION_LIST = re.compile(r"options?[^\[\n]{0,40}\[([^\]\n]+)\]", re.I)


def echo_reply(key: str, mode: str) -> str:
    """The choices a request showed, as a model that copies them writes them: the option lines
    (``A. Yes``) joined by spaces (``mode="line"``) or newlines (``"lines"``); else the items of a
    bracketed option list (``[Yes, No]`` → ``Yes, No``); else the request text itself."""
    lines = [f"{m.group(1)}{m.group(2)} {m.group(3)}".rstrip() for m in _OPTION_LINE.finditer(key)]
    if lines:
        return (" " if mode == "line" else "\n").join(lines)
    listed = _OPTION_LIST.search(key)
    return listed.group(1) if listed else key


def sampled_answer(key: str, seed: int | None) -> str:
    """A letter A-E drawn at random; from ``(key, seed)`` alone when ``seed`` is given."""
    if seed is None:
        return random.choice("ABCDE")
    return random.Random(hashlib.sha256(f"{key}\0{seed}".encode()).digest()).choice("ABCDE")


def _follower(bench: str) -> Any:
    """The instruction follower of a benchmark folder (made once per folder)."""
    if bench not in _FOLLOWERS:
        try:
            from helpers.follower import Follower, read_items
        except ImportError:  # run as a script: follower.py is beside this file
            from follower import Follower, read_items
        _FOLLOWERS[bench] = Follower(read_items(bench))
    return _FOLLOWERS[bench]


_FOLLOWERS: dict[str, Any] = {}


def _image_sizes(body: dict[str, Any]) -> list[tuple[int, int]]:
    from PIL import Image

    sizes = []
    for message in body.get("messages", []):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                with Image.open(io.BytesIO(base64.b64decode(data))) as im:
                    sizes.append(im.size)
    return sizes


def _completion(state: State, content: str | None, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": state.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
    }


def make_app(state: State) -> web.Application:
    """The aiohttp application serving ``state``."""

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        key = item_key(body)
        attempt = state.counts[key]
        state.counts[key] += 1
        state.auth.add(request.headers.get("Authorization", ""))
        if state.record_images:
            state.images.append(_image_sizes(body))
        if state.keep_bodies:
            state.bodies.append(body)
        epoch = state.epoch
        state.flight(1)
        state.max_inflight = max(state.max_inflight, state.inflight)
        try:
            return await _respond(request, key, attempt, body)
        finally:
            if state.epoch == epoch:
                state.flight(-1)

    async def _respond(request: web.Request, key: str, attempt: int, body: dict[str, Any]) -> web.StreamResponse:
        if state.latency:
            await asyncio.sleep(state.latency)
        for fault in state.faults:
            if fault.get("match", "") in key and attempt < fault.get("times", 1):
                kind = fault["kind"]
                if kind == "429":
                    headers = {"Retry-After": str(fault.get("retry_after", 1))}
                    return web.json_response({"error": {"message": "slow down"}}, status=429, headers=headers)
                if kind == "500":
                    return web.json_response({"error": {"message": "internal"}}, status=500)
                if kind == "400":
                    return web.json_response({"error": {"message": "bad request"}}, status=400)
                if kind == "401_echo":
                    echo = {"error": {"message": f"invalid key {request.headers.get('Authorization')}"}}
                    return web.json_response(echo, status=401)
                if kind == "echo_auth":  # a reply that quotes the Authorization header (and a letter, to be scored)
                    state.answered[key] += 1
                    echo = f"You sent {request.headers.get('Authorization')}. The answer is {answer_for(key)}."
                    return web.json_response(_completion(state, echo))
                if kind == "timeout":
                    await asyncio.sleep(state.hang_s)
                    break
                if kind == "drop":
                    assert request.transport is not None
                    request.transport.abort()
                    return web.Response(status=500)
                if kind == "malformed":
                    return web.Response(text='{"id": "x", "choices": [', content_type="application/json")
                if kind == "no_message":  # valid JSON, but not a completion
                    return web.json_response({"id": "x", "choices": [{"index": 0, "finish_reason": "stop"}]})
                if kind == "empty":
                    return web.json_response(_completion(state, ""))
                if kind == "null":
                    return web.json_response(_completion(state, None))
                if kind == "length":  # an answer, then cut off at the token limit
                    state.answered[key] += 1
                    cut = f"The answer is {answer_for(key)}. Because the"
                    return web.json_response(_completion(state, cut, "length"))
        state.answered[key] += 1
        scripted = next((text for match, text in state.replies if match in key), None)
        if scripted is not None:
            return web.json_response(_completion(state, scripted))
        if state.echo:
            return web.json_response(_completion(state, echo_reply(key, state.echo)))
        if state.follow:
            return web.json_response(_completion(state, _follower(state.follow).reply(key)))
        sampled = state.sample and (body.get("temperature") or 0) > 0
        letter = sampled_answer(key, body.get("seed")) if sampled else answer_for(key)
        return web.json_response(_completion(state, f"The answer is {letter}."))

    async def config(request: web.Request) -> web.Response:
        update = await request.json()
        for name, value in update.items():
            if name not in ("latency", "model", "faults", "hang_s", "keep_bodies", "record_images", "sample",
                            "replies", "echo", "follow"):
                raise web.HTTPBadRequest(text=f"unknown setting {name}")
            setattr(state, name, value)
        unknown = [f["kind"] for f in state.faults if f["kind"] not in FAULTS]
        if unknown:
            raise web.HTTPBadRequest(text=f"unknown fault {unknown}")
        return web.json_response({"ok": True})

    async def stats(request: web.Request) -> web.Response:
        return web.json_response(
            {
                "counts": dict(state.counts),
                "answered": dict(state.answered),
                "max_inflight": state.max_inflight,
                "images": state.images,
                "auth": sorted(state.auth),
                "bodies": state.bodies,
                "first_at": state.first_at,
                "last_at": state.last_at,
                "mean_inflight": (state.inflight_area / (state.last_at - state.first_at)
                                  if state.first_at is not None and state.last_at is not None
                                  and state.last_at > state.first_at else None),
            }
        )

    async def reset(request: web.Request) -> web.Response:
        fresh = State()
        for name in ("counts", "answered", "images", "auth", "bodies", "max_inflight", "inflight", "first_at", "last_at",
                     "inflight_area"):
            setattr(state, name, getattr(fresh, name))
        state.epoch += 1
        state.faults, state.latency, state.sample, state.replies, state.echo, state.follow = [], 0.0, False, [], "", ""
        return web.json_response({"ok": True})

    app = web.Application(client_max_size=256 * 1024**2)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/_config", config)
    app.router.add_get("/_stats", stats)
    app.router.add_post("/_reset", reset)
    return app


class FakeOpenAI:
    """Handle on a running fake server (thread or process), driven over HTTP."""

    def __init__(self, port: int, stop: Any) -> None:
        self.port = port
        self._stop = stop

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def uri(self, model: str = "fake-vlm") -> str:
        """The medtemporal model URI of this server."""
        return f"openai+{self.base_url}:{model}"

    def _call(self, path: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        data = None if payload is None else json.dumps(payload).encode()
        url = f"http://{HOST}:{self.port}{path}"
        req = urllib.request.Request(url, data=data, method="GET" if data is None else "POST")
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def configure(self, **settings: Any) -> None:
        """Set latency, model, faults (dicts: kind, match, times, retry_after), hang_s, keep_bodies, record_images."""
        self._call("/_config", settings)

    def stats(self) -> dict[str, Any]:
        """Counts per item key, answered counts, image sizes, auth headers, bodies."""
        return self._call("/_stats")

    def reset(self) -> None:
        """Forget counts and faults."""
        self._call("/_reset", {})

    def count(self, text: str) -> int:
        """Requests received for the item key containing ``text`` (summed)."""
        return sum(n for key, n in self.stats()["counts"].items() if text in key)

    def close(self) -> None:
        self._stop()

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def start(cls, **settings: Any) -> FakeOpenAI:
        """Serve in a daemon thread of this process."""
        ready: dict[str, Any] = {}
        started = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            runner = web.AppRunner(make_app(State(**settings)), access_log=None, shutdown_timeout=1.0)
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, HOST, 0, backlog=512)
            loop.run_until_complete(site.start())
            ready["port"] = runner.addresses[0][1]
            ready["loop"] = loop
            started.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())
            hung = asyncio.all_tasks(loop)  # requests still hanging after the shutdown timeout
            for task in hung:
                task.cancel()
            if hung:
                loop.run_until_complete(asyncio.gather(*hung, return_exceptions=True))
            loop.close()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        if not started.wait(10):
            raise RuntimeError("fake OpenAI server did not start")

        def stop() -> None:
            ready["loop"].call_soon_threadsafe(ready["loop"].stop)
            thread.join(10)

        return cls(ready["port"], stop)

    @classmethod
    def spawn(cls, **settings: Any) -> FakeOpenAI:
        """Serve in a separate Python process (survives clients being killed; own CPU)."""
        proc = subprocess.Popen(
            [sys.executable, __file__, "--port", "0", "--settings", json.dumps(settings)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            proc.kill()
            raise RuntimeError(f"fake OpenAI server did not start: {line!r}")

        def stop() -> None:
            proc.terminate()
            proc.wait(10)

        return cls(int(line.split()[1]), stop)


def main() -> None:
    """Serve until killed; prints ``PORT <n>`` once listening."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--settings", default="{}", help="JSON of State settings (latency, model, faults)")
    args = p.parse_args()

    async def serve() -> None:
        runner = web.AppRunner(make_app(State(**json.loads(args.settings))), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, HOST, args.port, backlog=512).start()
        print(f"PORT {runner.addresses[0][1]}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
