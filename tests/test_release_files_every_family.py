"""Every family's build reads its released files through the one reader, and refuses each of them cut in the middle
of a record in one sentence naming the file and the line (issue 32 §3). Run over the registry: a family is tested by
registering it with a demo section (its phantoms and build command)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from medtemporal import registry
from medtemporal.cli import main
from medtemporal.sources import release_files

FAMILIES = [entry.name for entry in registry.entries("benchmark") if entry.obj.demo is not None]


def _cut(data: bytes) -> bytes:
    """``data`` cut inside a record: a few bytes into the line that starts after 60% of it (or inside a one-line
    document)."""
    start = data.find(b"\n", int(len(data) * 0.6)) + 1
    end = data.find(b"\n", start)
    if start <= 0 or end < 0 or end - start < 2:
        return data[: int(len(data) * 0.6)]
    return data[: start + max(1, min(6, (end - start) // 2))]


def _cut_file(path: Path) -> None:
    raw = path.read_bytes()
    if path.suffix == ".gz":  # cut the text inside, so that the reader can name the line
        path.write_bytes(gzip.compress(_cut(gzip.decompress(raw))))
    else:
        path.write_bytes(_cut(raw))


def _with_out(argv: list[str], out: Path) -> list[str]:
    argv = list(argv)
    argv[argv.index("--out") + 1] = str(out)
    return argv


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("family", FAMILIES)
def test_every_released_file_a_build_reads_is_refused_when_cut_in_a_record(family, tmp_path, monkeypatch, capsys):
    section = registry.lookup("benchmark", family).obj.demo(tmp_path, 10, 0)
    build = None
    for argv in section.commands():
        if argv[0] == "build":
            build = argv
            break
        assert main(argv) == 0, argv
    assert build is not None, f"{family}'s demo has no build step"
    read: list[Path] = []
    reader = release_files.read_text

    def spy(path, *, what):
        read.append(Path(path))
        return reader(path, what=what)

    monkeypatch.setattr(release_files, "read_text", spy)
    assert main(_with_out(build, tmp_path / "whole")) == 0, family
    inputs = sorted({p.resolve() for p in read if p.resolve().is_relative_to(tmp_path.resolve())})
    assert inputs, f"{family}'s build read no released file through medtemporal.sources.release_files"
    capsys.readouterr()
    for k, path in enumerate(inputs):
        whole = path.read_bytes()
        try:
            _cut_file(path)
            assert main(_with_out(build, tmp_path / f"cut-{k}")) == 2, (family, path)
        finally:
            path.write_bytes(whole)
        err = capsys.readouterr().err
        errors = [line for line in err.splitlines() if line.startswith("medtemporal: error:")]
        assert "Traceback" not in err and len(errors) == 1, err
        assert path.name in errors[0] and "line" in errors[0] and "cut short" in errors[0], errors[0]
        assert not (tmp_path / f"cut-{k}" / "items.jsonl").exists()
