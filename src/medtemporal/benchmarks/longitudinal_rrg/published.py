"""Published MIMIC-CXR report-generation results beside a run, each table with the test set, section, protocol and
metric implementation that decide whether a run stands comparable beside it (`medtemporal.published.Conditions`).

The family is ours (no paper defines it), so the rows are what the field publishes, transcribed from the project's
facts file (``FACTS.md`` §6.1 and §7.3), each row's line cited:

- ReXrank (primary, its gh-pages CSVs): the official test split's 2,347 studies, **current study only, no prior
  given**; findings and findings + impression. Its BLEU-2 (fast_bleu), BERTScore (distilroberta, rescaled) and
  RadGraph (combined) are implemented otherwise than ours: no run value stands in those columns.
- Longitudinal-MIMIC (re-print: STRIVE's Table 2): the 2,058 test studies whose patient has an earlier test study,
  given the most recent prior study and its report; every row retrained and scored with ReXrank's suite. A run is
  comparable only when its build recorded ``prior_rule`` ``longitudinal-mimic`` (absent: not comparable).
- MAIRA-2's prior ablation (secondary: a transcription of arXiv 2406.04449v2 Table D.9): one model with and without
  the prior, the published analogue of this family's with-prior vs current-only comparison.

- MLRG (Liu et al., CVPR 2025), the MIMIC-CXR log of its released test outputs (``log_2024_10_20_14.log``):
  pycocoevalcap BLEU, METEOR 1.5, ROUGE-L and CIDEr on R2Gen-cleaned findings, as our ``r2gen_*`` metrics; RadGraph
  partial and CheXbert F1. Its test set is the R2Gen test list scored per image (3,852 rows), not per study.
- Libra (Zhang et al., ACL Findings 2025), its README's findings-section table: BLEU and ROUGE-L from Hugging Face
  ``evaluate`` on Libra's own cleaning (close to, not the same as, our ``r2gen_*``), RaTEScore and RG_ER (RadGraph
  partial). Its METEOR is nltk's (about 0.49 where pycocoevalcap's reads 0.18): no column of ours stands beside it.
"""

from __future__ import annotations

from typing import Any

from medtemporal.published import Conditions, PublishedColumn, PublishedRow, PublishedTable

SOURCE = "FACTS"
"""The facts file in ``../shared`` whose lines the rows cite."""
GROUP = "task:findings"
CURRENT_ONLY = "current study only (no prior image or report)"
PRIOR_REPORT = "current study + most recent prior study and its report"
PROTOCOLS = {"rrg-current": CURRENT_ONLY, "rrg-prior-report": PRIOR_REPORT,
             "rrg-prior-images": "current and prior images, no prior report"}
"""The family's protocols → what the model is given, as the published tables' conditions name it."""
REXRANK_TEST = "MIMIC-CXR official test split, the 2,347 R2Gen/ReXrank studies"
LONGITUDINAL_MIMIC = "Longitudinal-MIMIC: the 2,058 of those 2,347 studies whose patient has an earlier test study"
LONGITUDINAL_RULE = "longitudinal-mimic"
"""The ``prior_rule`` a build records when it selects Longitudinal-MIMIC's studies and priors."""
REXRANK_SUITE = "ReXrank's metric suite (SembScore, 1/RadCliQ-v1, RaTEScore, GREEN as CXR-Report-Metric)"
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
    digits=4, source=SOURCE,
    conditions=Conditions("R2Gen test list scored per image (3,852 rows)", "findings",
                          "trained; current images + the prior study", "pycocoevalcap on R2Gen-cleaned text"),
    note="scored per image, not per study")
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
    digits=1, source=SOURCE,
    conditions=Conditions("MIMIC-CXR official test split, Libra's findings file", "findings",
                          "trained; current image + the prior image", "Hugging Face evaluate on Libra's cleaning"),
    note="Libra's own cleaning and test file")


REXRANK_METRICS = {"SembScore": "semb_score", "1/RadCliQ-v1": "inv_radcliq_v1", "RaTEScore": "ratescore",
                   "GREEN": "green_score"}
