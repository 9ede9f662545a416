"""The one reader of released files (issue 32 §3): a file that ends in the middle of a record is refused in one
sentence naming the file and the line, whatever its format; a whole file reads, with each row's line."""

import gzip
import json
from pathlib import Path

import pytest

from medtemporal.errors import InvalidInputError
from medtemporal.sources.release_files import first_of_each, read_json, read_jsonl, read_table

WHAT = "the released q.csv"


def _refused(path: Path, read=lambda p: read_table(p, what=WHAT)) -> str:
    with pytest.raises(InvalidInputError) as err:
        read(path)
    message = str(err.value)
    assert "\n" not in message and str(path) in message, message
    return message


@pytest.mark.parametrize(("body", "needle"), [
    (b"a,b,c\n1,2,3\n4,5", "ends in the middle of line 3 (no line break after it)"),
    (b"a,b,c\n1,2,3\n4,5\n", "its last one (line 3) has 2 of the header's 3 fields"),
    (b'a,b,c\n1,"x\ny",3\n4,"p\nq"\n', "its last one (line 4) has 2 of the header's 3 fields"),
    (b'a,b,c\n1,2,3\n4,"cut in\nthe middle', "ends inside a quoted field of the record on line 3"),
    (b'a,b,c\n1,2,3\n4,"cut in\nthe middle\n', "ends inside a quoted field of the record on line 3"),
])
def test_a_table_cut_in_a_record_is_refused_naming_the_line(tmp_path, body, needle):
    path = tmp_path / "q.csv"
    path.write_bytes(body)
    message = _refused(path)
    assert needle in message and "cut short" in message and WHAT in message, message


def test_a_cut_gzip_and_other_damage_are_one_sentence(tmp_path):
    whole = b"a,b\n" + b"".join(b"%d,%d\n" % (k, k * k) for k in range(5000))
    cut = tmp_path / "q.csv.gz"
    packed = gzip.compress(whole)
    cut.write_bytes(packed[: len(packed) // 2])
    assert "ends before its gzip stream does, so it is cut short" in _refused(cut)
    (tmp_path / "u.csv").write_bytes(b"a,b\n1,2\n3,\xff\n")
    assert "line 3 is not UTF-8 text" in _refused(tmp_path / "u.csv")
    (tmp_path / "w.csv").write_bytes(b"a,b\n1,2\n3,4,5\n6,7\n")
    assert "line 3 has 3 fields where the header has 2" in _refused(tmp_path / "w.csv")
    (tmp_path / "c.csv").write_bytes(b"a,b\n1,2\n")
    assert "lacks the column(s) z" in _refused(tmp_path / "c.csv", lambda p: read_table(p, columns=("z",), what=WHAT))
    (tmp_path / "r.xlsx").write_bytes(b"this is no zip file")
    assert "is not a readable Excel workbook (BadZipFile" in _refused(tmp_path / "r.xlsx")
    assert "does not exist" in _refused(tmp_path / "absent.csv")
    assert "is a folder" in _refused(tmp_path)


def test_a_whole_table_reads_with_the_line_of_each_row(tmp_path):
    path = tmp_path / "q.csv.gz"
    path.write_bytes(gzip.compress('\ufeffid,text\r\n1,"two\r\nlines"\r\n\r\n2,plain\r\n'.encode()))
    table = read_table(path, columns=("id",), what=WHAT, name="folder/q.csv")
    assert table.records() == [{"id": "1", "text": "two\r\nlines"}, {"id": "2", "text": "plain"}]
    assert [table.where(k) for k in range(len(table))] == ["folder/q.csv, line 2", "folder/q.csv, line 5"]
    tsv = tmp_path / "q.tsv"
    tsv.write_text('x\ty\n5\'10" tall\t\n')  # a stray quote inside a cell, an empty last cell
    assert read_table(tsv, what=WHAT).records() == [{"x": "5'10\" tall", "y": ""}]


def test_json_and_json_lines_cut_short_name_the_line(tmp_path):
    doc = tmp_path / "test.json"
    doc.write_text(json.dumps([{"a": 1}, {"a": 2}], indent=1)[:-9])
    message = _refused(doc, lambda p: read_json(p, what="the released test.json"))
    assert "ends in the middle of a record (line 6), so it is cut short" in message
    doc.write_text('[{"a": 1},\n {"a": 2} {"a": 3}]\n')
    assert "line 2, column 11 is not JSON" in _refused(doc, lambda p: read_json(p, what="x"))
    lines = tmp_path / "q.jsonl"
    lines.write_text('{"a": 1}\n\n{"a": 2}\n{"a": ')
    assert "ends in the middle of line 4, so it is cut short" in _refused(lines, lambda p: list(read_jsonl(p, what="x")))
    lines.write_text('{"a": 1}\n{"a": \n{"a": 3}\n')
    assert "line 2 is not a JSON record" in _refused(lines, lambda p: list(read_jsonl(p, what="x")))
    lines.write_text('{"a": 1}\n\n{"a": 2}')  # a whole last record without a line break is whole
    assert list(read_jsonl(lines, what="x")) == [(1, {"a": 1}), (3, {"a": 2})]


def test_repeats_are_left_out_counted_and_a_shared_id_is_refused(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("id,answer\n1,yes\n2,no\n1,yes\n")
    assert read_table(path, what=WHAT).repeats("id") == [2]
    path.write_text("id,answer\n1,yes\n2,no\n1,no\n")
    with pytest.raises(InvalidInputError, match="q.csv, line 4 gives id '1' to another record than q.csv, line 2"):
        read_table(path, what=WHAT).repeats("id")
    records = [{"q_id": 1, "x": "a"}, {"q_id": 1, "x": "a"}, {"q_id": 2, "x": "b"}]
    assert first_of_each(records, lambda r: r["q_id"], where=lambda k: f"line {k + 1}") == [0, 2]
    with pytest.raises(InvalidInputError, match="line 3 gives q_id 1 to another record than line 1"):
        first_of_each([records[0], records[2], {"q_id": 1, "x": "c"}], lambda r: r["q_id"],
                      where=lambda k: f"line {k + 1}", name="q_id")


def test_a_field_over_the_csv_modules_limit_reads_as_pandas_reads_it(tmp_path):
    """Issue 42 item 14: a cell over 131,072 characters (the csv module's default limit) gave a `_csv.Error`
    traceback; it reads, the rows keep their lines, and a file cut inside it is still one sentence."""
    path = tmp_path / "q.csv"
    long = "finding " * 30_000  # 240,000 characters
    path.write_text(f"id,answer\n1,\"{long}\"\n2,no\n3,\"{long}\"\n")
    table = read_table(path, columns=("id", "answer"), what=WHAT)
    assert [len(r["answer"]) for r in table.records()] == [len(long), 2, len(long)]
    assert table.where(2) == "q.csv, line 4"
    path.write_text(f"id,{long.strip().replace(' ', '_')}\n1,2\n")
    assert len(read_table(path, what=WHAT).columns[1]) > 131_072
    path.write_text(f"id,answer\n1,yes\n2,\"{long}")
    assert "ends inside a quoted field of the record on line 3" in _refused(path)


def test_a_lone_carriage_return_in_a_cell_is_a_line_break_as_pandas_reads_it(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("id,answer\n1,x\ry\n2,no\n")
    table = read_table(path, what=WHAT)
    assert table.records()[-1] == {"id": "2", "answer": "no"} and table.where(len(table) - 1) == "q.csv, line 4"
