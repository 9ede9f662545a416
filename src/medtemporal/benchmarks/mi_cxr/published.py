"""MI-CXR's published results (seeds/000): Tables 1 and 2 (the paper's default setting) and their temperature-0.7
repeats, Tables 15 and 16 (appendix C), transcribed row by row with the line each comes from.

Values are accuracies as fractions (three decimals, as printed); "Overall" is the paper's weighted mean of the
six columns (our "Overall (paper)", group ``overall:paper``, `medtemporal.benchmarks.mi_cxr.overall`). The
models were run on the paper's own MI-CXR test set with single-step prompting.
"""

from __future__ import annotations

from typing import Any

from medtemporal.published import Conditions, PublishedColumn, PublishedRow, PublishedTable

PAPER = "the MI-CXR paper"
SOURCE = "seeds/000"
"""The paper's text in ``../shared/seeds`` the rows cite by line."""
TEL_SINGLE = PublishedColumn("TEL Single (E/R)", "subtypes:TEL/Single (E/R)", "accuracy", scale=1.0)
TEL_MULTIPLE = PublishedColumn("TEL Multiple (E/R)", "subtypes:TEL/Multiple (E/R)", "accuracy", scale=1.0)
TEL_ORDER = PublishedColumn("TEL E→R / R→E", "subtypes:TEL/E\u2192R / R\u2192E", "accuracy", scale=1.0)
ICR = PublishedColumn("ICR", "task:ICR", "accuracy", scale=1.0)
GTS_SINGLE = PublishedColumn("GTS Single Abnormality", "subtypes:GTS/Single Abnormality", "accuracy", scale=1.0)
GTS_MULTI = PublishedColumn("GTS Multi Abnormality", "subtypes:GTS/Multi Abnormality", "accuracy", scale=1.0)
OVERALL = PublishedColumn("Overall", "overall:paper", "accuracy", scale=1.0)
RELEASED = "the paper's released test set (micxr_test.jsonl)"
DIRECT = "single-step (direct) prompting"


def _conditions(temperature: float | None = None) -> Conditions:
    """The paper's conditions: its released test set, every task, direct prompting, accuracy."""
    return Conditions(RELEASED, "all tasks", DIRECT, "accuracy; Overall the paper's weighted mean", temperature)


ICR_VARIANT = (PublishedColumn("ICR Variant", "task:ICR-V", "accuracy", scale=1.0),)

