"""MS-CXR-T's published results beside a run, transcribed from the project's facts file (``FACTS.md`` §7.1, each
row's line cited):

- MedGemma 1.5's model card (primary, ``google/medgemma-1.5-4b-it``, "Imaging evaluations"): "Macro Accuracy" on
  disease progression of four generative VLMs, the closest published analogue of a medtemporal run; the card gives
  neither the prompt nor which pairs were asked, so no run is comparable with it.
- CPO's Table 2 (re-print, arXiv 2505.13081; its project page's text), per-finding "Top-1 accuracy": fine-tuned
  image-encoder classifiers, and CPO's fine-tuned generative Qwen2.5-VL-7B rows: two protocols, two tables.
  Med-ST's row is left out (its five values appear in different column orders in two re-prints).
- BioViL-T's model card (primary, ``microsoft/BiomedVLP-BioViL-T@fc335c4``): the temporal sentence similarity task
  (361 pairs) scored by zero-shot text embeddings, accuracy and ROC-AUC.

Contamination (FACTS §7.1): CheXinstruct puts 1,252 MS-CXR-T progression instances in its *train* split, so a
model trained on it (CheXagent) may have seen the test labels.
"""

from __future__ import annotations

from typing import Any

from medtemporal.benchmarks.ms_cxr_t import similarity
from medtemporal.published import Conditions, PublishedColumn, PublishedRow, PublishedTable

SOURCE = "FACTS"
"""The facts file in ``../shared`` whose lines the rows cite."""
PROGRESSION = "progression labels of the release (1,326)"
"""The test set of a build from the released file: every labelled (image pair, finding)."""
SENTENCE_PAIRS = "sentence pairs of the release (361)"
ZERO_SHOT = "zero-shot generative: both images and a question, one answer"
UNSTATED_PAIRS = "MS-CXR-T progression, pairs asked not stated"
FINDINGS = (("Consolidation", "consolidation"), ("Pl. effusion", "pleural_effusion"), ("Pneumonia", "pneumonia"),
            ("Pneumothorax", "pneumothorax"), ("Edema", "edema"))
"""CPO's columns, in its order, and our finding subtypes."""
PER_FINDING = (*(PublishedColumn(label, f"subtype:{finding}", "accuracy") for label, finding in FINDINGS),
               PublishedColumn("Avg", "task:progression", "mscxrt_accuracy_mean"))
QWEN = "Qwen2.5-VL-7B"
CPO = "CPO (arXiv 2505.13081), Table 2, via its project page (XiaoyuYoung/CPO@089be99:index.html)"

MEDGEMMA = PublishedTable(
    "MedGemma 1.5's model card", "Imaging evaluations", "MS-CXR-T disease progression, macro accuracy",
    "generative VLMs; the card gives neither the prompt nor the pairs asked",
    (PublishedColumn("Macro Accuracy", "task:progression", "mscxrt_macro_accuracy"),), (
        PublishedRow("Gemma 3 4B", (59.0,), line=566),
        PublishedRow("MedGemma 1 4B", (61.11,), line=566),
        PublishedRow("MedGemma 1.5 4B", (65.7,), line=567),
        PublishedRow("MedGemma 1 27B", (50.1,), line=567)),
    digits=2, source=SOURCE, provenance="primary",
    conditions=Conditions(UNSTATED_PAIRS, "progression", "generative, prompt not stated",
                          "macro accuracy, definition not stated (ours: mean per-class recall)"),
    note="the card states neither prompt nor pair selection: no run is comparable; closest published analogue")
