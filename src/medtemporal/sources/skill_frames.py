"""Clinical-skill key-frame sets (ClinicalSkillQA) in the layout ``medtemporal`` reads.

No data of the shared task is public (002 §3; FACTS §2.1): the organisers
sent each instance as a folder of frames named by identifier (``A.jpg`` …,
4 or 6 per instance) and kept the order and rationale hidden. The layout
read here is that folder per instance plus one gold file::

    DIR/
      gold.jsonl            {"id": "cpr_017", "procedure": "CPR", "order": ["D", "B", "A", "C"],
                             "rationale": "…", "video": "v12"}   (video optional)
      cpr_017/A.jpg  B.jpg  C.jpg  D.jpg
      …

``order`` lists the frames' identifiers earliest first; ``video`` (when
several instances come from one video) is the unit of clustering for
confidence intervals. ``docs/skillqa.md`` shows how to convert the
organisers' files. Every problem is one `InvalidInputError` sentence naming
the file and the fix; nothing is written while reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError
from pydantic import Field, ValidationError

from medtemporal.errors import InvalidInputError
from medtemporal.progress import progress_bar
from medtemporal.schema import Record, describe_validation_error
from medtemporal.sources.release_files import read_jsonl

GOLD = "gold.jsonl"
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png")


class GoldRecord(Record):
    """One line of ``gold.jsonl``."""

    id: str = Field(min_length=1)
    procedure: str = Field(min_length=1)
    order: list[str] = Field(min_length=2)
    rationale: str = ""
    video: str | None = None


@dataclass(frozen=True)
class FrameSet:
    """One instance: its frames by identifier (paths relative to the dataset folder) and its gold."""

    id: str
    procedure: str
    order: tuple[str, ...]
    """Identifiers earliest first."""
    rationale: str
    frames: dict[str, str]
    """Identifier → relative path of its frame."""
    video: str | None = None


def read_frame_sets(root: str | Path, *, verify_images: bool = True) -> list[FrameSet]:
    """Read and check every instance of ``gold.jsonl`` under ``root``, in the file's order.

    Args:
        root: The dataset folder.
        verify_images: Open every frame with Pillow to check it is an image (slower on large sets).

    Raises:
        InvalidInputError: a missing folder or gold file, a bad gold line, a duplicate instance id,
            an order that names an identifier twice, a frame missing on disk, a frame file the order
            does not name (an unknown identifier), a file that is not an image, or frames of one
            instance with different extensions.
    """
    root = Path(root)
    if not root.is_dir():
        raise InvalidInputError(f"{root} is not a folder; pass the ClinicalSkillQA frame-set folder (--frames).")
    if not (root / GOLD).is_file():
        raise InvalidInputError(f"{root} has no {GOLD}; write one gold line per instance (see docs/skillqa.md).")
    sets: list[FrameSet] = []
    seen: set[str] = set()
    lines = read_jsonl(root / GOLD, what=f"a {GOLD} of one gold line per instance (docs/skillqa.md)")
    for lineno, value in progress_bar(lines, desc="frame sets", unit="set", leave=False):
        try:
            record = GoldRecord.model_validate(value)
        except ValidationError as exc:
            raise InvalidInputError(f"{root / GOLD}, line {lineno}: {describe_validation_error(exc)}; fix or remove "
                                    "that line.") from None
        if record.id in seen:
            raise InvalidInputError(f"{root / GOLD} lists instance {record.id!r} twice; give each instance one line.")
        seen.add(record.id)
        sets.append(_frame_set(root, record, verify_images))
    if not sets:
        raise InvalidInputError(f"{root / GOLD} is empty; write one gold line per instance.")
    return sets


def _frame_set(root: Path, record: GoldRecord, verify_images: bool) -> FrameSet:
    """One instance's frames, checked against its gold order."""
    folder = root / record.id
    where = f"instance {record.id!r}"
    if record.id != Path(record.id).name or record.id.startswith("."):
        raise InvalidInputError(f"{root / GOLD}: {where} is not a plain folder name; use the instance's folder name.")
    dupes = sorted({x for x in record.order if record.order.count(x) > 1})
    if dupes:
        raise InvalidInputError(f"{root / GOLD}: the order of {where} names {', '.join(dupes)} more than once; "
                                "list each frame identifier exactly once.")
    if not folder.is_dir():
        raise InvalidInputError(f"{folder} does not exist; {where} of {GOLD} needs a folder of its frames.")
    files = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    by_id: dict[str, Path] = {}
    for path in files:
        if path.is_dir() or path.suffix.lower() not in IMAGE_EXTENSIONS:
            raise InvalidInputError(f"{path} is not a frame image (.jpg, .jpeg or .png); remove it from {folder}.")
        if path.stem in by_id:
            raise InvalidInputError(f"{folder} holds two files for frame {path.stem} ({by_id[path.stem].name}, "
                                    f"{path.name}); keep one.")
        if path.stem not in record.order:
            raise InvalidInputError(f"{path} is frame {path.stem!r}, an identifier the order of {where} does not "
                                    f"name ({', '.join(record.order)}); remove it or fix {GOLD}.")
        by_id[path.stem] = path
    missing = [x for x in record.order if x not in by_id]
    if missing:
        raise InvalidInputError(f"{folder} lacks frame {', '.join(missing)} named in the order of {where}; "
                                "add the image or fix the order.")
    extensions = sorted({p.suffix for p in by_id.values()})
    if len(extensions) > 1:
        raise InvalidInputError(f"The frames of {where} mix extensions ({', '.join(extensions)}), which can give "
                                "their order away; convert them to one format.")
    if verify_images:
        for path in by_id.values():
            _check_image(path)
    return FrameSet(
        id=record.id, procedure=record.procedure, order=tuple(record.order), rationale=record.rationale,
        frames={x: by_id[x].relative_to(root).as_posix() for x in record.order}, video=record.video,
    )


def _check_image(path: Path) -> None:
    """Raise unless Pillow can read ``path`` as an image."""
    try:
        with Image.open(path) as im:
            im.verify()
    except Image.DecompressionBombError as exc:  # not an OSError
        raise InvalidInputError(
            f"{path} is not a usable image ({exc}); replace it with the frame's JPEG or PNG."
        ) from None
    except (UnidentifiedImageError, OSError, SyntaxError):
        raise InvalidInputError(f"{path} is not a readable image; replace it with the frame's JPEG or PNG.") from None
