"""Every task and subtype a family's build writes is explained in its report's glossary (the family's `glossary`)."""

from __future__ import annotations

import pytest

from helpers.families import FAMILIES, family_benches  # noqa: F401  (session fixture)
from medtemporal.benchmark import load
from medtemporal.contract import spec


@pytest.mark.parametrize("family", FAMILIES)
def test_every_task_and_subtype_of_a_build_has_a_glossary_entry(family, family_benches):  # noqa: F811
    items = load(family_benches[family]).items
    names = {i.task for i in items} | {i.subtype for i in items if i.subtype}
    missing = sorted(names - set(spec(family).glossary))
    assert names and not missing, f"{family}'s glossary does not explain {missing}"