ENCODERS = PublishedTable(
    CPO, "Table 2 (encoder rows)", "per-finding top-1 accuracy of fine-tuned image-encoder classifiers",
    "classifiers fine-tuned on progression labels, as re-printed by CPO", PER_FINDING, (
        PublishedRow("CTrans", (44.0, 61.3, 45.1, 31.5, 65.5, 49.5), line=571),
        PublishedRow("CheXRelNet", (47.0, 47.0, 47.0, 36.0, 49.0, 45.2), line=571),
        PublishedRow("BioViL", (56.0, 63.0, 60.2, 42.5, 67.5, 57.8), line=571),
        PublishedRow("BioViL-T", (61.1, 67.0, 61.9, 42.6, 68.5, 60.2), line=572),
        PublishedRow("TempA-VLP", (65.2, 59.4, 73.4, 43.1, 77.1, 63.6), line=572),
        PublishedRow("CoCa-CXR", (70.4, 69.6, 61.4, 72.8, 71.8, 69.2), line=572)),
    digits=1, source=SOURCE, provenance="re-print",
    conditions=Conditions(UNSTATED_PAIRS, "progression", "fine-tuned classifier", "top-1 accuracy"),
    note="fine-tuned classifiers, not zero-shot generation")
GENERATIVE = PublishedTable(
    CPO, "Table 2 (CPO's rows)", "per-finding top-1 accuracy of Qwen2.5-VL-7B fine-tuned by CPO",
    "generative Qwen2.5-VL-7B after SFT, DPO or CPO training, as re-printed by CPO", PER_FINDING, (
        PublishedRow("SFT", (54.9, 71.7, 70.0, 95.9, 76.5, 73.8), line=573, section=QWEN),
        PublishedRow("DPO", (63.2, 72.4, 76.7, 93.5, 76.3, 76.4), line=573, section=QWEN),
        PublishedRow("CPO", (77.7, 72.7, 87.4, 95.8, 75.3, 81.8), line=574, section=QWEN)),
    digits=1, source=SOURCE, provenance="re-print",
    conditions=Conditions(UNSTATED_PAIRS, "progression", "generative, fine-tuned on temporal data", "top-1 accuracy"),
    note="fine-tuned generative model, not zero-shot")
SENTENCES = PublishedTable(
    "BioViL-T's model card", "Performance", "temporal sentence similarity, 361 pairs, zero-shot embeddings",
    "cosine of the two sentences' embeddings; accuracy at a threshold and ROC-AUC",
    (PublishedColumn("Accuracy", "task:sentence_similarity", "mscxrt_similarity_accuracy", variant=similarity.NAME),
     PublishedColumn("ROC-AUC", "task:sentence_similarity", "mscxrt_similarity_auc", scale=1.0,
                     variant=similarity.NAME)), (
        PublishedRow("PubMedBERT", (60.39, 0.542), line=578),
        PublishedRow("CXR-BERT-General", (62.60, 0.601), line=579),
        PublishedRow("CXR-BERT-Specialized", (78.12, 0.837), line=579),
        PublishedRow("BioViL-T", (87.77, 0.933), line=579)),
    digits=2, source=SOURCE, provenance="primary",
    conditions=Conditions(SENTENCE_PAIRS, "sentence similarity", similarity.PROTOCOL,
                          "accuracy at a threshold, ROC-AUC"),
    note="the threshold of the card's accuracy is not stated (ours: MedST's search)")
TABLES = (MEDGEMMA, ENCODERS, GENERATIVE, SENTENCES)


def run_conditions(manifest: Any, config: Any, scores: Any) -> Conditions:
    """What a run of MS-CXR-T measured on, from its benchmark's manifest and its protocol: the released file's
    labels or sentence pairs (task counts as the release has them) or another set, and how the model was asked."""
    protocol = str(scores.run.protocol)
    task, released, section = (("sentence_similarity", 361, "sentence similarity") if protocol == similarity.PROTOCOL
                               else ("progression", 1326, "progression"))
    count = manifest.counts.get("task", {}).get(task, 0) if manifest is not None else 0
    if manifest is None or manifest.licence == "synthetic":
        test_set = "phantoms (synthetic data)"
    elif count == released:
        test_set = PROGRESSION if task == "progression" else SENTENCE_PAIRS
    else:
        test_set = f"{count:,} {section} items (not the release's {released:,})"
    return Conditions(test_set, section, protocol if protocol == similarity.PROTOCOL else f"{ZERO_SHOT} ({protocol})",
                      "")
