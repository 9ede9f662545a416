"""The declarative reader of released records (issue 38): a family declares fields, the reader checks them and
names file, line (or record) and field in one sentence, and gives table cells back typed."""

from __future__ import annotations

import json

import pytest

from medtemporal.errors import InvalidInputError
from medtemporal.sources.release_files import read_table
from medtemporal.sources.release_schema import ANY, Field, Schema

RECORD = Schema("a test question", (Field("id", int), Field("kind", choices=("g", "t")), Field("note", ANY),
                                     Field("image", pattern=r"files/p\d+/\w+\.jpg", like="a path like files/p1/a.jpg")),
                closed=True)
ROW = Schema("a test row", (Field("id", int), Field("label", choices=("yes", "no"), fold=str.lower, empty=True),
                            Field("score", float), Field("answer", strip=False), Field("dicom", non_empty=True)))
GOOD = {"id": 1, "kind": "g", "note": None, "image": "files/p1/a.jpg"}


@pytest.mark.parametrize(("change", "problem"), [
    ({"id": True}, "key `id` must be an integer"),
    ({"kind": "x"}, "key `kind` must be one of g, t, not 'x'"),
    ({"image": "/abs/a.jpg"}, "key `image` must be a path like files/p1/a.jpg"),
    ({"extra": 1}, "key `extra` is not one of the release's (id, kind, note, image)"),
])
def test_a_json_lines_record_that_breaks_the_declaration_is_one_sentence(tmp_path, change, problem):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, **change}) + "\n")
    with pytest.raises(InvalidInputError) as err:
        list(RECORD.json_lines(path, what="the released q.jsonl"))
    assert str(err.value) == f"{path}, line 2 is not a test question ({problem}); fix or remove that line."


def test_a_json_list_names_the_record_and_a_missing_key_comes_first(tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps([GOOD, {"kind": "x"}]) + "\n")
    with pytest.raises(InvalidInputError, match=r"q.json, record 1 is not a test question \(key `id` is missing\)"):
        RECORD.json_list(path, what="the released q.json")
    path.write_text(json.dumps(GOOD) + "\n")
    with pytest.raises(InvalidInputError, match="must hold a JSON list of records"):
        RECORD.json_list(path, what="the released q.json")


def test_table_cells_come_back_typed_and_a_bad_one_names_line_and_column(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("id,label,score,answer,dicom\n7, Yes ,0.5,no ,d1\n8.0,,2,yes,d2\n9,maybe,1,yes,d3\n")
    table = read_table(path, columns=ROW.names, what="the released q.csv")
    rows = list(ROW.rows(table, [0, 1]))
    assert rows == [(0, {"id": 7, "label": "yes", "score": 0.5, "answer": "no ", "dicom": "d1"}),
                    (1, {"id": 8, "label": None, "score": 2.0, "answer": "yes", "dicom": "d2"})]
    with pytest.raises(InvalidInputError) as err:
        list(ROW.rows(table))
    assert str(err.value) == "q.csv, line 4: label 'maybe' is none of yes, no; fix that row."
    path.write_text("id,label,score,answer,dicom\nx,yes,1,a,d\n1,yes,high,a,d\n1,yes,1,a, \n")
    table = read_table(path, columns=ROW.names, what="the released q.csv")
    problems = []
    for k in range(3):
        with pytest.raises(InvalidInputError) as err:
            list(ROW.rows(table, [k]))
        problems.append(str(err.value))
    assert problems == ["q.csv, line 2: id 'x' is not an integer; fix that row.",
                        "q.csv, line 3: score 'high' is not a number; fix that row.",
                        "q.csv, line 4: dicom is empty; fix that row."]
