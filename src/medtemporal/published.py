"""The papers' own result tables, as data: what a family's report shows beside a user's runs.

A family keeps the rows its paper prints in ``benchmarks/<family>/published.py`` (`PublishedTable`s,
transcribed with the table and line each comes from; nothing computed, nothing invented), and says where its
paper publishes none (`NoneFound`). Each column names the score of a run that stands beside it (a group and a
metric of ``scores.json``, or of one of its variants, times ``scale`` to the paper's unit), so a report can put
a user's run in the paper's layout (`run_values`) and mark the paper's rows as published.

>>> table = PublishedTable(paper="the MI-CXR paper", name="Table 2", caption="ICR variant", setting="temperature 0",
...     columns=(PublishedColumn("ICR Variant", "task:ICR-V", "accuracy", scale=1.0),),
...     rows=(PublishedRow("GPT-5.2", (0.765,), line=236, section="Closed"),))
>>> table.row("GPT-5.2").values
(0.765,)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from medtemporal.schema import Score


class _Scores(Protocol):
    """What `run_values` reads of a run's scores (`medtemporal.runs.RunScores`)."""

    def score(self, group: str, metric: str) -> Score | None: ...

    def variant(self, name: str) -> _Scores | None: ...


@dataclass(frozen=True)
class PublishedColumn:
    """A column as the paper heads it, and the score of a run that stands in it."""

    label: str
    group: str | None = None
    """Score group of a run's value for this column (``subtypes:TEL/Single (E/R)``); None: no counterpart."""
    metric: str | None = None
    scale: float = 100.0
    """A run's value times this is in the paper's unit (100 where the paper prints percent)."""
    variant: str | None = None
    """Read the run's scores under this variant (`BenchmarkSpec.variants`), e.g. the release's own rule."""


@dataclass(frozen=True)
class PublishedRow:
    """One model's row as printed (None where the paper prints no number, e.g. "/")."""

    model: str
    values: tuple[float | None, ...]
    line: int
    """Line of the row in the paper's text (``../shared/seeds/<file>``)."""
    section: str = ""
    """The paper's row group ("Closed", "Open-Source LVLMs", "+ Text-only RAG" …), "" for none."""


Provenance = Literal["primary", "re-print", "secondary"]
"""Where a table's numbers were read (FACTS §7): the authors' own artefact (paper, repo file, model card);
a later paper's table copying earlier papers' numbers; a third party quoting a paper (shown only labelled)."""


@dataclass(frozen=True)
class Conditions:
    """What a published number was measured on, as data: a run stands comparable beside it only when its own
    conditions (the family's ``run_conditions``, from the run's recorded settings) match on each of these.

    >>> paper = Conditions("mi-cxr official test", "all tasks", "direct", "accuracy", temperature=0.0)
    >>> mismatches(paper, Conditions("phantoms", "all tasks", "direct", ""))
    ['test set: phantoms, not mi-cxr official test']
    """

    test_set: str
    """The items, named so that equal names are the same items (``MIMIC-CXR test, 2,058 studies with a prior``)."""
    section: str
    """What was generated or asked (``findings``; ``progression``)."""
    protocol: str
    """What the model was given and how it was made to answer (``current study only``; ``zero-shot``)."""
    metrics: str
    """The metric implementation of the paper's numbers (``pycocoevalcap on R2Gen-cleaned text``), for the reader:
    a column has a run's value only where our metric is that implementation (`PublishedColumn.metric`), so a run
    matches it when it has a value in every such column (`medtemporal.leaderboard.published.comparability`)."""
    temperature: float | None = None
    """Decoding temperature where the source states it: noted beside rows that differ, not a condition."""


def mismatches(paper: Conditions, run: Conditions) -> list[str]:
    """Each of test set, section and protocol on which ``run`` differs from ``paper``, in words; empty: they match."""
    return [f"{label}: {getattr(run, name)}, not {getattr(paper, name)}"
            for name, label in (("test_set", "test set"), ("section", "section"), ("protocol", "protocol"))
            if getattr(run, name) != getattr(paper, name)]


