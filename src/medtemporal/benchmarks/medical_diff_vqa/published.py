"""Medical-Diff-VQA's published results on "difference" questions: secondary transcriptions only, labelled so.

The paper's main text (Hu et al., KDD 2023) was not reachable and EKAID's repository holds no results (FACTS §5.2).
What could be read (``FACTS.md`` §7.2, each row's line cited) are third parties quoting papers:

- EKAID's table (arXiv 2307.11986) as a third party transcribed it: BLEU-1..4, METEOR, ROUGE-L, CIDEr by
  pycocoevalcap, as fractions; MCCFormers' row gives four of the seven.
- A later paper (arXiv 2606.06534, as quoted): BLEU-1, METEOR, ROUGE-L, CIDEr; it prints EKAID's ROUGE-L as 0.557
  where the first source has 0.577 (unresolved, so EKAID's row is not repeated from it).

Every row is a model trained on the dataset's training part. The test sets differ: EKAID cuts 80/10/10 by row
order (our ``--split ekaid``), 2606.06534 uses a 131,556 / 16,278 / 16,389 split.
"""

from __future__ import annotations

from typing import Any

from medtemporal.benchmarks.medical_diff_vqa.release import SPLITS
from medtemporal.published import Conditions, PublishedColumn, PublishedRow, PublishedTable

SOURCE = "FACTS"
"""The facts file in ``../shared`` whose lines the rows cite."""
GROUP = "task:difference"
TRAINED = "trained on the dataset's training part"
PYCOCO = "pycocoevalcap (PTB tokenizer), one reference per question"


def _column(label: str, metric: str) -> PublishedColumn:
    return PublishedColumn(label, GROUP, f"diffvqa_{metric}", scale=1.0)


EKAID_TABLE = PublishedTable(
    "EKAID (arXiv 2307.11986), as a third party transcribed it", "difference questions",
    "difference questions of EKAID's test set", "models trained on EKAID's 80% training cut; pycocoevalcap",
    (_column("BLEU-1", "bleu_1"), _column("BLEU-2", "bleu_2"), _column("BLEU-3", "bleu_3"),
     _column("BLEU-4", "bleu_4"), _column("METEOR", "meteor"), _column("ROUGE-L", "rouge_l"),
     _column("CIDEr", "cider")), (
        PublishedRow("IDCPCL", (0.614, 0.541, 0.474, 0.414, 0.303, 0.582, 0.703), line=586),
        PublishedRow("EKAID", (0.628, 0.553, 0.491, 0.434, 0.339, 0.577, 1.027), line=586),
        PublishedRow("MCCFormers", (0.214, None, None, None, 0.319, 0.340, 0.0), line=587)),
    digits=3, source=SOURCE, provenance="secondary",
    conditions=Conditions(SPLITS["ekaid"], "difference", TRAINED, PYCOCO),
    note="secondary: a third party's transcription of EKAID's table; trained models")
LATER_TABLE = PublishedTable(
    "arXiv 2606.06534, as quoted", "difference questions", "difference questions of its own split",
    "models trained on a 131,556 / 16,278 / 16,389 split; it prints EKAID's ROUGE-L as 0.557 (vs 0.577)",
    (_column("BLEU-1", "bleu_1"), _column("METEOR", "meteor"), _column("ROUGE-L", "rouge_l"),
     _column("CIDEr", "cider")), (
        PublishedRow("RegioMix", (0.705, 0.381, 0.651, 1.804), line=588),
        PublishedRow("PLURAL", (0.704, 0.381, 0.653, 1.832), line=588),
        PublishedRow("VED", (0.716, 0.389, 0.670, 2.119), line=589)),
    digits=3, source=SOURCE, provenance="secondary",
    conditions=Conditions("a 131,556 / 16,278 / 16,389 split (16,389 test)", "difference", TRAINED, PYCOCO),
    note="secondary: quoted; its own split, trained models")
TABLES = (EKAID_TABLE, LATER_TABLE)


def run_conditions(manifest: Any, config: Any, scores: Any) -> Conditions:
    """What a run measured on: the test set its build's ``--split`` names (phantoms for a phantom build), the
    difference questions, zero-shot with its protocol."""
    if manifest is None or manifest.licence == "synthetic":
        test_set = "phantoms (synthetic data)"
    else:
        test_set = SPLITS.get(str(manifest.config.get("split")), str(manifest.config.get("test_set")))
    return Conditions(test_set, "difference", f"zero-shot ({scores.run.protocol})", "")
