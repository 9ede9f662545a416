"""The plugin contract: what a benchmark family gives the core, in one `BenchmarkSpec`.

A family (``medtemporal.benchmarks.<family>`` or a third-party package in the ``medtemporal`` entry-point
group) registers one `BenchmarkSpec` under kind ``benchmark`` (`medtemporal.registry`); the core reads
everything it needs to build, run, score, report, audit and demo the family from it, and never imports the
family itself. The spec holds data and the names of registered plugins (prompt templates, extraction rules,
metrics, protocols, baselines); the parts a few families need are grouped (`ScoreGroups`, `RunDefaults`,
`AuditRules`, `Published`), so the contract stays at most 20 fields, each used by two families or more or naming
the family (checked by the test suite). `Variant` is another scoring of a family's runs; `DemoSection` its part of
``medtemporal demo``. The benchmark folder a family's ``build`` writes is `medtemporal.benchmark`'s. Family
authors import all of it from `medtemporal.family`, and check a family with ``medtemporal check NAME``.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from medtemporal.benchmark import Benchmark, Manifest
from medtemporal.provenance import Release, holds_phantoms
from medtemporal.published import Conditions, NoneFound, PublishedTable
from medtemporal.schema import Item, Licence


@dataclass(frozen=True)
class DemoSection:
    """A family's part of ``medtemporal demo``: phantoms, then build and run commands, then one report of the runs."""

    title: str
    phantoms: list[str]
    """Arguments of ``medtemporal phantoms``, ending in ``--out DATA``; skipped when DATA already holds phantoms."""
    steps: list[list[str]]
    """The build and run commands, each the argument list of one ``medtemporal`` command."""
    runs: list[Path]
    """The run folders the steps write, reported together."""
    report_dir: Path
    """Where the report of ``runs`` goes."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment variables set while the steps run (e.g. a local encoder), restored afterwards."""

    @property
    def report(self) -> Path:
        """The HTML report the section ends in."""
        return self.report_dir / "report.html"

    def commands(self) -> list[list[str]]:
        """Every command in order: the phantoms (unless already written), the steps, the report."""
        made = holds_phantoms(self.phantoms[-1])
        return [*([] if made else [["phantoms", *self.phantoms]]), *self.steps,
                ["report", *map(str, self.runs), "--out", str(self.report_dir)]]


