"""The owners of model calls and of run folders: nothing goes around them.

- No package-level import cycle among the core packages, and no module outside ``backends/`` imports the
  response cache, the data-use guard or the retry loop (an AST scan of the sources).
- Every model call of every caller — a run, a side model (captioner), the LLM judge, a family's judge
  pass, a builder's text step — goes through a `ModelSession` (spied on here).
- Only the run folder's owner (``runs.py``) and the benchmark folder's (``benchmark.py``) name their files: no
  other module spells ``predictions.jsonl``, ``manifest.json`` … or imports their names (an AST scan).
"""

from __future__ import annotations

import ast
import asyncio
import contextvars
from collections import defaultdict
from pathlib import Path

import pytest

from helpers.eltlm import make_open_benchmark, make_open_run
from helpers.tiny import make_tiny_benchmark
from medtemporal.backends.base import Backend, Message, Request, Response, RetryableError, TextPart
from medtemporal.backends.session import DataUse, ModelSession, RetryPolicy, complete
from medtemporal.runner import run
from medtemporal.scoring import score_run
from medtemporal.scoring.judge import Judge

SRC = Path(__file__).resolve().parents[1] / "src" / "medtemporal"
CORE = ("audit", "backends", "cli", "interop", "phantoms", "protocols", "report", "retrieval", "runner", "scoring",
        "sources", "prompts")
CALL_PLUMBING = ("medtemporal.backends.cache", "medtemporal.backends.guard", "medtemporal.backends.retry")


