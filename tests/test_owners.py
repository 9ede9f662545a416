"""The owners of model calls and of run folders: nothing goes around them.

- No import cycle among any modules (type-hint and function-level imports counted), and no module outside
  ``backends/`` imports the response cache, the data-use guard or the retry loop (an AST scan of the sources).
- Every model call of every caller — a run, a side model (captioner), the LLM judge, a family's judge
  pass, a builder's text step — goes through a `ModelSession` (spied on here).
- Only the run folder's owner (``runs.py``) and the benchmark folder's (``benchmark.py``) name their files: no
  other module spells ``predictions.jsonl``, ``manifest.json`` … or imports their names (an AST scan).
"""

from __future__ import annotations

import ast
import asyncio
import contextvars
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


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _module_graph() -> dict[str, set[str]]:
    """Module → the modules it imports, every import counted: top level, in functions, under ``TYPE_CHECKING``.
    ``from a.b import c`` imports module ``a.b.c`` where that is a module, else a name of ``a.b``."""
    modules = _modules()

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                               else owner(node.module) for a in node.names)
            elif isinstance(node, ast.Import):
                targets.update(owner(a.name) for a in node.names)
        graph[name] = {t for t in targets if t and t != name and t.startswith("medtemporal")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_among_any_modules():
    """Not between packages only: every module, with the imports made for type hints and inside functions."""
    graph = _module_graph()
    assert len(graph) > 200 and "medtemporal.contract" in graph["medtemporal.scoring.outcomes"]
    assert not _cycles(graph), _cycles(graph)


def test_the_cycle_guard_sees_a_type_hint_import():
    graph = _module_graph()
    graph["medtemporal.contract"] = graph["medtemporal.contract"] | {"medtemporal.report.family"}  # the old hint
    assert any({"medtemporal.contract", "medtemporal.report.family"} <= set(c) for c in _cycles(graph))


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