TABLE_1 = PublishedTable(PAPER, "Table 1", "Baseline performance of the state-of-the-art VLMs on MI-CXR",
                         "single-step (direct) prompting, the paper's default low temperature",
                         (TEL_SINGLE, TEL_MULTIPLE, TEL_ORDER, ICR, GTS_SINGLE, GTS_MULTI, OVERALL), (
    PublishedRow('Claude Sonnet 4.5', (0.226, 0.222, 0.243, 0.442, 0.389, 0.292, 0.315), line=187, section='Closed'),
    PublishedRow('Gemini 3.0 Pro', (0.246, 0.325, 0.29, 0.457, 0.556, 0.407, 0.387), line=188, section='Closed'),
    PublishedRow('GPT-5.2', (0.334, 0.371, 0.358, 0.438, 0.558, 0.39, 0.411), line=189, section='Closed'),
    PublishedRow('InternVL3.5-8B', (0.239, 0.295, 0.193, 0.552, 0.389, 0.371, 0.358), line=190, section='General'),
    PublishedRow('InternVL3.5-14B', (0.248, 0.266, 0.223, 0.293, 0.374, 0.276, 0.281), line=191, section='General'),
    PublishedRow('InternVL3.5-38B', (0.298, 0.306, 0.224, 0.571, 0.51, 0.515, 0.418), line=192, section='General'),
    PublishedRow('QwenVL3-8B', (0.237, 0.295, 0.185, 0.164, 0.328, 0.236, 0.234), line=193, section='General'),
    PublishedRow('QwenVL3-32B', (0.258, 0.246, 0.24, 0.224, 0.363, 0.325, 0.272), line=194, section='General'),
    PublishedRow('DeepSeek-VL-16B', (0.223, 0.124, 0.2, 0.186, 0.16, 0.187, 0.181), line=195, section='General'),
    PublishedRow('IDEFICS2-8B', (0.165, 0.308, 0.291, 0.246, 0.281, 0.178, 0.245), line=196, section='General'),
    PublishedRow('Lingshu-7B', (0.23, 0.26, 0.165, 0.189, 0.324, 0.194, 0.223), line=197, section='Medical'),
    PublishedRow('Lingshu-32B', (0.221, 0.247, 0.214, 0.167, 0.388, 0.29, 0.247), line=198, section='Medical'),
    PublishedRow('MedGemma-4B', (0.174, 0.196, 0.301, 0.281, 0.259, 0.183, 0.237), line=199, section='Medical'),
    PublishedRow('MedGemma-27B', (0.215, 0.351, 0.254, 0.429, 0.255, 0.214, 0.299), line=200, section='Medical'),
), source=SOURCE, digits=3, conditions=_conditions())
TABLE_2 = PublishedTable(PAPER, "Table 2", "Performance comparison on ICR Variant across model categories",
                         "single-step (direct) prompting, the paper's default low temperature", ICR_VARIANT, (
    PublishedRow('Claude Sonnet 4.5', (0.601,), line=231, section='Closed'),
    PublishedRow('Gemini 3.0 Pro', (0.743,), line=232, section='Closed'),
    PublishedRow('GPT-5.2', (0.765,), line=233, section='Closed'),
    PublishedRow('InternVL3.5-8B', (0.667,), line=234, section='General'),
    PublishedRow('InternVL3.5-14B', (0.661,), line=235, section='General'),
    PublishedRow('InternVL3.5-38B', (0.634,), line=236, section='General'),
    PublishedRow('QwenVL3-8B', (0.59,), line=237, section='General'),
    PublishedRow('QwenVL3-32B', (0.601,), line=238, section='General'),
    PublishedRow('DeepSeek-VL-16B', (0.284,), line=239, section='General'),
    PublishedRow('IDEFICS2-8B', (0.448,), line=240, section='General'),
    PublishedRow('Lingshu-7B', (0.585,), line=241, section='Medical'),
    PublishedRow('Lingshu-32B', (0.705,), line=242, section='Medical'),
    PublishedRow('MedGemma-4B', (0.617,), line=243, section='Medical'),
    PublishedRow('MedGemma-27B', (0.705,), line=244, section='Medical'),
), source=SOURCE, digits=3, conditions=_conditions())
TABLE_15 = PublishedTable(PAPER, "Table 15", "Performance of evaluated models with decoding temperature set to 0.7",
                          "single-step (direct) prompting, temperature 0.7 (its GTS columns in the other order)",
                          (TEL_SINGLE, TEL_MULTIPLE, TEL_ORDER, ICR, GTS_MULTI, GTS_SINGLE, OVERALL), (
    PublishedRow('Claude Sonnet 4.5', (0.217, 0.226, 0.234, 0.454, 0.292, 0.391, 0.316), line=957, section='Closed'),
    PublishedRow('Gemini 3.0 Preview', (0.259, 0.318, 0.251, 0.416, 0.399, 0.547, 0.37), line=958, section='Closed'),
    PublishedRow('GPT-5.2', (0.327, 0.345, 0.333, 0.426, 0.385, 0.545, 0.396), line=959, section='Closed'),
    PublishedRow('InternVL3.5-8B', (0.233, 0.262, 0.186, 0.543, 0.362, 0.377, 0.346), line=960, section='General'),
    PublishedRow('InternVL3.5-14B', (0.245, 0.267, 0.246, 0.325, 0.268, 0.378, 0.292), line=961, section='General'),
    PublishedRow('InternVL3.5-38B', (0.289, 0.282, 0.222, 0.546, 0.486, 0.498, 0.401), line=962, section='General'),
    PublishedRow('QwenVL3-8B', (0.228, 0.281, 0.198, 0.164, 0.237, 0.317, 0.231), line=963, section='General'),
    PublishedRow('QwenVL3-32B', (0.253, 0.259, 0.233, 0.227, 0.326, 0.37, 0.273), line=964, section='General'),
    PublishedRow('DeepSeek-VL-16B', (0.193, 0.128, 0.199, 0.18, 0.187, 0.158, 0.175), line=965, section='General'),
    PublishedRow('IDEFICS2-8B', (0.147, 0.283, 0.274, 0.243, 0.179, 0.235, 0.229), line=966, section='General'),
    PublishedRow('Lingshu-7B', (0.219, 0.261, 0.17, 0.18, 0.18, 0.319, 0.218), line=967, section='Medical'),
    PublishedRow('Lingshu-32B', (0.206, 0.236, 0.207, 0.221, 0.285, 0.355, 0.249), line=968, section='Medical'),
    PublishedRow('MedGemma-4B', (0.186, 0.245, 0.315, 0.287, 0.198, 0.264, 0.253), line=969, section='Medical'),
    PublishedRow('MedGemma-27B', (0.214, 0.328, 0.245, 0.42, 0.215, 0.262, 0.293), line=970, section='Medical'),
), source=SOURCE, digits=3, conditions=_conditions(0.7), note="rows at temperature 0.7")
TABLE_16 = PublishedTable(PAPER, "Table 16", "Performance comparison on the ICR Variant with decoding temperature "
                          "set to 0.7", "single-step (direct) prompting, temperature 0.7", ICR_VARIANT, (
    PublishedRow('Claude Sonnet 4.5', (0.607,), line=997, section='Closed'),
    PublishedRow('Gemini 3.0 Preview', (0.705,), line=998, section='Closed'),
    PublishedRow('GPT-5.2', (0.776,), line=999, section='Closed'),
    PublishedRow('InternVL3.5-8B', (0.667,), line=1000, section='General'),
    PublishedRow('InternVL3.5-14B', (0.623,), line=1001, section='General'),
    PublishedRow('InternVL3.5-38B', (0.683,), line=1002, section='General'),
    PublishedRow('QwenVL3-8B', (0.59,), line=1003, section='General'),
    PublishedRow('QwenVL3-32B', (0.612,), line=1004, section='General'),
    PublishedRow('DeepSeek-VL-16B', (0.246,), line=1005, section='General'),
    PublishedRow('IDEFICS2-8B', (0.421,), line=1006, section='General'),
    PublishedRow('Lingshu-7B', (0.574,), line=1007, section='Medical'),
    PublishedRow('Lingshu-32B', (0.612,), line=1008, section='Medical'),
    PublishedRow('MedGemma-4B', (0.612,), line=1009, section='Medical'),
    PublishedRow('MedGemma-27B', (0.694,), line=1010, section='Medical'),
), source=SOURCE, digits=3, conditions=_conditions(0.7), note="rows at temperature 0.7")
TABLES = (TABLE_1, TABLE_2, TABLE_15, TABLE_16)
"""Every table the paper prints of models' scores on MI-CXR, in the paper's order."""


def run_conditions(manifest: Any, config: Any, scores: Any) -> Conditions:
    """What a run measured on: the released test set (an ``--official`` import) or a build by rule, its tasks, its
    protocol."""
    if manifest is None or manifest.licence == "synthetic":
        test_set = "phantoms (synthetic data)"
    elif "official" in manifest.config:
        test_set = RELEASED
    else:
        test_set = "a build by rule from MIMIC-CXR (not the released test set)"
    tasks = config.tasks if config is not None else None
    protocol = str(scores.run.protocol)
    return Conditions(test_set, ", ".join(tasks) if tasks else "all tasks", DIRECT if protocol == "direct" else protocol,
                      "")
