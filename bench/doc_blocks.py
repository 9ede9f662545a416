"""The shell code blocks of the README and docs/*.md: one rule for the docs' tests and `bench/docs_figures.py`.

A block is a fenced block tagged as shell (or untagged); its lines are its commands, ``\\``-continuations joined
and comment lines dropped. An HTML comment on the line right before the fence, ``<!-- figures: NAME, ... -->``
(invisible when the Markdown renders), names the setups of `bench/docs_figures.py` the block belongs to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"", "sh", "bash", "shell", "console"}
FENCE = re.compile(r"(?:^<!-- figures: ([^\n]*?) -->\n)?^```([^\n]*)\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Block:
    """A shell code block: its file, first line, command lines and the figure setups its marker names."""

    file: str
    line: int
    commands: tuple[str, ...]
    figures: str = ""

    @property
    def name(self) -> str:
        return f"{self.file}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The shell code blocks of a Markdown file."""
    text = path.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        if m.group(2).strip() not in SHELL:
            continue
        body = m.group(3).replace("\\\n", " ")
        lines = tuple(line.strip() for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#"))
        found.append(Block(path.name, text[: m.start(2)].count("\n") + 1, lines, m.group(1) or ""))
    return found
