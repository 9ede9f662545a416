"""Published longitudinal report-generation results beside a run: MLRG's released log and Libra's README.

The family is ours (no paper defines it), so the rows are the two prior-aware MIMIC-CXR models whose numbers
their authors publish with the code (transcribed in the project's facts file, ``FACTS.md`` §6.1, each row's line
cited):

- MLRG (Liu et al., CVPR 2025), the MIMIC-CXR log of its released test outputs (``log_2024_10_20_14.log``):
  pycocoevalcap BLEU, METEOR 1.5, ROUGE-L and CIDEr on R2Gen-cleaned findings, as our ``r2gen_*`` metrics; RadGraph
  partial and CheXbert F1. Its test set is the R2Gen test list scored per image (3,852 rows), not per study.
- Libra (Zhang et al., ACL Findings 2025), its README's findings-section table: BLEU and ROUGE-L from Hugging Face
  ``evaluate`` on Libra's own cleaning (close to, not the same as, our ``r2gen_*``), RaTEScore and RG_ER (RadGraph
  partial). Its METEOR is nltk's (about 0.49 where pycocoevalcap's reads 0.18): no column of ours stands beside it.
"""

from __future__ import annotations

from medtemporal.published import PublishedColumn, PublishedRow, PublishedTable

SOURCE = "FACTS"
"""The facts file in ``../shared`` whose lines the rows cite."""
GROUP = "task:findings"
MLRG = PublishedTable(
    "MLRG (CVPR 2025)", "released MIMIC-CXR test log", "findings generated with the prior study",
    "beam 3, max length 100; per image (3,852 rows of the R2Gen test list); pycocoevalcap on R2Gen-cleaned text",
    (PublishedColumn("BLEU-1", GROUP, "r2gen_bleu_1", scale=1.0), PublishedColumn("BLEU-4", GROUP, "r2gen_bleu_4", scale=1.0),
     PublishedColumn("METEOR", GROUP, "r2gen_meteor", scale=1.0),
     PublishedColumn("ROUGE-L", GROUP, "r2gen_rouge_l", scale=1.0), PublishedColumn("CIDEr", GROUP, "r2gen_cider", scale=1.0),
     PublishedColumn("RadGraph partial", GROUP, "radgraph_f1_partial", scale=1.0),
     PublishedColumn("CheXbert-5 micro F1", GROUP, "chexbert_f1_5_micro", scale=1.0),
     PublishedColumn("CheXbert-14 micro F1", GROUP, "chexbert_f1_14_micro", scale=1.0),
     PublishedColumn("CheXbert-14 macro F1", GROUP, "chexbert_f1_14_macro", scale=1.0)),
    (PublishedRow("MLRG", (0.4111, 0.1582, 0.1763, 0.3195, 0.3600, 0.2907, 0.5504, 0.5050, 0.3642), line=454),),
    digits=4, source=SOURCE)
LIBRA = PublishedTable(
    "Libra (ACL Findings 2025)", "README results", "findings generated with the prior image",
    "beam 10, length penalty 2; Hugging Face evaluate on Libra's cleaning (BLEU, ROUGE-L); its METEOR is nltk's and "
    "has no counterpart here",
    (PublishedColumn("BLEU-1", GROUP, "r2gen_bleu_1"), PublishedColumn("BLEU-4", GROUP, "r2gen_bleu_4"),
     PublishedColumn("METEOR (nltk)"), PublishedColumn("ROUGE-L", GROUP, "r2gen_rouge_l"),
     PublishedColumn("RaTEScore", GROUP, "ratescore"), PublishedColumn("RG_ER", GROUP, "radgraph_f1_partial")),
    (PublishedRow("Libra-v1.0-7b", (51.3, 24.5, 48.9, 36.7, 61.5, 37.6), line=438),
     PublishedRow("Libra-v1.0-3b", (50.5, 23.3, 48.5, 35.2, 61.1, 37.5), line=438),
     PublishedRow("Med-CXRGen-F", (37.3, 10.3, 35.6, 24.0, 53.7, 23.8), line=438)),
    digits=1, source=SOURCE)
TABLES = (MLRG, LIBRA)