@dataclass(frozen=True)
class PublishedTable:
    """One table of a paper: its columns, rows and what its numbers were measured on."""

    paper: str
    """The paper as a reader names it: ``the MI-CXR paper``."""
    name: str
    """As the paper numbers it: ``Table 1``."""
    caption: str
    setting: str
    """The paper's protocol for these numbers (zero-shot, temperature, judge …), for the reader."""
    columns: tuple[PublishedColumn, ...]
    rows: tuple[PublishedRow, ...]
    digits: int = 2
    """Decimals the paper prints."""
    source: str = ""
    """The paper's text the rows were transcribed from, and whose lines they cite (``seeds/000``)."""
    transposed: bool = False
    """The paper prints models as columns and metrics as rows (3D-RAD's Tables 3–5)."""
    lines: tuple[int, ...] = ()
    """For a transposed table, the line of each column (a metric's row in the paper); each row's ``line`` is then
    its header's."""
    provenance: Provenance = "primary"
    conditions: Conditions | None = None
    """What its numbers were measured on (None: not stated as data; no run is marked comparable)."""
    note: str = ""
    """The protocol note shown beside its rows, where it decides comparability (``no prior given``)."""

    def __post_init__(self) -> None:
        bad = [r.model for r in self.rows if len(r.values) != len(self.columns)]
        if bad or (self.transposed and len(self.lines) != len(self.columns)):
            raise ValueError(f"{self.name}: rows {bad} or its lines do not have {len(self.columns)} values")
        if self.provenance not in ("primary", "re-print", "secondary"):
            raise ValueError(f"{self.name}: provenance {self.provenance!r} is not primary, re-print or secondary")

    def row(self, model: str, section: str | None = None) -> PublishedRow:
        """The row of ``model`` (in ``section`` when given)."""
        found = [r for r in self.rows if r.model == model and section in (None, r.section)]
        if len(found) != 1:
            raise KeyError(f"{self.name} has {len(found)} rows of {model!r}")
        return found[0]


@dataclass(frozen=True)
class NoneFound:
    """A family whose paper's result rows are not available, and why."""

    reason: str


def column_order(table: PublishedTable) -> list[int]:
    """Column indices with the Overall columns first (in sight beside the model on a narrow screen), then the others
    as printed."""
    first = [k for k, c in enumerate(table.columns) if c.label.lower().startswith("overall")]
    return first + [k for k in range(len(table.columns)) if k not in first]


def percent(table: PublishedTable, k: int, value: float | None) -> float | None:
    """A printed value of column ``k`` in the runs' unit, × 100 (`PublishedColumn.scale` undone): ``0.315`` of a
    table printing fractions → ``31.5``; a table printing percent keeps its numbers.

    >>> percent(PublishedTable("p", "T", "c", "s", (PublishedColumn("Acc", scale=1.0),), ()), 0, 0.315)
    31.5
    """
    return None if value is None else round(value * 100.0 / table.columns[k].scale, 10)


def percent_digits(table: PublishedTable, k: int) -> int:
    """The decimals of column ``k`` in percent: as printed, less two where the paper prints fractions."""
    return max(0, table.digits - 2) if table.columns[k].scale == 1.0 else table.digits


def run_values(table: PublishedTable, scores: _Scores) -> tuple[float | None, ...]:
    """A run's values in the table's columns and units (None where a column has no counterpart or no score)."""
    out: list[float | None] = []
    for col in table.columns:
        if col.group is None or col.metric is None:
            out.append(None)
            continue
        scored = scores if col.variant is None else scores.variant(col.variant)
        score = None if scored is None else scored.score(col.group, col.metric)
        value = None if score is None or score.value is None or score.value != score.value else score.value
        out.append(None if value is None else value * col.scale)
    return tuple(out)
