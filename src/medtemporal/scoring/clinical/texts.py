"""The two texts every report metric compares, and R2Gen's report cleaning.

`report_pairs` gives each item's reference (``Item.reference``, else an open item's answer) and the
model's report (the extracted answer; None, a missing or invalid answer,
counts as an empty report). `r2gen_clean` is the cleaning the R2Gen lineage
applies before its pycocoevalcap metrics
(cuhksz-nlp/R2Gen@5a2e63f:modules/tokenizers.py, ``clean_report_mimic_cxr``;
the same in Longitudinal-MIMIC and DDaTR): lowercase, collapse repeated
underscores, spaces and full stops, drop list numbers ``1.`` … ``5.``, split
into sentences on ``". "``, strip punctuation from each sentence with R2Gen's
character class, and join the sentences with ``" . "`` and a final ``" ."``.
The vocabulary step of R2Gen (rare words → ``<unk>``, learnt on its training
split) and its truncation to 100 tokens are not applied: they depend on a
trained model's tokenizer, not on the text.

>>> r2gen_clean("1. Small left pleural effusion.  2. No pneumothorax.")
'small left pleural effusion . no pneumothorax .'
"""

from __future__ import annotations

import re
from typing import Sequence

from medtemporal.schema import Item
from medtemporal.scoring.text_metrics import reference_texts

# R2Gen's sentence cleaner strips this character class as written in its source; note that ":-\[" is a range
# (":" to "["), so ";<=>?@" and the capitals go too (R2Gen@5a2e63f:modules/tokenizers.py, sent_cleaner).
_R2GEN_STRIP = re.compile(r"[.,?;*!%^&_+():-\[\]{}]")
_R2GEN_REPLACE = (("\n", " "), *(("__", "_"),) * 7, *(("  ", " "),) * 6, *(("..", "."),) * 8, ("1. ", ""),
                  (". 2. ", ". "), (". 3. ", ". "), (". 4. ", ". "), (". 5. ", ". "), (" 2. ", ". "),
                  (" 3. ", ". "), (" 4. ", ". "), (" 5. ", ". "))
"""R2Gen's report-level replacements, in its order (each applied once, as its chained ``str.replace`` calls)."""


def r2gen_clean(report: str) -> str:
    """``report`` cleaned as R2Gen's ``clean_report_mimic_cxr`` does (see the module doc); an empty report stays
    empty (R2Gen cleans references: a model's empty output is no sentence, not ``" ."``).

    >>> r2gen_clean("  ")
    ''
    """
    if not report.strip():
        return ""
    text = report
    for old, new in _R2GEN_REPLACE:
        text = text.replace(old, new)
    sentences = text.strip().lower().split(". ")
    cleaned = [_R2GEN_STRIP.sub("", s.replace('"', "").replace("/", "").replace("\\", "").replace("'", "")
                                 .strip().lower()) for s in sentences]
    return " . ".join(cleaned) + " ."


def report_pairs(items: Sequence[Item], answers: Sequence[object]) -> tuple[list[str], list[str]]:
    """Each item's reference and output report (`medtemporal.scoring.text_metrics.reference_texts`), a missing
    output as ``""``.

    Raises:
        InvalidInputError: an item has no reference.
    """
    refs, outs = reference_texts(items, answers)  # type: ignore[arg-type]
    return refs, ["" if out is None else out for out in outs]
