"""``medtemporal phantoms mmxu``: the release's schema, answers that follow from the cohort's truth, balance, seeds."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from medtemporal.benchmarks.mmxu.phantom import REGIONS, write_mmxu_phantoms
from medtemporal.provenance import PHANTOM_TRUTH
from medtemporal.benchmarks.mmxu.release import KEYS, read_release
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.phantoms.cxr import CxrPhantom
from medtemporal.provenance import licence_of

WORDS = {"unchanged": "no change", "increased": "worsen", "new": "worsen", "decreased": "improved",
         "resolved": "improved"}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _level(finding: dict, side: str | None) -> int:
    covered = side is None or finding["laterality"] in (side, "bilateral")
    return finding["severity_level"] if finding["present"] and covered else 0


def _category(before: int, after: int) -> str:
    return "no change" if before == after else "worsen" if after > before else "improved"


def test_every_answer_follows_from_the_cohort_truth(cohort: CxrPhantom, release: Path) -> None:
    studies = {row["study_id"]: row for row in _lines(cohort.truth)}
    records, truths = _lines(release), _lines(release.parent / PHANTOM_TRUTH)
    assert [list(r) for r in records] == [list(KEYS)] * len(records) and len(records) > 150
    for record, truth in zip(records, truths, strict=True):
        prior, current = studies[truth["prior_study"]], studies[truth["current_study"]]
        assert (record["prior_image_path"], record["cur_image_path"]) == (prior["frontal"], current["frontal"])
        assert prior["patient_id"] == current["patient_id"] == truth["patient_id"]
        assert current["visit"] > prior["visit"]
        side, entities = REGIONS[truth["region"]]
        levels = {e: (_level(prior["findings"][e], side), _level(current["findings"][e], side)) for e in entities}
        assert [e for e, lv in levels.items() if lv != (0, 0)] == [truth["entity"]]  # one finding to ask about
        before, after = levels[truth["entity"]]
        assert record["content_type"] == _category(before, after) and truth["region"] in record["question"]
        answer = truth["claims"][record["answer"]]
        assert (answer["entity"], answer["content_type"], answer["true"]) == (truth["entity"], record["content_type"], True)
        assert answer["change"] == ("unchanged" if before == after else "new" if before == 0 else "resolved"
                                    if after == 0 else "increased" if after > before else "decreased")
        for letter, claim in truth["claims"].items():  # every other option states a change that did not happen
            assert WORDS[claim["change"]] == claim["content_type"]
            lv = levels[claim["entity"]]
            happened = lv != (0, 0) and _category(*lv) == claim["content_type"]
            assert happened == claim["true"] == (letter == record["answer"])


def test_content_types_and_letters_are_balanced_and_claims_repeat_alike(release: Path) -> None:
    records, truths = _lines(release), _lines(release.parent / PHANTOM_TRUTH)
    types = Counter(r["content_type"] for r in records)
    assert len(set(types.values())) == 1 and set(types) == {"no change", "worsen", "improved"}
    for ct in types:
        letters = Counter(r["answer"] for r in records if r["content_type"] == ct)
        assert max(letters.values()) - min(letters.values()) <= 1
    # within a region every (finding, content type) is the answer equally often: no claim is a safer bet
    answered = Counter((t["region"], t["entity"], t["content_type"]) for t in truths)
    for region in {t["region"] for t in truths}:
        assert len({n for (r, _, _), n in answered.items() if r == region}) == 1


def test_the_same_seed_gives_the_same_bytes_and_overwrite_is_explicit(cohort: CxrPhantom, tmp_path: Path) -> None:
    a, _ = write_mmxu_phantoms(cohort.root, tmp_path / "a", seed=3)
    b, _ = write_mmxu_phantoms(cohort.root, tmp_path / "b", seed=3)
    c, types = write_mmxu_phantoms(cohort.root, tmp_path / "c", seed=4, questions=60)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes() and sum(types.values()) <= 60
    with pytest.raises(InvalidInputError, match="pass --overwrite"):
        write_mmxu_phantoms(cohort.root, tmp_path / "a", seed=3)
    write_mmxu_phantoms(cohort.root, tmp_path / "a", seed=4, questions=60, overwrite=True)
    assert (tmp_path / "a" / "MMXU-test.jsonl").read_bytes() == c.read_bytes()
    with pytest.raises(InvalidInputError, match="holds no phantom_truth.jsonl"):  # a failed overwrite loses nothing
        write_mmxu_phantoms(tmp_path / "other", tmp_path / "a", overwrite=True)
    assert (tmp_path / "a" / "MMXU-test.jsonl").read_bytes() == c.read_bytes()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(InvalidInputError, match="not an empty folder; choose a new --out."):
        write_mmxu_phantoms(cohort.root, tmp_path / "other", overwrite=True)
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"


def test_bad_cohorts_are_refused_in_one_sentence(cohort: CxrPhantom, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="holds no phantom_truth.jsonl; pass --cxr the folder"):
        write_mmxu_phantoms(tmp_path, tmp_path / "out")
    small = tmp_path / "small"
    small.mkdir()
    (small / "phantom_truth.jsonl").write_text(cohort.truth.read_text().splitlines()[0] + "\n")
    with pytest.raises(InvalidInputError, match="too small for a balanced MMXU question set"):
        write_mmxu_phantoms(small, tmp_path / "out")
    (small / "phantom_truth.jsonl").write_text('{"patient_id": "p1"}\n')
    with pytest.raises(InvalidInputError, match="line 1 is not a CXR phantom truth line"):
        write_mmxu_phantoms(small, tmp_path / "out")
    with pytest.raises(InvalidInputError, match="--questions must be at least 1"):
        write_mmxu_phantoms(cohort.root, tmp_path / "out", questions=0)


def test_the_cli_kind_writes_a_release_the_reader_reads_and_the_licence_follows_the_data(
        cohort: CxrPhantom, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["phantoms", "mmxu", "--cxr", str(cohort.root), "--out", str(tmp_path / "ph"), "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "MMXU questions (no change" in out and "medtemporal build mmxu --official" in out
    path = tmp_path / "ph" / "MMXU-test.jsonl"
    assert len(read_release(path)) == len(path.read_text().splitlines())
    assert licence_of(path, cohort.mimic_cxr_jpg) == "synthetic"
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "ph", copy)
    (copy / "extra.txt").write_text("a real file beside the phantom")
    assert licence_of(copy / "MMXU-test.jsonl", cohort.mimic_cxr_jpg) == "credentialed"
