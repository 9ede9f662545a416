"""A third-party family from a temporary package, exactly as ``docs/adding-a-benchmark.md`` writes it:
its own folder with its own prompt, one registration line, then build, run and score with no core file touched."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from helpers.fake_openai import FakeOpenAI
from medtemporal import prompts, registry
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.prompts import PromptSet

DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-a-benchmark.md"
CORE_PROMPTS = Path(prompts.__file__).parent


def doc_files() -> dict[str, str]:
    """Path → text of every code block of the worked example (a block right after a line "`path`:")."""
    section = DOC.read_text(encoding="utf-8").split("## The smallest family", 1)[1].split("\n## The checklist", 1)[0]
    return dict(re.findall(r"^`([\w./-]+)`(?: of the package)?:\n\n```\w*\n(.*?)^```", section, re.M | re.S))


@pytest.fixture
def family(tmp_path, monkeypatch):
    """The doc's package written under ``tmp_path`` and imported; the registry as before afterwards."""
    files = doc_files()
    assert set(files) == {"visit_pairs/__init__.py", "visit_pairs/prompts/visit_pairs_question.txt", "pyproject.toml"}
    for name in ("visit_pairs/__init__.py", "visit_pairs/prompts/visit_pairs_question.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(files[name], encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.names("benchmark")  # the built-in entries first, so the snapshot holds them
    monkeypatch.setattr(registry, "_ENTRIES", {kind: dict(entries) for kind, entries in registry._ENTRIES.items()})
    monkeypatch.delitem(sys.modules, "visit_pairs", raising=False)
    importlib.import_module("visit_pairs")  # the registration line runs on import
    yield tmp_path
    sys.modules.pop("visit_pairs", None)


def _data(root: Path) -> tuple[Path, Path]:
    """A question file of three patients and their visit pairs (small PNGs)."""
    rng = np.random.default_rng(0)
    lines = []
    for k in range(3):
        paths = [f"p{k}/t{v}.png" for v in (1, 2)]
        for path in paths:
            (root / "images" / path).parent.mkdir(parents=True, exist_ok=True)
            Image.fromarray(rng.integers(0, 255, (16, 16), dtype=np.uint8)).save(root / "images" / path)
        lines.append(json.dumps({"patient": f"p{k}", "images": paths, "question": f"Did opacity {k} change?",
                                 "options": {"A": "new", "B": "resolved", "C": "unchanged"}, "answer": "ABC"[k]}))
    (root / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "questions.jsonl", root / "images"


def test_the_docs_entry_point_names_the_module():
    assert 'visit-pairs = "visit_pairs"' in doc_files()["pyproject.toml"]


def test_a_plugin_family_ships_its_prompt_builds_runs_and_scores(family, monkeypatch, capsys):
    core_before = sorted(p.name for p in CORE_PROMPTS.iterdir())
    source = prompts.templates()["visit_pairs_question"]
    assert source.owner == "visit-pairs" and source.path == family / "visit_pairs" / "prompts" / "visit_pairs_question.txt"
    assert main(["list", "prompt"]) == 0
    assert re.search(r"visit_pairs_question\s+visit-pairs", capsys.readouterr().out)

    questions, images = _data(family)
    bench = family / "bench"
    assert main(["build", "visit-pairs", "--questions", str(questions), "--images", str(images), "--out", str(bench)]) == 0
    assert json.loads((bench / "manifest.json").read_text())["licence"] == "credentialed"  # not a verified phantom

    baseline = family / "runs" / "baseline"
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(baseline), "--no-progress"]) == 0
    config = json.loads((baseline / "config.json").read_text())
    assert config["protocol"] == {"name": "direct", "options": {},
                                  "templates": {"visit_pairs_question": PromptSet().hash("visit_pairs_question")}}

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(family / "cache.sqlite"))
    model = family / "runs" / "model"
    with FakeOpenAI.start() as server:
        server.configure(keep_bodies=True, replies=[["opacity", "B"]])
        assert main(["run", str(bench), "--model", server.uri(), "--out", str(model), "--no-progress"]) == 0
        bodies = server.stats()["bodies"]
    assert len(bodies) == 3
    texts = [[part["text"] for part in body["messages"][-1]["content"] if part["type"] == "text"] for body in bodies]
    for text in texts:  # captions T1, T2, then the family's own prompt, header comment left out
        assert text[:2] == ["T1:", "T2:"]
        assert text[2].startswith("Compare the earlier image (T1) with the later image (T2) of the same patient.\n")
        assert "A. new\nB. resolved\nC. unchanged\nReply with the letter of one option." in text[2]
        assert "##" not in text[2]
    assert sorted(re.search(r"opacity \d", t[2]).group() for t in texts) == ["opacity 0", "opacity 1", "opacity 2"]

    assert main(["score", str(model)]) == 0
    scores = json.loads((model / "scores.json").read_text())
    overall = next(s for s in scores["scores"] if s["group"] == "overall" and s["metric"] == "accuracy")
    assert overall["n"] == 3 and overall["value"] == pytest.approx(1 / 3)  # every answer "B": right for p1 only
    assert sorted(p.name for p in CORE_PROMPTS.iterdir()) == core_before


def test_the_smallest_family_fails_the_check_on_its_demo_and_published_rows_only(family):
    """As the doc says: the least a family needs runs, but others rely on a demo and on the paper's rows."""
    from medtemporal.testing import check_family

    failed = {rule for rule, problem in check_family("visit-pairs").items() if problem}
    assert failed == {"demo", "published"}


def test_a_template_name_taken_twice_is_refused_naming_both_files(family):
    clash = family / "visit_pairs" / "prompts" / "mcq_direct.txt"
    clash.write_text("$question\n$options\n")
    with pytest.raises(InvalidInputError, match=r"Two prompt templates are named 'mcq_direct': .*prompts/mcq_direct\.txt "
                                        r"\(core\) and .*visit_pairs/prompts/mcq_direct\.txt \(visit-pairs\)"):
        PromptSet().text("mcq_direct")
    clash.unlink()
    assert PromptSet().text("visit_pairs_question")
