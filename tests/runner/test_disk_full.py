"""A full disk or a read-only folder under every writing command: one sentence, no ``*.tmp`` left, nothing lost.

Issue 24, point 3: ``run``, ``score``, ``score --judge``, ``report``, ``export`` and ``build`` (and a response
cache on such a disk, point 4) each run with their output folder on a tmpfs that is either filled to the last
byte or remounted read-only, in a private mount namespace (`helpers.full_disk`; skipped where mounting is not
permitted; marked slow, so `make test-slow` runs them). A unit test injects ``ENOSPC`` into `medtemporal.writes`
for machines without one, and in `make test`.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.eltlm import make_open_benchmark, make_open_run
from helpers.tiny import make_tiny_benchmark

from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.phantoms.skill_frames import write_skill_phantoms
from medtemporal.writes import replacing, write_atomic

PROBE = Path(__file__).resolve().parents[1] / "helpers" / "full_disk.py"
SRC = Path(__file__).resolve().parents[2] / "src"
CAUSE = {"full": "the disk is full", "ro": "read-only"}


@pytest.fixture(scope="module")
def mountable(tmp_path_factory):
    where = tmp_path_factory.mktemp("probe-mount")
    try:
        done = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {where}"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"mount namespaces are not available here ({exc})")
    if done.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here ({done.stderr.strip()})")


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """Benchmarks and runs, made on an ordinary disk, to copy onto the small one."""
    root = tmp_path_factory.mktemp("disk")
    bench = make_tiny_benchmark(root / "tiny", n=3)
    for name in ("partial", "finished", "scored"):
        assert main(["run", str(bench), "--model", "baseline:random", "--out", str(root / name / "run"),
                     "--no-progress", "--no-score"]) == 0
    predictions = root / "partial" / "run" / "predictions.jsonl"
    predictions.write_text("".join(predictions.read_text().splitlines(keepends=True)[:2]))  # one item left to ask
    assert main(["score", str(root / "scored" / "run"), "--resamples", "20"]) == 0
    make_open_run(make_open_benchmark(root / "open", n=4), root / "judge" / "run")
    write_skill_phantoms(root / "frames", instances=2, seed=0, image_size=48, progress=False)
    (root / "empty").mkdir()
    (root / "cache").mkdir()
    return root


def _cases(root: Path, fake_uri: str) -> dict[str, tuple[Path, list[str]]]:
    bench = root / "tiny" / "bench"
    return {
        "run": (root / "partial", ["run", str(bench), "--model", "baseline:random", "--out", "{mnt}/run",
                                   "--no-progress", "--no-score"]),
        "score": (root / "finished", ["score", "{mnt}/run", "--resamples", "20"]),
        "score --judge": (root / "judge", ["score", "{mnt}/run", "--judge", "scripted-judge:overlap",
                                           "--resamples", "20"]),
        "report": (root / "scored", ["report", "{mnt}/run", "--out", "{mnt}/report", "--formats", "md,csv"]),
        "export": (root / "empty", ["export", str(bench), "--format", "parquet", "--out", "{mnt}/tiny.parquet"]),
        "build": (root / "empty", ["build", "skillqa", "--frames", str(root / "frames"), "--out", "{mnt}/bench"]),
        "cache": (root / "cache", ["run", str(bench), "--model", fake_uri, "--out", str(root / "out-{mode}"),
                                   "--no-progress", "--no-score", "--cache", "{mnt}/responses.sqlite"]),
    }


@pytest.mark.slow  # 14 commands, each a process in its own mount namespace (a minute): `make test-slow`
@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode", ["full", "ro"])
@pytest.mark.parametrize("command", ["run", "score", "score --judge", "report", "export", "build", "cache"])
def test_a_full_or_read_only_disk_is_one_sentence_naming_the_folder_and_the_cause(
        mountable, work, fake, tmp_path, command, mode):
    prepared, argv = _cases(work, fake.uri())[command]
    mount = tmp_path / "mnt"
    mount.mkdir()
    spec = {"mount": str(mount), "prepared": str(prepared), "mode": mode, "size": "4m",
            "argv": [a.replace("{mode}", mode) for a in argv]}
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(["unshare", "-m", sys.executable, str(PROBE), json.dumps(spec)], capture_output=True,
                          text=True, env=env, timeout=290)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    lines = [line for line in result["stderr"].splitlines() if line.strip() and "warning:" not in line]
    assert result["code"] == 2 and "Traceback" not in result["stderr"], result["stderr"]
    assert len(lines) == 1 and lines[0].startswith("medtemporal: error:"), result["stderr"]
    assert CAUSE[mode] in lines[0].lower() and str(mount) in lines[0], lines[0]
    if command == "cache":
        assert "cannot be written" in lines[0] and "damaged" not in lines[0] and "delete" not in lines[0]
    assert result["tmp"] == [] and result["changed"] == [], result


def test_an_injected_enospc_removes_the_temporary_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    path = tmp_path / "scores.json"
    path.write_text("old\n")

    def full(*args, **kwargs):  # noqa: ARG001
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("os.replace", full)
    with pytest.raises(InvalidInputError, match=f"Cannot write scores.json in {tmp_path}: the disk is full"):
        write_atomic(path, "new\n")
    assert path.read_text() == "old\n" and not list(tmp_path.glob("*.tmp"))
    monkeypatch.undo()
    with pytest.raises(ZeroDivisionError), replacing(path) as tmp:  # any other error: the same clean-up, unchanged
        tmp.write_text("half")
        1 / 0  # noqa: B018
    assert path.read_text() == "old\n" and not list(tmp_path.glob("*.tmp"))


def test_an_injected_enospc_under_the_cli_is_one_sentence(tmp_path, monkeypatch, capsys):
    bench = make_tiny_benchmark(tmp_path, n=3)
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "run"), "--no-progress",
                 "--no-score"]) == 0
    capsys.readouterr()
    real_open = open

    def full_open(file, mode="r", *args, **kwargs):
        if str(file).endswith(".tmp") and "w" in mode:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", full_open)
    assert main(["score", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("medtemporal: error:")]
    assert len(errors) == 1 and "Cannot write scores.json" in err and "the disk is full" in err, err
    assert not (tmp_path / "run" / "scores.json").exists() and not list(tmp_path.rglob("*.tmp"))
