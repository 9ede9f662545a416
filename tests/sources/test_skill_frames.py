"""The frame-set reader: phantoms read back exactly; every bad input is one sentence and nothing is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from medtemporal.errors import InvalidInputError
from medtemporal.phantoms.skill_frames import PROCEDURES, write_skill_phantoms
from medtemporal.provenance import PHANTOM_TRUTH
from medtemporal.provenance import licence_of
from medtemporal.sources.skill_frames import GOLD, read_frame_sets


@pytest.fixture(scope="module")
def phantom(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_skill_phantoms(tmp_path_factory.mktemp("sf") / "d", instances=6, seed=1, image_size=48,
                                progress=False).root


def test_phantoms_read_back_with_their_truth(phantom: Path) -> None:
    sets = read_frame_sets(phantom)
    truth = {json.loads(line)["id"]: json.loads(line) for line in (phantom / PHANTOM_TRUTH).read_text().splitlines()}
    assert [s.id for s in sets] == sorted(truth, key=lambda k: int(k.split("_")[1]))
    assert {s.procedure for s in sets} == set(PROCEDURES) and {len(s.order) for s in sets} <= {4, 6}
    for s in sets:
        steps = [PROCEDURES[s.procedure].index(next(p for p in PROCEDURES[s.procedure]
                                                    if p.name == truth[s.id]["steps"][x])) for x in s.order]
        assert steps == sorted(steps)  # the gold order is the procedure's order
        assert all((phantom / s.frames[x]).is_file() for x in s.order)
    assert licence_of(phantom) == "synthetic"


def _copy(phantom: Path, tmp_path: Path) -> tuple[Path, dict]:
    root = tmp_path / "d"
    shutil.copytree(phantom, root)
    first = json.loads((root / GOLD).read_text().splitlines()[0])
    return root, first


def _rewrite_gold(root: Path, change) -> None:
    lines = [json.loads(x) for x in (root / GOLD).read_text().splitlines()]
    change(lines)
    (root / GOLD).write_text("".join(json.dumps(x) + "\n" for x in lines))


@pytest.mark.parametrize(("damage", "says"), [
    (lambda root, first: (root / first["id"] / f"{first['order'][0]}.jpg").unlink(), "lacks frame"),
    (lambda root, first: (root / first["id"] / "Z.jpg").write_bytes((root / first["id"] / "A.jpg").read_bytes()),
     "an identifier the order"),
    (lambda root, first: (root / first["id"] / "A.jpg").write_text("not a picture"), "not a readable image"),
    (lambda root, first: (root / first["id"] / "notes.txt").write_text("hi"), "not a frame image"),
    (lambda root, first: (root / first["id"] / "A.jpg").rename(root / first["id"] / "A.png"), "mix extensions"),
    (lambda root, first: _rewrite_gold(root, lambda ls: ls.append(ls[0])), "twice"),
    (lambda root, first: _rewrite_gold(root, lambda ls: ls[0].update(order=ls[0]["order"][:-1] + ls[0]["order"][:1])),
     "more than once"),
    (lambda root, first: _rewrite_gold(root, lambda ls: ls[0].pop("procedure")), "line 1"),
    (lambda root, first: shutil.rmtree(root / first["id"]), "does not exist"),
    (lambda root, first: (root / GOLD).unlink(), "has no gold.jsonl"),
])
def test_bad_input_is_one_sentence(phantom: Path, tmp_path: Path, damage, says: str) -> None:
    root, first = _copy(phantom, tmp_path)
    damage(root, first)
    with pytest.raises(InvalidInputError) as err:
        read_frame_sets(root)
    message = str(err.value)
    assert says in message and message.count(". ") == 0 and message.endswith(".") and "\n" not in message


def test_images_need_not_be_opened(phantom: Path, tmp_path: Path) -> None:
    root, first = _copy(phantom, tmp_path)
    (root / first["id"] / "A.jpg").write_text("not a picture")
    assert len(read_frame_sets(root, verify_images=False)) == 6
