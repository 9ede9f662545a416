"""Answer extraction on a corpus of realistic model outputs (`extraction_corpus.jsonl`).

Each line is one output as a user would see it from a VLM (``style`` names the kind of model that
writes it that way), the rule that reads it, the item it answers (``family/kind``, with ``:GOLD`` for
the gold-dependent ``rad3d_released`` rule), the answer expected under the paper's or the release's
rule (null: invalid) and a one-line reason. Choice and yes/no outputs follow MI-CXR's rule (E.5,
``seeds/000`` lines 1735-1744: one option, else wrong); TemMed's and 3D-RAD's released rules are
scored exactly as their releases read answers, echoes included (docs/extraction.md). Replies in Chinese
and other languages ("答案是C", "是的", "La respuesta es C") are read as their English forms are.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from medtemporal.benchmarks.rad3d.labels import EXISTENCE_OPTIONS, TEMPORAL_OPTIONS
from medtemporal.schema import Item
from medtemporal.scoring import extract

CORPUS = Path(__file__).with_name("extraction_corpus.jsonl")
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]

OPTIONS: dict[str, dict[str, str]] = {
    "mi-cxr/TEL": {"A": "T1 → T2", "B": "T2 → T3", "C": "T3 → T4", "D": "T4 → T5",
                   "E": "There is no new appearance of pleural effusion"},
    "mi-cxr/E2R": {"A": "T3, T4", "B": "T4, T5", "C": "T3, T5", "D": "T2, T3",
                   "E": "There is no sequential emergence to resolution"},
    "mi-cxr/ICR": {"A": "Between T1 and T2, the bilateral pulmonary edema has newly appeared.",
                   "B": "Between T2 and T3, the bilateral vascular congestion has worsened.",
                   "C": "Between T3 and T4, the cardiomegaly has newly appeared.",
                   "D": "Between T4 and T5, the bilateral sub-diaphragmatic air has newly appeared.",
                   "E": "None of the statements are true."},
    "mi-cxr/GTS": {"A": "Between T1 and T2, the bilateral consolidation resolves; then between T2 and T3 it newly "
                        "appears, between T3 and T4 it persists unchanged, and between T4 and T5 it resolves.",
                   "B": "Between T1 and T2, the bilateral consolidation persists unchanged; then between T2 and T3 it "
                        "improves but persists, and from T3 through T5 it persists unchanged.",
                   "C": "Between T1 and T2, the bilateral consolidation remains absent; then between T2 and T3 it newly "
                        "appears, between T3 and T4 it persists unchanged, and between T4 and T5 it worsens.",
                   "D": "From T1 through T4, the bilateral consolidation remains absent; then between T4 and T5 it "
                        "newly appears.",
                   "E": "None of them are true."},
    "3d-rad/task4": dict(EXISTENCE_OPTIONS),
    "3d-rad/task5": dict(TEMPORAL_OPTIONS),
    "temmed/image_pair": {x: f"image pair {x}" for x in "ABC"},
    "skillqa/order4": {x: f"Frame {x}" for x in "ABCD"},
}
BENCHMARK = {"mi-cxr": "mi-cxr", "3d-rad": "3d-rad", "temmed": "temmed", "skillqa": "skillqa", "generic": "mi-cxr"}


def item_for(name: str, rule: str) -> Item:
    """The item an output answers: ``family/kind`` (``:GOLD`` sets the gold letter)."""
    name, _, gold = name.partition(":")
    family = name.split("/")[0]
    if rule == "ordering":
        return Item.create(benchmark=BENCHMARK[family], task="ordering", subtype="cpr", images=[], question="Order.",
                           options=OPTIONS[name], answer_type="ordering", answer=list("DBAC"))
    if name in ("generic/yesno", "temmed/vqa"):
        return Item.create(benchmark=BENCHMARK[family], task="vqa", subtype="vqa", images=[], question="Changed?",
                           answer_type="yesno", answer="Yes")
    options = OPTIONS[name]
    return Item.create(benchmark=BENCHMARK[family], task=name.split("/")[1], subtype="s", images=[], question="?",
                       options=options, answer_type="choice", answer=gold or next(iter(options)))


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['rule']}-{r['item']}" for i, r in enumerate(ROWS)])
def test_corpus_output_is_read_as_expected(row: dict) -> None:
    got = extract(item_for(row["item"], row["rule"]), row["output"], rule=row["rule"]).answer
    assert got == row["expected"], f"{row['reason']} ({row['style']}): {row['output']!r}"


def test_corpus_covers_every_answer_type_and_shape() -> None:
    assert len(ROWS) >= 300
    assert all(r["reason"] and r["style"] for r in ROWS)
    by_rule = Counter(r["rule"] for r in ROWS)
    assert {"letter", "yesno", "ordering", "temmed_yesno", "temmed_pair", "rad3d_released"} <= set(by_rule)
    assert min(by_rule.values()) >= 15
    text = "\n".join(r["output"] for r in ROWS)
    for shape in ("<think>", "</think>", "<|im_end|>", "assistant\n", "{\"answer\"", "Ｃ", "**", "###"):
        assert shape in text, shape
    for shape in ("答案是", "选项", "选C", "我选择", "C选项", "。", "是的", "不是", "否", "答え", "정답", "respuesta", "réponse",
                  "Antwort", "Ответ", "Sí", "Nein"):  # the answers of models that reply in other languages
        assert shape in text, shape
    reasons = " ".join(r["reason"] for r in ROWS)
    for shape in ("echo", "hedge", "refusal", "one line", "several lines", "option text"):
        assert shape in reasons, shape
    invalid = Counter(r["rule"] for r in ROWS if r["expected"] is None)
    assert invalid["letter"] >= 40 and invalid["yesno"] >= 5
