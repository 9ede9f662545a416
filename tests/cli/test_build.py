"""`medtemporal build NAME --help` for every registered benchmark, and the shared options."""

from __future__ import annotations

import pytest

from medtemporal import registry
from medtemporal.cli import main


@pytest.mark.parametrize("name", registry.names("benchmark"))
def test_every_registered_benchmark_has_a_build_help(name, capsys):
    with pytest.raises(SystemExit) as done:
        main(["build", name, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert f"medtemporal build {name}" in out and "--out DIR" in out and "--seed" in out


def test_build_needs_a_benchmark_name(capsys):
    with pytest.raises(SystemExit) as done:
        main(["build"])
    assert done.value.code == 2
    assert "required: BENCHMARK" in capsys.readouterr().err


def test_text_model_that_cannot_write_text_fails_in_one_sentence(tmp_path, capsys):
    from medtemporal.phantoms.cxr import write_cxr_phantoms

    phantom = write_cxr_phantoms(tmp_path / "data", patients=12, seed=1, images=False)
    code = main(["build", "mi-cxr", "--mimic-cxr-jpg", str(phantom.mimic_cxr_jpg), "--qba", str(phantom.qba),
                 "--out", str(tmp_path / "b"), "--no-verify-images", "--max-items", "60",
                 "--llm", "baseline:random"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "baseline:random" in err
    assert not (tmp_path / "b").exists()


def test_items_repeated_exactly_are_kept_once_counted_and_said(tmp_path, monkeypatch, capsys):
    """Issue 32 §3, for every family: an item given twice (same content, same id) would be scored twice."""
    from helpers.tiny import tiny_items

    from medtemporal.benchmark import Manifest, load
    from medtemporal.contract import BenchmarkSpec

    monkeypatch.setattr(registry, "_ENTRIES", {kind: dict(entries) for kind, entries in registry._ENTRIES.items()})
    items = tiny_items(3)
    registry.register("benchmark", "twice")(BenchmarkSpec(
        name="twice", version="1", licence="synthetic", description="items given twice", add_arguments=lambda p: None,
        build=lambda args: ([*items, items[1], *items], Manifest(benchmark="twice", version="1", licence="synthetic"))))
    assert main(["build", "twice", "--out", str(tmp_path / "b"), "--no-audit"]) == 0
    bench = load(tmp_path / "b")
    assert [i.id for i in bench.items] == [i.id for i in items] and bench.manifest.exclusions == {"repeated_item": 4}
    assert "4 item(s) repeated an earlier one exactly" in capsys.readouterr().err
