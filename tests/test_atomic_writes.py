"""Every file medtemporal replaces goes through `medtemporal.writes` (issue 38): no other module renames a temporary
file over another by hand (an AST scan for ``os.replace``/``os.rename`` and ``Path.replace``/``Path.rename``).

Moving a whole folder into place is not a file write and stays with its owner, listed here with why."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "medtemporal"
FOLDER_MOVES = {
    "report/__init__.py": "moves the finished report set and its old folders",
    "interop/files.py": "swaps a finished export folder with the old one",
    "scoring/clinical/radgraph.py": "moves an unpacked model folder into the cache",
}


def _renames(path: Path) -> list[int]:
    """Lines of ``path`` that rename: ``os.replace(a, b)``, ``os.rename(a, b)``, ``p.replace(q)``, ``p.rename(q)``
    (``str.replace`` takes two arguments and is not one)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in ("replace", "rename"):
            continue
        on_os = isinstance(node.func.value, ast.Name) and node.func.value.id == "os"
        if on_os or (len(node.args) == 1 and not node.keywords):
            lines.append(node.lineno)
    return lines


def test_no_module_but_writes_replaces_a_file_by_hand():
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel != "writes.py" and rel not in FOLDER_MOVES and (lines := _renames(path)):
            found[rel] = lines
    assert not found, f"write these through medtemporal.writes.replacing / write_atomic: {found}"


def test_the_scan_finds_a_hand_made_atomic_write(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import os\ntmp.replace(path)\nos.replace(a, b)\ntext.replace('a', 'b')\n")
    assert _renames(path) == [2, 3]
