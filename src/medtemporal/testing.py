"""The conformance check of a benchmark family: one check per rule of the contract (`medtemporal.contract`).

Like scikit-learn's ``check_estimator`` / ``parametrize_with_checks``: `family_checks` gives one named check per
rule, each raising `ConformanceError` with one sentence naming the field and the fix; `check_family` runs them
all (``medtemporal check NAME`` prints them); `parametrize_with_checks` turns them into pytest cases, so a plugin
family's own test suite runs the same checks the project's suite runs over every registered family::

    from medtemporal.testing import parametrize_with_checks

    @parametrize_with_checks(["my-family"])
    def test_conformance(check):
        check()

The checks read the spec and what it names in the registry (templates, rules, metrics, protocols, backends); they
build nothing. `check_demo_builds` (``medtemporal check NAME --build``) also writes the demo's phantoms and builds
the family from them in a temporary folder.
"""

from __future__ import annotations

import argparse
import inspect
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable, Iterable

from medtemporal.contract import BenchmarkSpec, DemoSection, spec
from medtemporal.errors import MedTemporalError
from medtemporal.registry import lookup, names

MAX_FIELDS = 20
"""The most fields `BenchmarkSpec` may have (issue 38: a contract that stops growing)."""


class ConformanceError(MedTemporalError, AssertionError):
    """A family breaks a rule of the contract (one sentence: the field, what is wrong, the fix)."""


@dataclass(frozen=True)
class FamilyCheck:
    """One rule checked on one family: call it to run it."""

    family: str
    rule: str
    run: Callable[[BenchmarkSpec], None]

    def __call__(self) -> None:
        self.run(spec(self.family))

    def __str__(self) -> str:
        return f"{self.family}:{self.rule}"


def _fail(family: BenchmarkSpec, field: str, problem: str, fix: str) -> None:
    raise ConformanceError(f"{family.name}: BenchmarkSpec.{field} {problem}; {fix}.")


def _unknown(kind: str, wanted: Iterable[str]) -> list[str]:
    known = set(names(kind))  # type: ignore[arg-type]
    return sorted({w for w in wanted if w not in known})


def check_identity(family: BenchmarkSpec) -> None:
    """Registered under its own name, with a version, a licence and a one-line description."""
    if lookup("benchmark", family.name).obj is not family:
        _fail(family, "name", "is not the name it is registered under", "register the spec under its own name")
    if not family.version or not family.description or "\n" in family.description:
        _fail(family, "description", "or version is empty or spans lines", "give a version and a one-line description")
    if family.licence not in ("open", "credentialed", "synthetic"):
        _fail(family, "licence", f"is {family.licence!r}", "use open, credentialed or synthetic")


def check_build_options(family: BenchmarkSpec) -> None:
    """``add_arguments`` adds options to a parser without error, and ``build`` takes the parsed options."""
    parser = argparse.ArgumentParser()
    try:
        family.add_arguments(parser)
    except Exception as exc:  # noqa: BLE001 (any failure is the family's, reported in its sentence)
        _fail(family, "add_arguments", f"raised {type(exc).__name__}: {exc}", "make it only add options")
    if len(inspect.signature(family.build).parameters) != 1:
        _fail(family, "build", "does not take one argument", "take the parsed options (argparse.Namespace)")


def check_prompts(family: BenchmarkSpec) -> None:
    """Every prompt template the spec names exists (core's or in the family's ``prompts/`` folder)."""
    from medtemporal.prompts import available

    missing = sorted(set(family.prompts.values()) - set(available()))
    if missing:
        _fail(family, "prompts", f"names templates that do not exist ({', '.join(missing)})",
              "add prompts/<name>.txt beside the module that defines build")


def check_answer_rules(family: BenchmarkSpec) -> None:
    """Every extraction rule the spec and its variants name is registered."""
    wanted = [*family.extractors.values(), *(r for v in family.variants.values() for r in v.extractors.values())]
    missing = _unknown("extractor", wanted)
    if missing:
        _fail(family, "extractors", f"names unregistered rules ({', '.join(missing)})",
              "register them with @register('extractor', NAME) in a module the family's package imports")


def check_metrics(family: BenchmarkSpec) -> None:
    """Every metric listed (the paper's, ours and the variants') is registered."""
    lists = [*family.metrics.values(), *family.extra_metrics.values(),
             *(m for v in family.variants.values() for m in v.metrics.values())]
    missing = _unknown("metric", (m for metrics in lists for m in metrics))
    if missing:
        _fail(family, "metrics", f"names unregistered metrics ({', '.join(missing)})",
              "register them with @register('metric', NAME, ...) in a module the family's package imports")


def check_groups(family: BenchmarkSpec) -> None:
    """Merged columns list subtypes; the weighted Overall's weights are positive."""
    bad = [label for columns in family.groups.subtypes.values() for label, subtypes in columns.items()
           if not subtypes or isinstance(subtypes, str)]
    if bad or any(w <= 0 for w in family.groups.overall_weights.values()):
        _fail(family, "groups", f"has columns without a tuple of subtypes ({', '.join(bad)}) or a weight <= 0",
              "give each column a tuple of subtype names and each weight a positive number")


