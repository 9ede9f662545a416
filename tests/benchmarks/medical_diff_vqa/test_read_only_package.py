"""pycocoevalcap scores from a read-only install: its PTB tokenizer's input file goes to the temporary folder, not
into the package folder (which a system or container install keeps read-only), and METEOR writes nothing there.

The tests run as root, whom ``chmod a-w`` does not stop (CAP_DAC_OVERRIDE), so the package is copied (its files
linked) into a folder made immutable with ``chattr +i`` as root, which stops root too (ext4, XFS, btrfs; the test
skips where the file system refuses the flag), or made ``a-w`` for anyone else; the test first checks that no file
can be created there, then scores in a child process that imports pycocoevalcap from that copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from medtemporal.benchmarks.medical_diff_vqa import metrics as diffvqa_metrics

pycocoevalcap = pytest.importorskip("pycocoevalcap")
pytestmark = pytest.mark.skipif(not diffvqa_metrics.java_status()[0],
                                reason=f"pycocoevalcap cannot run here: {diffvqa_metrics.java_status()[1]}")

CHILD = """
import json, sys
from pycocoevalcap.meteor import meteor
from pycocoevalcap.tokenizer import ptbtokenizer
from medtemporal.benchmarks.medical_diff_vqa.metrics import light_meteor, tokenize
assert ptbtokenizer.__file__.startswith(sys.argv[1]) and meteor.__file__.startswith(sys.argv[1]), meteor.__file__
tokens = tokenize(["The heart is enlarged.", "No effusion, no pneumothorax.", "yes"])
score, _ = light_meteor().compute_score({0: ["no effusion"]}, {0: ["no effusion"]})
print(json.dumps({"tokens": tokens, "meteor": score}))
"""


def _lock(folders: list[Path]) -> list[str]:
    """Make ``folders`` refuse new files, for root too; the command that undoes it."""
    if os.geteuid() == 0:
        done = subprocess.run(["chattr", "+i", *map(str, folders)], capture_output=True, text=True, check=False)
        if done.returncode:
            pytest.skip(f"chattr +i is refused here ({done.stderr.strip()}); as root nothing else stops writes")
        return ["chattr", "-i", *map(str, folders)]
    for folder in folders:
        folder.chmod(0o555)
    return ["chmod", "755", *map(str, folders)]


@pytest.fixture
def read_only_copy(tmp_path: Path) -> Iterator[Path]:
    """A copy of pycocoevalcap (files linked, folders made) under ``tmp_path/site``, its folders read-only."""
    source = Path(next(iter(pycocoevalcap.__path__)))  # a namespace package: no __init__.py
    site = tmp_path / "site"
    shutil.copytree(source, site / "pycocoevalcap", copy_function=os.symlink,
                    ignore=shutil.ignore_patterns("__pycache__"))
    folders = [site, *(p for p in site.rglob("*") if p.is_dir() and not p.is_symlink())]
    undo = _lock(folders)
    try:
        with pytest.raises(PermissionError):
            (site / "pycocoevalcap" / "tokenizer" / "probe").write_text("written")
        yield site
    finally:
        subprocess.run(undo, check=True)


def test_tokenizer_and_meteor_score_from_a_read_only_package(read_only_copy: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(read_only_copy), os.environ.get("PYTHONPATH", "")]),
           "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(read_only_copy)], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith('{"tokens": ["the heart is enlarged", "no effusion no pneumothorax", "yes"], '
                                        '"meteor": 1.0}')
    assert not list(tmp_path.glob("tmp*"))  # the tokenizer's input file, removed after use
