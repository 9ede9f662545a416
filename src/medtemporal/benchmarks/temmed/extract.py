"""TemMed-Bench's released answer-extraction rules, registered as extractors.

- ``temmed_yesno``: the output's first three characters are ``Yes``/``yes``/``YES``
  → Yes; else its first two are ``No``/``no``/``NO`` → No; else invalid. Nothing
  is stripped first, so " Yes" is invalid and "Nope" is No, as in the release.
- ``temmed_pair``: on the lowercased output, ``my answer is x``, ``my answer is **x**``
  or ``my answer is **x.**`` anywhere, letters tried in option order (A, then B,
  then C); else invalid. Being substring tests, "my answer is actually C" reads
  as A, as in the release.

Report generation uses the shared ``raw_text`` rule: the metrics lowercase and
strip the output themselves, exactly as released.

Invalid answers are None: scored wrong and counted, never guessed (the release
stopped with an error instead).

Version 2 applies both rules to the output's final answer (`medtemporal.scoring.extraction.final_text`): a
reasoning model's closed ``<think>`` block, the tags of its ``<answer>`` slot and a leaked chat turn are not
read; an output without them is read exactly as in the release.

>>> from medtemporal.schema import Item
>>> item = Item.create(benchmark="temmed", task="vqa", subtype="vqa", images=[], question="?",
...     answer_type="yesno", answer="Yes")
>>> temmed_yesno(item, "Yes."), temmed_yesno(item, "no change"), temmed_yesno(item, "The answer is yes")
('Yes', 'No', None)
"""

from __future__ import annotations

from medtemporal.family import Item, register
from medtemporal.scoring.extraction import final_text


@register("extractor", "temmed_yesno", version="2", answer_types=("yesno",),
          description="TemMed release: first 3 chars Yes/yes/YES → Yes, else first 2 No/no/NO → No, else invalid")
def temmed_yesno(item: Item, text: str) -> str | None:
    """``"Yes"``/``"No"`` from the final answer's first characters, or None (invalid)."""
    text = final_text(text)
    if text[:3] in ("Yes", "yes", "YES"):
        return "Yes"
    if text[:2] in ("No", "no", "NO"):
        return "No"
    return None


@register("extractor", "temmed_pair", version="2", answer_types=("choice",),
          description="TemMed release: 'my answer is x' / '**x**' / '**x.**' in the lowercased output, letters in order")
def temmed_pair(item: Item, text: str) -> str | None:
    """The first option letter (in option order) that ``my answer is …`` names, or None (invalid)."""
    lowered = final_text(text).lower()
    for letter in item.options:
        x = letter.lower()
        if any(p in lowered for p in (f"my answer is {x}", f"my answer is **{x}**", f"my answer is **{x}.**")):
            return letter
    return None
