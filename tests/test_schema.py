import json

import pytest

from medtemporal.errors import InvalidInputError
from medtemporal.schema import ImageRef, Item, Prediction, content_hash, iter_jsonl, write_jsonl
from helpers.tiny import tiny_items


def test_item_id_is_content_hash_and_changes_with_content():
    a, b = tiny_items(2)
    assert a.id != b.id
    again = Item.create(**a.model_dump(exclude={"id"}))
    assert again.id == a.id
    changed = Item.create(**{**a.model_dump(exclude={"id"}), "answer": "B"})
    assert changed.id != a.id


def test_jsonl_round_trip_is_byte_stable(tmp_path):
    items = tiny_items(3)
    write_jsonl(tmp_path / "a.jsonl", items)
    back = list(iter_jsonl(tmp_path / "a.jsonl", Item))
    assert back == items
    write_jsonl(tmp_path / "b.jsonl", back)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_bad_line_names_file_line_and_field(tmp_path):
    good = tiny_items(1)[0].model_dump(mode="json")
    bad = dict(good, answer_type="essay")
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InvalidInputError, match=r"items.jsonl, line 2: field `answer_type`"):
        list(iter_jsonl(path, Item))


def test_missing_file_is_one_clear_sentence(tmp_path):
    with pytest.raises(InvalidInputError, match="does not exist"):
        list(iter_jsonl(tmp_path / "nope.jsonl", Prediction))


@pytest.mark.parametrize("path", ["/abs/x.jpg", "../x.jpg", ""])
def test_image_paths_must_be_relative(path):
    with pytest.raises(ValueError, match="relative"):
        ImageRef(path=path)


def test_content_hash_ignores_key_order():
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash({"b": [1, 2], "a": 1})
    assert content_hash({"a": 1}) != content_hash({"a": 2})
