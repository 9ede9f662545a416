"""Retrieval with a learned image–text encoder: the default for real data, all of Table 5's retrievers, and the
encoder named next to every RAG number in the TemMed report."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.temmed import build_args, temmed_data  # noqa: F401 (fixture)
from helpers.tiny_clip import tiny_clip

from medtemporal.benchmark import load
from medtemporal.benchmarks.temmed.refs import LEARNED_EMBEDDER, PHANTOM_EMBEDDER, default_embedder
from medtemporal.cli import main


def test_the_default_encoder_follows_the_licence() -> None:
    assert default_embedder("synthetic") == PHANTOM_EMBEDDER == "pixel"
    assert default_embedder("credentialed") == default_embedder("open") == LEARNED_EMBEDDER
    assert LEARNED_EMBEDDER == "clip:StanfordAIMI/XrayCLIP__vit-b-16__laion2b-s34b-b88k"


@pytest.mark.slow
def test_real_data_gets_every_retriever_and_reports_name_the_encoder(
    temmed_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    data = tmp_path / "chexpert"
    shutil.copytree(temmed_data, data)
    for stamp in data.rglob("phantom_manifest.json"):  # no longer a verified phantom: treated as credentialed
        stamp.unlink()
    capsys.readouterr()
    assert main(build_args(data, tmp_path / "default")) == 2  # the learned default, not cached, offline
    assert "retrieval encoder 'StanfordAIMI/XrayCLIP__vit-b-16__laion2b-s34b-b88k' is not in the Hugging Face cache " \
           "and HF_HUB_OFFLINE=1 forbids downloading it" in capsys.readouterr().err

    clip = tiny_clip(tmp_path / "clip")
    out = tmp_path / "bench"
    assert main(build_args(data, out, "--embedder", f"clip:{clip}")) == 0
    bench = load(out)
    assert bench.manifest.licence == "credentialed" and bench.manifest.config["embedder"] == f"clip:{clip}"
    assert bench.manifest.config["retrievers"] == ["image", "pairwise", "text"]
    for item in bench.items:
        expected = {"tfidf"} if item.task == "image_pair" else {"image", "pairwise", "text"}
        assert set(item.meta["retrieval"]) == expected

    runs = []
    for name, protocol, *options in (("direct", "direct"), ("mm", "rag-multimodal"),
                                     ("text", "rag-text", "--protocol-option", "retriever=text")):
        runs.append(tmp_path / name)
        assert main(["run", str(out), "--model", "baseline:random", "--protocol", protocol, *options, "--tasks",
                     "vqa", "--out", str(runs[-1]), "--no-progress"]) == 0
    assert main(["report", *map(str, runs), "--out", str(tmp_path / "report"), "--formats", "md"]) == 0
    tables = (tmp_path / "report" / "temmed_tables.md").read_text()
    assert "The paper's image and text encoders are learned but not named" in tables
    assert f"`clip:{clip}` (an encoder chosen with --embedder)" in tables
    assert "| + Multi-Modal RAG |" in tables and f"| pairwise · clip:{clip} |" in tables
    assert f"| text · clip:{clip} |" in tables  # the ablation table: image→text retrieval, Table 5's third row
