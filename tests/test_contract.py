"""The family contract (`medtemporal.contract`) stays small, and every registered family keeps it.

- `BenchmarkSpec` has at most `MAX_FIELDS` fields, each set by two registered families or more, or naming the
  family (issue 38: a field one family needs is a grouped part, a protocol option or a registered plugin).
- The conformance check (`medtemporal.testing`, ``medtemporal check``) runs over every family the registry finds,
  one pytest case per family and rule, as a plugin's own suite would run it.
"""

from __future__ import annotations

import dataclasses

from medtemporal.cli import main
from medtemporal.contract import BenchmarkSpec, spec
from medtemporal.registry import discovered, isolated, names, register
from medtemporal.testing import MAX_FIELDS, check_family, contract_fields, parametrize_with_checks

FAMILIES = discovered("benchmark")
IDENTITY = ("name", "version", "licence", "description", "add_arguments", "build")
"""The fields that name the family and how it is built (every family sets them)."""


def test_the_contract_has_at_most_twenty_fields_each_set_by_two_families_or_naming_the_family():
    assert len(contract_fields()) <= MAX_FIELDS, contract_fields()
    defaults = {f.name: (f.default if f.default is not dataclasses.MISSING else f.default_factory())  # type: ignore[misc]
                for f in dataclasses.fields(BenchmarkSpec) if f.name not in IDENTITY}
    used = {name: [f for f in FAMILIES if getattr(spec(f), name) != default] for name, default in defaults.items()}
    assert {name: users for name, users in used.items() if len(users) < 2} == {}


@parametrize_with_checks(FAMILIES)
def test_every_registered_family_keeps_the_contract(check):
    check()


def test_a_family_breaking_a_rule_fails_that_check_in_one_sentence(capsys):
    good = spec("mmxu")
    with isolated():
        register("benchmark", "contract-test-broken")(dataclasses.replace(
            good, name="contract-test-broken", prompts={"*": "no_such_template"}, metrics={"*": ("no_such_metric",)},
            demo=None))
        results = check_family("contract-test-broken")
        assert main(["check", "contract-test-broken"]) == 1
    failed = {rule: problem for rule, problem in results.items() if problem}
    assert set(failed) == {"prompts", "metrics", "demo"}
    assert failed["prompts"] == ("contract-test-broken: BenchmarkSpec.prompts names templates that do not exist "
                                 "(no_such_template); add prompts/<name>.txt beside the module that defines build.")
    assert "BenchmarkSpec.demo is missing" in failed["demo"]
    out = capsys.readouterr().out
    assert "FAIL metrics: contract-test-broken: BenchmarkSpec.metrics names unregistered metrics (no_such_metric)" in out
    assert "contract-test-broken: 9 of 12 checks pass." in out
    assert "contract-test-broken" not in names("benchmark")  # the registry is as it was after the block


def test_check_passes_a_built_in_family_and_names_an_unknown_one(capsys):
    assert main(["check", "skillqa"]) == 0
    assert "skillqa: 12 of 12 checks pass." in capsys.readouterr().out
    assert main(["check", "skilqa"]) == 2
    assert "Did you mean 'skillqa'?" in capsys.readouterr().err