def check_run_defaults(family: BenchmarkSpec) -> None:
    """The default protocol is registered and the generation settings are ones a run knows."""
    from medtemporal.runner.options import GENERATION_FIELDS

    if _unknown("protocol", [family.defaults.protocol, *family.defaults.protocol_options]):
        _fail(family, "defaults", f"names an unregistered protocol ({family.defaults.protocol!r} or one of "
                                  f"{sorted(family.defaults.protocol_options)})", "name a registered protocol")
    unknown = sorted(set(family.defaults.generation) - GENERATION_FIELDS)
    if unknown:
        _fail(family, "defaults.generation", f"has unknown settings ({', '.join(unknown)})",
              f"use {', '.join(sorted(GENERATION_FIELDS))}")


def check_report(family: BenchmarkSpec) -> None:
    """The report hook, where there is one, imports and is callable."""
    try:
        writer = family.report_writer()
    except (ImportError, AttributeError, ValueError) as exc:
        _fail(family, "report", f"cannot be imported ({exc})", "name it as 'package.module:function'")
    if family.report is not None and not callable(writer):
        _fail(family, "report", "is not callable", "name a function taking the report context")


def check_demo(family: BenchmarkSpec) -> None:
    """A demo section (the cross-family tests build every family from it) with phantoms and a build step."""
    if family.demo is None:
        _fail(family, "demo", "is missing", "give (out, patients, seed) -> DemoSection: the cross-family tests and "
              "`medtemporal demo` build the family from it (medtemporal.family.DemoSteps)")
    section = family.demo(Path(tempfile.gettempdir()) / "medtemporal-check", 12, 0)
    if not isinstance(section, DemoSection) or not any(step[0] == "build" for step in section.steps):
        _fail(family, "demo", "does not return a DemoSection with a build step", "end it with DemoSteps.section")


def check_published(family: BenchmarkSpec) -> None:
    """The paper's result rows, or the reason there are none: exactly one of them."""
    if bool(family.published.tables) == (family.published.none is not None):
        _fail(family, "published", "holds both tables and a reason there are none, or neither",
              "give Published(tables=...) or Published(none=NoneFound(reason))")


def check_audit(family: BenchmarkSpec) -> None:
    """A known fit; the floor's baselines are registered backends and its metrics registered metrics."""
    from medtemporal.audit import FITS

    rules = family.audit
    schemes = [uri.partition(":")[0] for uri in rules.baselines]
    missing = _unknown("backend", schemes) + _unknown("metric", rules.floor_metrics if rules.baselines else ())
    if rules.fit not in FITS or missing:
        _fail(family, "audit", f"has fit {rules.fit!r} or names unregistered baselines or metrics "
                               f"({', '.join(missing) or 'none'})", f"use a fit of {', '.join(FITS)} and registered names")


def check_judge(family: BenchmarkSpec) -> None:
    """The judge, where there is one, is callable (a `medtemporal.scoring.judge.Rubric` or the family's pass)."""
    if family.judge is not None and not callable(family.judge):
        _fail(family, "judge", "is not callable", "give a Rubric or a function (run, judge, options) -> (block, verdicts)")


RULES: dict[str, Callable[[BenchmarkSpec], None]] = {
    "identity": check_identity, "build_options": check_build_options, "prompts": check_prompts,
    "answer_rules": check_answer_rules, "metrics": check_metrics, "groups": check_groups,
    "run_defaults": check_run_defaults, "report": check_report, "demo": check_demo, "published": check_published,
    "audit": check_audit, "judge": check_judge,
}
"""Rule name → its check (each docstring says the rule)."""


def check_demo_builds(family: BenchmarkSpec) -> None:
    """The demo's phantoms and build commands succeed in a temporary folder (seconds for a small family)."""
    from medtemporal.cli import main

    with tempfile.TemporaryDirectory(prefix="medtemporal-check-") as root:
        assert family.demo is not None
        for argv in family.demo(Path(root), 12, 0).commands():
            if argv[0] in ("phantoms", "build") and main(argv) != 0:
                _fail(family, "demo", f"step `medtemporal {' '.join(argv)}` failed", "run it to see why")


def family_checks(name: str, build: bool = False) -> list[FamilyCheck]:
    """The checks of family ``name``, one per rule (`RULES`), and the demo build with ``build``."""
    spec(name)  # one sentence for an unknown name
    rules = {**RULES, **({"demo_builds": check_demo_builds} if build else {})}
    return [FamilyCheck(name, rule, check) for rule, check in rules.items()]


def check_family(name: str, build: bool = False) -> dict[str, str | None]:
    """Run every check of family ``name``: rule → None where it holds, else the sentence saying what is wrong.

    Raises:
        UnknownNameError: no family of that name is registered.
    """
    out: dict[str, str | None] = {}
    for check in family_checks(name, build):
        try:
            check()
            out[check.rule] = None
        except ConformanceError as exc:
            out[check.rule] = str(exc)
    return out


def parametrize_with_checks(families: Iterable[str], build: bool = False) -> Any:
    """A ``pytest.mark.parametrize`` of every check of every family in ``families``, ids ``family:rule``."""
    import pytest

    checks = [c for name in families for c in family_checks(name, build)]
    return pytest.mark.parametrize("check", checks, ids=str)


def contract_fields() -> list[str]:
    """The fields of `BenchmarkSpec` (at most `MAX_FIELDS`)."""
    return [f.name for f in fields(BenchmarkSpec)]