def _imports(path: Path) -> set[str]:
    """The medtemporal modules ``path`` imports (anywhere in the file, function-local imports included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return {n for n in names if n.startswith("medtemporal")}


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in CORE else None


def test_no_import_cycle_among_core_packages():
    edges: dict[str, set[str]] = defaultdict(set)
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).parts
        if rel[0] not in CORE:
            continue
        for module in _imports(path):
            target = _package(module)
            if target and target != rel[0]:
                edges[rel[0]].add(target)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges[start])

    cycles = sorted(f"{a} -> {b} -> … -> {a}" for a in list(edges) for b in sorted(edges[a]) if reaches(b, a, {b}))
    assert not cycles, cycles


def test_only_the_model_call_owner_imports_cache_guard_and_retry():
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        if rel.parts[0] == "backends":
            continue
        used = {m for m in _imports(path) for p in CALL_PLUMBING if m == p or m.startswith(p + ".")}
        if used:
            offenders.append(f"{rel}: {sorted(used)}")
    assert not offenders, offenders


FOLDER_FILES = {"runs.py": ("CONFIG", "PREDICTIONS", "JUDGEMENTS", "SCORES", "LOCK"),
                "benchmark.py": ("ITEMS", "MANIFEST")}
"""Each owner module → the names of its file-name constants."""
FILE_NAMES = ("config.json", "predictions.jsonl", "judgements.jsonl", "scores.json", ".lock", "items.jsonl",
              "manifest.json")
NOT_OURS = {("hf_models.py", "config.json")}
"""(module, file name) where the name is another folder's file: a Hugging Face model's ``config.json``
(`medtemporal.hf_models.MODEL_CONFIG`, which other modules import)."""


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes of a module and its classes and functions."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def test_only_the_folder_owners_name_the_run_folder_and_benchmark_files():
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        if rel in FOLDER_FILES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("medtemporal.runs", "medtemporal.benchmark"):
                owned = FOLDER_FILES[node.module.removeprefix("medtemporal.") + ".py"]
                offenders += [f"{rel}: imports {a.name}" for a in node.names if a.name in owned]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                name = node.value.rsplit("/", 1)[-1]
                if name in FILE_NAMES and (rel, name) not in NOT_OURS:
                    offenders.append(f"{rel}: spells {node.value!r}")
    assert not offenders, offenders


_INSIDE = contextvars.ContextVar("inside_session", default=False)


@pytest.fixture
def spy(monkeypatch):
    """Record every session opened (by what it guards) and fail any backend call made outside `ModelSession.ask`."""
    opened: list[tuple[str, DataUse]] = []
    outside: list[str] = []
    called: list[str] = []
    original_init, original_ask = ModelSession.__init__, ModelSession.ask

    def init(self, backend, **kwargs):
        original_init(self, backend, **kwargs)
        opened.append((backend.uri, kwargs["use"]))
        generate = backend.generate

        async def guarded(request):
            (called if _INSIDE.get() else outside).append(backend.uri)
            return await generate(request)

        backend.generate = guarded

    async def ask(self, request, **kwargs):
        token = _INSIDE.set(True)
        try:
            return await original_ask(self, request, **kwargs)
        finally:
            _INSIDE.reset(token)

    monkeypatch.setattr(ModelSession, "__init__", init)
    monkeypatch.setattr(ModelSession, "ask", ask)
    yield opened, called
    assert not outside, f"backend calls outside a ModelSession: {outside}"


def test_a_run_and_its_side_model_go_through_sessions(tmp_path, spy):
    opened, called = spy
    bench = make_tiny_benchmark(tmp_path)
    run(bench, "baseline:constant-A", tmp_path / "r", protocol="caption-then-reason",
        protocol_options={"captioner": "baseline:constant-A patchy opacity"}, progress=False, no_cache=True)
    assert {uri for uri, _ in opened} == {"baseline:constant-A", "baseline:constant-A patchy opacity"}
    assert set(called) == {uri for uri, _ in opened}  # both models were asked, each inside its session
    verdicts = {(use.benchmark, use.licence() if callable(use.licence) else use.licence, use.allow_remote)
                for _, use in opened}  # a run's licence comes as a function, judged when the guard needs it
    assert verdicts == {("tiny", "synthetic", False)}


def test_the_judge_goes_through_a_session(tmp_path, spy):
    opened, called = spy
    bench = make_open_benchmark(tmp_path, n=4)
    out = make_open_run(bench, tmp_path / "r")
    opened.clear()
    called.clear()
    score_run(out, judge=Judge("scripted-judge:overlap"), judge_options={"no_cache": True, "progress": False})
    assert [uri for uri, _ in opened] == ["scripted-judge:overlap"]
    assert called == ["scripted-judge:overlap"] * 12  # answer, reference and empty of each of 4 items


def test_a_builder_text_step_goes_through_a_session(tmp_path, spy):
    opened, called = spy
    request = Request((Message("user", (TextPart("Word this."),)),))
    texts = complete("baseline:constant-Worded.", [request, request], use=DataUse("temmed", "credentialed"),
                     desc="questions", no_cache=True)
    assert texts == ["Worded.", "Worded."] and opened[0][1].licence == "credentialed"
    assert called == ["baseline:constant-Worded."] * 2


class _Flaky(Backend):
    """Fails its first call with a transient error, then answers "X"; cacheable like a real model."""

    def __init__(self) -> None:
        super().__init__(uri="flaky:x")
        self.calls = 0

    async def generate(self, request: Request) -> Response:
        self.calls += 1
        if self.calls == 1:
            raise RetryableError("busy", reason="http_503")
        return Response("X")


def test_the_session_retries_then_caches(tmp_path):
    backend = _Flaky()
    session = ModelSession(backend, use=DataUse("tiny", "synthetic"), cache_path=tmp_path / "c.sqlite",
                           retry=RetryPolicy(base_delay_s=0))
    request = Request((Message("user", (TextPart("Q"),)),))

    async def twice():
        try:
            return await session.ask(request), await session.ask(request)
        finally:
            await session.aclose()

    first, second = asyncio.run(twice())
    assert backend.calls == 2 and session.calls == 2 and session.cache_hits == 1
    assert not first.cached and second.cached and second.response.text == "X"
