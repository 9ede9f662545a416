import json

import pytest

from medtemporal.benchmark import load
from medtemporal.errors import InvalidInputError
from helpers.tiny import make_tiny_benchmark


def test_save_and_load(tmp_path):
    path = make_tiny_benchmark(tmp_path)
    bench = load(path)
    assert len(bench.items) == 3
    assert bench.manifest.counts["answer"] == {"A": 1, "B": 1, "C": 1}
    assert bench.manifest.counts["subtype"] == {"single_emergence": 3}
    assert (bench.image_root / bench.items[0].images[0].path).is_file()
    assert len(bench.manifest_hash) == 64


def test_not_a_benchmark_folder(tmp_path):
    with pytest.raises(InvalidInputError, match="is not a benchmark folder"):
        load(tmp_path)


def test_bad_manifest_names_field(tmp_path):
    path = make_tiny_benchmark(tmp_path)
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["licence"] = "public-domain"
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InvalidInputError, match="field `licence`"):
        load(path)

