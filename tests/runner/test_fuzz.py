"""Random bytes in every file the CLI reads: one line on stderr, never a traceback (issues 15 and 24).

Each case damages one file of a finished run (random bytes, a valid file with
bytes overwritten, or a truncated one; seeded) and runs the commands that read
it (for an image, a decompression bomb too). Whatever happens, the command must return
(0, 1 or 2), print no traceback, leave no ``*.tmp`` file, and when it fails say so in
exactly one ``medtemporal: error:`` line.
"""

import hashlib
import json
import random
import shutil
import struct
import zlib

import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.benchmark import ITEMS, MANIFEST
from medtemporal.cli import main

FILES = ("items", "manifest", "prompt", "predictions", "config", "scores", "cache", "image")
CASES = [(name, k) for name in FILES for k in range(5)]


def _run_args(root, server):
    return ["run", str(root / "bench"), "--model", server.uri(), "--out", str(root / "run"), "--no-progress",
            "--cache", str(root / "c.sqlite"), "--prompt", f"mcq_direct={root / 'prompt.txt'}", "--attempts", "1"]


@pytest.fixture(scope="module")
def template(tmp_path_factory, server):
    """A finished run (benchmark, prompt file, cache, run folder) to copy for each case."""
    root = tmp_path_factory.mktemp("fuzz")
    server.reset()  # the session's server: faults another test configured must not stay
    server.configure(keep_bodies=False, latency=0.0)
    make_tiny_benchmark(root, n=3)
    (root / "prompt.txt").write_text("Question: $question\n$options\nAnswer with a letter.\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "sk-fuzz")
        assert main([*_run_args(root, server), "--no-score"]) == 0
    return root


def _bomb() -> bytes:
    """A PNG declaring 30000 × 30000 pixels in 60 bytes: Pillow's DecompressionBombError, which is no OSError."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 30000, 30000, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b""))


def _damage(data: bytes, rng: random.Random, bomb: bool = False) -> bytes:
    how = rng.choice(["random", "overwrite", "truncate", *(["bomb"] * 2 if bomb else [])])
    if how == "bomb":
        return _bomb()
    if how == "random" or not data:
        return rng.randbytes(rng.randint(0, 400))
    if how == "truncate":
        return data[: rng.randrange(len(data))]
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name, k", CASES)
def test_random_bytes_in_a_file_the_cli_reads_give_one_line_and_no_traceback(
        template, server, tmp_path, monkeypatch, capsys, name, k):
    server.reset()
    root = tmp_path / "w"
    shutil.copytree(template, root)
    config = json.loads((root / "run" / "config.json").read_text())
    config["benchmark"]["path"] = str(root / "bench")
    (root / "run" / "config.json").write_text(json.dumps(config))
    bench, prompt, out, cache = root / "bench", root / "prompt.txt", root / "run", root / "c.sqlite"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fuzz")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    run_args = _run_args(root, server)
    assert main(["score", str(out), "--resamples", "50"]) == 0
    capsys.readouterr()

    rng = random.Random(f"{name}-{k}")
    path = {"items": bench / ITEMS, "manifest": bench / MANIFEST, "prompt": prompt, "cache": cache,
            "predictions": out / "predictions.jsonl", "config": out / "config.json", "scores": out / "scores.json",
            "image": root / "data" / "img" / "p1_3.png"}[name]
    path.write_bytes(_damage(path.read_bytes(), rng, bomb=name == "image"))
    if name == "image":  # the run must read it: the item is asked again (its answer is dropped, the cache bypassed)
        (out / "predictions.jsonl").write_text("")
        cache.unlink()
    if name == "items" and k % 2:  # also reach the items parser: a manifest that vouches for the damaged items
        manifest = json.loads((bench / MANIFEST).read_text())
        manifest["items_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        (bench / MANIFEST).write_text(json.dumps(manifest))

    for argv in (run_args, ["score", str(out), "--resamples", "50"], ["report", str(out), "--formats", "md"],
                 ["runs", "list", str(root)]):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse only
            code = exc.code
        err = capsys.readouterr().err
        assert "Traceback" not in err, (argv, err)
        errors = [line for line in err.splitlines() if line.startswith("medtemporal: error:")]
        assert code in (0, 1, 2), (argv, code)
        if code == 2:
            assert len(errors) == 1 and len(err.strip().splitlines()) == 1, (argv, err)
        else:
            assert not errors, (argv, err)
        assert not list(root.rglob("*.tmp")), (argv, list(root.rglob("*.tmp")))