@dataclass(frozen=True)
class Variant:
    """Another scoring of a family's runs, reported beside the main one (lm-eval's named filters; the
    papers' "as released" rules): the tasks it covers with the extraction rule of each, and metrics where
    they differ from the family's."""

    extractors: Mapping[str, str]
    """Task → registered extraction rule."""
    description: str
    metrics: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Task → metric names (default: the family's, `BenchmarkSpec.metrics`)."""
    protocols: tuple[str, ...] | None = None
    """The protocols whose runs it scores (a paper's own prompt and parse go together); None: every run's."""


class JudgeHook(Protocol):
    """A family's use of ``medtemporal score --judge``: ``(run as scoring read it, judge, judge options)`` → the
    ``judge`` block of ``scores.json`` and, where its metrics read one, item id → verdict (None: none).

    `medtemporal.scoring.judge.Rubric` is one (a rubric over open answers, e.g. ELTLM's two criteria); a family
    with its own pass (MI-CXR's error types) gives a function of this shape."""

    def __call__(self, run: Any, judge: Any, options: Mapping[str, Any]) -> tuple[dict[str, Any], Mapping[str, Any] | None]: ...


@dataclass(frozen=True)
class ScoreGroups:
    """How a paper's tables group a run's scores beyond task and subtype."""

    subtypes: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    """Task → {column label → subtypes} where a paper's table merges subtypes (default: one per subtype)."""
    overall_tasks: tuple[str, ...] | None = None
    """The tasks the Overall score covers (None: all), as in the paper's headline table."""
    overall_weights: Mapping[str, float] = field(default_factory=dict)
    """Score group → weight, where the paper's Overall is a weighted mean of its table's columns: scored as
    group ``overall:paper`` ("Overall (paper)") beside the micro-averaged ``overall``; empty: none."""
    headline_metrics: tuple[str, ...] = ()
    """The metrics a run's terminal table shows per task (the paper's headline ones, in its order; the first
    computed one is the run's headline in summaries and indexes); empty: every metric. ``runs show RUN`` prints all."""
    headline_split: bool = False
    """Whether the terminal table shows each task's `subtypes` columns beside its score: the split that is the
    family's point (e.g. with and without a prior study)."""


@dataclass(frozen=True)
class RunDefaults:
    """What ``medtemporal run`` uses where the user says nothing: the paper's settings."""

    protocol: str = "direct"
    """The protocol (e.g. one that turns volumes into images)."""
    generation: Mapping[str, Any] = field(default_factory=dict)
    """Generation settings the paper used (``temperature``, ``max_tokens`` …; None for "the provider's default"):
    every run uses them unless the user overrides them (`medtemporal.runner.options.RunOptions.resolve`)."""
    protocol_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Protocol → its options for this family where ``--protocol-option`` names none (e.g. MI-CXR's stage-wise
    ``guidelines``, task → guideline template, `medtemporal.protocols.stagewise`)."""


@dataclass(frozen=True)
class AuditRules:
    """How ``medtemporal audit`` (`medtemporal.audit`) treats the family's items."""

    at_build: bool = True
    """Whether ``medtemporal build`` writes the blind-solvability audit into the manifest (False: the build audits
    itself, e.g. MMXU's across content types)."""
    fit: str = "subtype"
    """What the audit's readers are fitted on (`medtemporal.audit.FITS`): each subtype's items, or each task's across
    its subtypes (``"task"``, where a subtype names the answer's category); ``medtemporal audit`` uses it for a
    benchmark whose manifest records no fit (built with ``--no-audit``)."""
    notes: Mapping[str, str] = field(default_factory=dict)
    """``task/subtype`` pattern (fnmatch) → why the paper's own design makes those items answerable without the
    images; the audit reports such subtypes "by design", with the note, instead of flagging them."""
    baselines: tuple[str, ...] = ()
    """Registered backends that answer from an item's text alone (e.g. ``longitudinal_rrg:copy-prior``): on open
    answers, which have no chance level, the audit scores them with `floor_metrics` as the text-only floor
    (`medtemporal.audit.floor`); empty: open answers are only listed as skipped."""
    floor_metrics: tuple[str, ...] = ("rouge_l_f1",)
    """Model-free metrics the text-only floor is scored with (cheap enough for every build)."""
    floor_description: str = ""
    """One sentence on what the floor's baselines write, printed above its rows."""


@dataclass(frozen=True)
class Published:
    """What the paper and its release publish, as data the core reads (no file found by its path)."""

    tables: tuple[PublishedTable, ...] = ()
    """The paper's result rows (`medtemporal.published`), shown beside a user's runs."""
    none: NoneFound | None = None
    """Why the paper's result rows are not available, where `tables` is empty."""
    conditions: Callable[[Any, Any, Any], Conditions] | None = None
    """``(manifest, config, scores)`` of a run → what it measured on (`medtemporal.published.Conditions`: test set,
    section, protocol), read from its recorded settings; the leaderboard marks a run comparable with a table only where
    they equal the table's (`medtemporal.leaderboard.published`). None: no run is marked comparable."""
    releases: tuple[Release, ...] = ()
    """Released files reviewed by checksum, with the licence each carries (`medtemporal.provenance.release_licence`)."""
    exports: Mapping[str, Callable[[Benchmark, Path], int]] = field(default_factory=dict)
    """Export format → writer of the family's own file layout (e.g. the paper's released file)."""


@dataclass(frozen=True)
class BenchmarkSpec:
    """What the rest of medtemporal needs to know about one benchmark family.

    Registered under kind ``benchmark`` (see `medtemporal.registry`). Mappings
    are keyed by task name; the key ``"*"`` is the default for other tasks.
    """

    name: str
    version: str
    licence: Licence
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    """Adds the builder's command-line options to ``medtemporal build NAME``."""
    build: Callable[[argparse.Namespace], tuple[list[Item], Manifest]]
    """Builds items and manifest from parsed options."""
    prompts: Mapping[str, str] = field(default_factory=lambda: {"*": "mcq_direct"})
    """Task → prompt template name used by the direct protocol (templates live in ``prompts/`` beside the module
    that defines ``build``, `medtemporal.prompts`)."""
    answer_formats: Mapping[str, str] = field(default_factory=dict)
    """Task → how an answer that follows the prompt is written (default ``{}``, the bare answer)."""
    extractors: Mapping[str, str] = field(default_factory=dict)
    """Task → answer-extraction rule name (default: by the item's answer type)."""
    metrics: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: {"*": ("accuracy",)})
    """Task → metric names computed by `medtemporal score`. Metrics registered ``on_request`` (those that load
    model weights, `medtemporal.scoring.clinical`) are scored only when ``score --metrics`` names them."""
    extra_metrics: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Task → metrics medtemporal scores beside the paper's own (e.g. the field's clinical report metrics), on
    the same rules as `metrics`; reports label them "ours", and the paper-layout tables never show them."""
    groups: ScoreGroups = field(default_factory=ScoreGroups)
    """Merged subtype columns and the Overall the paper's tables print."""
    variants: Mapping[str, Variant] = field(default_factory=dict)
    """Name → another scoring of runs written into ``scores.json`` beside the main one (``"as released"``)."""
    judge: JudgeHook | None = None
    """What ``medtemporal score --judge`` does (`JudgeHook`): a `medtemporal.scoring.judge.Rubric` over open
    answers, or the family's own pass; None: the family has no judged metric."""
    defaults: RunDefaults = field(default_factory=RunDefaults)
    """The protocol, generation settings and protocol options a run uses unless the user says otherwise."""
    report: Callable[[Any], None] | str | None = None
    """Writes the benchmark's own paper-layout tables and plots for runs of it, beside the common report, through
    the one context the core hands it (`medtemporal.report.family.FamilyReport`: the loaded runs, the benchmark,
    outcomes, audit rows, the cell formatter, the chart and the writer). A ``"module:function"`` string is imported
    when a report is written (`report_writer`), so registering the family does not import the report machinery."""
    glossary: Mapping[str, str] = field(default_factory=dict)
    """Task or subtype name (an fnmatch pattern: ``task5_*``) → what it is, named as the paper names it
    (``"TEL": "Temporal Event Localization: …"``); the report's glossary lists the names its runs hold."""
    demo: Callable[[Path, int, int], DemoSection] | None = None
    """``(out, patients, seed)`` → this family's section of ``medtemporal demo``, which the cross-family tests run
    on phantoms; the conformance check (`medtemporal.testing.check_family`) fails a family without one."""
    audit: AuditRules = field(default_factory=AuditRules)
    """How the blind-solvability audit treats the family's items."""
    published: Published = field(default_factory=Published)
    """The paper's result rows, the reviewed released files and the released file layouts."""

    def report_writer(self) -> Callable[[Any], None] | None:
        """`report`, imported where it is named by a ``"module:function"`` string."""
        if not isinstance(self.report, str):
            return self.report
        module, _, name = self.report.partition(":")
        return getattr(importlib.import_module(module), name)

    @staticmethod
    def for_task(mapping: Mapping[str, Any], task: str, default: Any = None) -> Any:
        """``mapping[task]``, else ``mapping["*"]``, else ``default``."""
        return mapping.get(task, mapping.get("*", default))

    def listed_metrics(self, task: str) -> tuple[str, ...]:
        """Every metric listed for ``task``: the paper's (`metrics`), then ours (`extra_metrics`)."""
        own = self.for_task(self.metrics, task, ("accuracy",))
        return tuple(dict.fromkeys((*own, *self.for_task(self.extra_metrics, task, ()))))


def spec(name: str) -> BenchmarkSpec:
    """The registered spec of benchmark ``name``."""
    from medtemporal.registry import lookup

    return lookup("benchmark", name).obj