"""ReXrank's columns that our metrics implement as CXR-Report-Metric does; its others have no counterpart here."""


def rexrank_columns(*labels: str) -> tuple[PublishedColumn, ...]:
    """Columns of ReXrank's suite as a table prints them (fractions), a run's value only where our metric is the same
    implementation (`REXRANK_METRICS`)."""
    return tuple(PublishedColumn(label, GROUP, REXRANK_METRICS[label], scale=1.0) if label in REXRANK_METRICS
                 else PublishedColumn(label, scale=1.0) for label in labels)


REXRANK_COLUMNS = rexrank_columns("BLEU-2 (fast_bleu)", "BERTScore (distilroberta)", "SembScore", "RadGraph (combined)",
                                  "1/RadCliQ-v1", "RaTEScore", "GREEN")


OWN_IMPLEMENTATIONS = ("its BLEU-2 (fast_bleu), BERTScore (distilroberta, rescaled) and RadGraph (combined) are "
                       "implemented otherwise than ours (no counterpart here)")
REXRANK = "ReXrank (rajpurkarlab/ReXrank@b7efa9f, gh-pages)"
REXRANK_FINDINGS = PublishedTable(
    REXRANK, "results/findings_result_mimiccxr.csv", "MIMIC-CXR findings, selected rows of 25",
    "official test split, 2,347 studies; no prior image or report given to the models; " + OWN_IMPLEMENTATIONS,
    REXRANK_COLUMNS, (
        PublishedRow("MAIRA-2", (0.088, 0.308, 0.339, 0.131, 0.694, 0.517, 0.224), line=596),
        PublishedRow("Libra", (0.232, 0.402, 0.403, 0.218, 0.898, 0.523, 0.356), line=596),
        PublishedRow("CXRMate-ED", (0.208, 0.383, 0.396, 0.223, 0.872, 0.531, 0.327), line=597),
        PublishedRow("CXRMate-RRG24", (0.198, 0.367, 0.423, 0.220, 0.870, 0.521, 0.338), line=597),
        PublishedRow("MedGemma", (0.165, 0.346, 0.339, 0.159, 0.744, 0.549, 0.293), line=598),
        PublishedRow("CheXagent", (0.113, 0.346, 0.347, 0.148, 0.741, 0.474, 0.257), line=598),
        PublishedRow("MedVersa", (0.209, 0.448, 0.466, 0.273, 1.103, 0.550, 0.374), line=599),
        PublishedRow("GPT4V", (0.068, 0.207, 0.214, 0.084, 0.558, 0.423, 0.161), line=599),
        PublishedRow("RadPhi3.5Vision", (0.223, 0.386, 0.431, 0.207, 0.888, 0.534, 0.294), line=600),
        PublishedRow("UniRG-CXR", (0.248, 0.493, 0.487, 0.265, 1.217, 0.596, 0.352), line=600)),
    digits=3, source=SOURCE,
    conditions=Conditions(REXRANK_TEST, "findings", CURRENT_ONLY, REXRANK_SUITE),
    note="ReXrank's protocol is current-study-only: no prior is given, so only a run of --protocol rrg-current is "
         "comparable")
REXRANK_FULL = PublishedTable(
    REXRANK, "results/result_mimiccxr.csv", "MIMIC-CXR findings + impression, one row of 7",
    "official test split; reference \"Findings: … Impression: …\"; no prior given; " + OWN_IMPLEMENTATIONS,
    REXRANK_COLUMNS, (
        PublishedRow("MedVersa", (0.193, 0.430, 0.315, 0.273, 0.919, 0.554, 0.421), line=601),),
    digits=3, source=SOURCE,
    conditions=Conditions(REXRANK_TEST, "findings + impression", CURRENT_ONLY, REXRANK_SUITE),
    note="current-study-only; findings + impression as one text, which no task of this family generates")
