"""The report a model wrote, as scored: ``longitudinal_rrg_section`` (the main scoring); the whole output (variant).

General-purpose models often write a whole report (``FINDINGS: ... IMPRESSION: ...``), in Markdown
(``**Findings:**``, ``## Impression``), after a ``<think>`` block, or prefaced (``Here is the report:``).
``longitudinal_rrg_section`` takes the section the item asks for when the output has headers the report parser
knows (`medtemporal.sources.mimic_cxr_reports.parse_sections`; ``CONCLUSION`` is an impression), else the
whole output; ``<think>`` blocks and bold marks are removed first, a Markdown heading line is read as a
header, and a findings or impression header after a sentence's end, in any case, starts a line of its own (a report
written on one line, ``FINDINGS: ... IMPRESSION: ...``, is split). An output with headers but not the asked section (an impression only, for the findings task) is scored
whole: nothing is invented. Empty text is no answer. The papers' own models write the section alone, for which
both readings agree; the whole output is scored beside it (variant ``whole output``), labelled.

>>> from medtemporal.schema import Item
>>> item = Item.create(benchmark="longitudinal-rrg", task="findings", subtype="with_prior", images=[],
...                    question="q", answer_type="open", answer="x")
>>> section(item, "**Findings:** Lungs are clear.\\n**Impression:** Normal.")
'Lungs are clear.'
>>> section(item, "findings: Small effusion. impression: Effusion.")
'Small effusion.'
"""

from __future__ import annotations

import re

from medtemporal.family import Item, register
from medtemporal.scoring.extraction import final_text
from medtemporal.sources.mimic_cxr_reports import parse_sections

_HEADING = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]*([^\n:]*?)[ \t]*:?[ \t]*$")
"""A Markdown heading line (``## Findings``), read as a header (``Findings:``)."""
_INLINE = re.compile(r"(?i)(?<=[.!?;])[ \t]*\b(findings|impression|conclusion)[ \t]*:")
"""A narrative section's header after a sentence on its line (``... effusion. IMPRESSION: ...``)."""


@register("extractor", "longitudinal_rrg_section", version="3", answer_types=("open",),
          description="the asked report section when the output has section headers, else the whole output")
def section(item: Item, text: str) -> str | None:
    """The item's section of ``text`` (module doc); None when nothing is left. Version 2 reads the output's final
    answer (`medtemporal.scoring.extraction.final_text`: an ``<answer>`` slot's content, no leaked chat turn, no
    reasoning cut off by the token limit); version 3 splits a report written on one line at its headers."""
    plain = _INLINE.sub(r"\n\1:", _HEADING.sub(r"\1:", final_text(text).replace("**", "")))
    found = parse_sections(plain).get(item.task)
    answer = found if found else " ".join(plain.split())
    return answer or None