STRIVE = PublishedTable(
    "STRIVE (arXiv id not found)", "Table 2", "Longitudinal-MIMIC, every row retrained and scored under one protocol",
    "the current study with the most recent prior study and its report; ReXrank's metric suite, whose BLEU, "
    "BERTScore and RadGraph-F1 are its own implementations (no counterpart here)",
    rexrank_columns("1/RadCliQ-v1", "BLEU (ReXrank's)", "BERTScore (ReXrank's)", "SembScore", "RadGraph-F1 (ReXrank's)",
                    "RaTEScore", "GREEN"), (
        PublishedRow("Prefilling (Zhu et al. 2023)", (0.819, 0.176, 0.397, 0.352, 0.180, 0.528, 0.281), line=608),
        PublishedRow("HERGen", (0.866, 0.200, 0.410, 0.369, 0.201, 0.538, 0.298), line=608),
        PublishedRow("MLRG", (0.819, 0.193, 0.377, 0.374, 0.189, 0.530, 0.299), line=609),
        PublishedRow("LLM-RG4", (0.925, 0.216, 0.428, 0.395, 0.216, 0.554, 0.337), line=609),
        PublishedRow("Diff-RRG", (0.900, 0.220, 0.426, 0.376, 0.211, 0.542, 0.322), line=610),
        PublishedRow("PriorRG", (1.141, 0.270, 0.484, 0.441, 0.270, 0.577, 0.341), line=610),
        PublishedRow("STRIVE", (1.173, 0.272, 0.483, 0.467, 0.270, 0.582, 0.342), line=611)),
    digits=3, source=SOURCE, provenance="re-print",
    conditions=Conditions(LONGITUDINAL_MIMIC, "findings", PRIOR_REPORT, REXRANK_SUITE),
    note="comparable only with a build whose prior_rule is longitudinal-mimic, run with the prior report")
MAIRA2 = PublishedTable(
    "MAIRA-2 (arXiv 2406.04449v2), as transcribed", "Table D.9", "one model with and without the prior study",
    "2,181 test studies with a prior; the same model inferred with the prior image, report and comparison, and "
    "without them; its ROUGE-L and RadCliQ (v0) implementations are not stated (no counterpart here)",
    (PublishedColumn("ROUGE-L"), PublishedColumn("CheXbert macro-F1-14", GROUP, "chexbert_f1_14_macro"),
     PublishedColumn("RadCliQ (v0), lower is better")), (
        PublishedRow("MAIRA-2", (38.4, 43.7, 2.64), line=621, section="with prior image + report + comparison"),
        PublishedRow("MAIRA-2", (27.3, 35.8, 3.18), line=622, section="no prior, no comparison")),
    digits=1, source=SOURCE, provenance="secondary",
    conditions=Conditions("MIMIC-CXR official test split, MAIRA-2's 2,181 studies with a prior", "findings",
                          "MAIRA-2's prompt, with and without the prior", "MAIRA-2's (ROUGE-L, RadCliQ v0 not ours)"),
    note="secondary transcription; RadCliQ v0 is lower-is-better and printed as is")
TABLES = (REXRANK_FINDINGS, REXRANK_FULL, STRIVE, MAIRA2, MLRG, LIBRA)


def run_conditions(manifest: Any, config: Any, scores: Any) -> Conditions:
    """What a run measured on: its build's test set (``prior_rule`` ``longitudinal-mimic`` selects
    Longitudinal-MIMIC's; the official test split's 2,347 studies are ReXrank's), the findings section (the
    tables' columns), and what its protocol gives the model."""
    settings = manifest.config if manifest is not None else {}
    if manifest is None or manifest.licence == "synthetic":
        test_set = "phantoms (synthetic data)"
    elif settings.get("prior_rule") == LONGITUDINAL_RULE:
        test_set = LONGITUDINAL_MIMIC
    elif settings.get("split") == "test" and settings.get("studies") == 2347:
        test_set = REXRANK_TEST
    else:
        test_set = f"MIMIC-CXR {settings.get('split')} split, {settings.get('studies', 0):,} studies (medtemporal's rule)"
    tasks = (config.tasks if config is not None else None) or settings.get("sections") or ["findings"]
    protocol = str(scores.run.protocol)
    return Conditions(test_set, "findings" if "findings" in tasks else ", ".join(tasks),
                      PROTOCOLS.get(protocol, protocol), "")
