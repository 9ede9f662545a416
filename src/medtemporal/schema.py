"""The records every stage passes on: studies, timelines, items, predictions, scores.

All records are frozen pydantic models that serialise to one JSON object per
line. Reading a JSON Lines file names the file, line and field that is wrong.

>>> ref = ImageRef(path="files/p10/p10000032/s50414267/a.jpg", visit=1, label="T1")
>>> item = Item.create(benchmark="mi-cxr", task="TEL", subtype="single_emergence",
...     images=[ref], question="When?", options={"A": "T1 → T2", "E": "None"},
...     answer_type="choice", answer="A")
>>> Item.model_validate_json(item.model_dump_json()) == item
True
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from medtemporal.errors import InvalidInputError

AnswerType = Literal["choice", "yesno", "ordering", "open"]
Licence = Literal["synthetic", "credentialed", "open"]


class Record(BaseModel):
    """Base of every record: frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ImageRef(Record):
    """One image (or volume, or frame) an item shows, by path relative to an image root."""

    path: str
    visit: int | None = None
    """1-based visit index (T1 = 1) where the image belongs to a visit."""
    timestamp: str | None = None
    """ISO date-time of the acquisition, when known."""
    role: str = "visit"
    """visit | historical | current | frame | volume | option | reference."""
    label: str | None = None
    """Caption a protocol shows before the image ("T3", "Last visit image:")."""
    option: str | None = None
    """The option letter this image belongs to, for image-valued options."""
    view: str | None = None

    @field_validator("path")
    @classmethod
    def _relative(cls, v: str) -> str:
        if not v or v.startswith("/") or ".." in v.split("/"):
            raise ValueError("must be a non-empty path relative to the image root")
        return v


class Finding(Record):
    """The state of one abnormality at one study, as annotated."""

    entity: str
    present: bool
    certain: bool = True
    laterality: str | None = None
    severity: str | None = None
    changes: tuple[str, ...] = ()
    change_sentence: str | None = None
    category: str | None = None
    quality: float | None = None


class Study(Record):
    """One visit: its images, its report sections and its findings."""

    patient_id: str
    study_id: str
    timestamp: str | None = None
    """ISO date-time; None where the source only gives an order."""
    order: int | None = None
    """Position within the patient where the source gives an explicit order."""
    images: tuple[ImageRef, ...] = ()
    frontal: str | None = None
    """Path of the image chosen to represent the visit."""
    report: dict[str, str] = Field(default_factory=dict)
    """Report sections by lower-case name (findings, impression, comparison)."""
    findings: tuple[Finding, ...] = ()

    def finding(self, entity: str) -> Finding | None:
        """The finding for ``entity`` or None."""
        return next((f for f in self.findings if f.entity == entity), None)


class Timeline(Record):
    """A patient's studies in time order."""

    patient_id: str
    source: str
    licence: Licence
    studies: tuple[Study, ...]


class Item(Record):
    """One benchmark question with everything a model and a scorer need."""

    id: str
    benchmark: str
    task: str
    subtype: str
    images: tuple[ImageRef, ...]
    question: str
    options: dict[str, str] = Field(default_factory=dict)
    answer_type: AnswerType
    answer: str | list[str]
    reference: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def create(cls, **fields: Any) -> "Item":
        """Build an item whose ``id`` is the hash of its content."""
        draft = cls.model_validate({**fields, "id": ""})
        draft.__dict__["id"] = content_hash(draft.model_dump(mode="json", exclude={"id"}))  # frozen: set once, here
        return draft

    @property
    def cluster(self) -> str:
        """The unit of correlation (the patient) used for confidence intervals."""
        return str(self.meta.get("patient_id", self.id))


class Prediction(Record):
    """One model answer, written the moment it arrives."""

    item_id: str
    model: str
    protocol: str
    request_hash: str
    raw_output: str | None
    answer: str | list[str] | None = None
    """Extracted answer; None when the output could not be parsed."""
    extraction: str | None = None
    """Name of the rule (or judge) that decided ``answer``."""
    latency_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None
    finish_reason: str | None = None
    """Why the model stopped (``stop``, ``length`` ...), ``length`` if any call of the item was cut off;
    None when the backend does not say."""
    calls: tuple[dict[str, Any], ...] = ()
    """Intermediate calls of multi-stage protocols (prompt name, output)."""
    repeat: int = 0
    """Which repeat of the item (0-based, ``--repeats``) this answers; each repeat is its own sample."""
    prompt: tuple[dict[str, Any], ...] = ()
    """The messages of the request whose output is scored, as rendered: ``{"role", "parts"}`` with parts
    ``{"text": ...}`` or ``{"image": path}`` (relative to the image root; never the image's bytes)."""


class Score(Record):
    """One metric value over a group of items, with its confidence interval."""

    metric: str
    value: float
    group: str = "overall"
    n: int = 0
    ci_low: float | None = None
    ci_high: float | None = None
    invalid: int = 0
    """Items answered with output from which no valid answer could be extracted (scored wrong)."""
    missing: int = 0
    """Items without a usable prediction (none, or only an error; scored wrong)."""
    chance: float | None = None
    higher_is_better: bool = True
    unavailable: str | None = None
    """Why the metric could not be computed at all (an encoder or data file missing), in one sentence;
    its value is then NaN. None when it was computed."""


_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def content_hash(obj: Any, length: int = 16) -> str:
    """Stable hex hash of a JSON-serialisable object (sorted keys, UTF-8)."""
    text = _CANONICAL.encode(obj)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


R = TypeVar("R", bound=BaseModel)


class Column(Record):
    """A table column of one task: a group and the subtypes it covers."""

    label: str
    group: str
    subtypes: list[str]


class TaskLayout(Record):
    """One task family in table order: its group, subtypes and table columns."""

    task: str
    group: str
    subtypes: list[str]
    columns: list[Column]


def dumps(record: BaseModel) -> str:
    """One JSON line for ``record`` (no trailing newline), stable across runs."""
    return json.dumps(record.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write ``records`` to ``path`` atomically; return how many were written."""
    from medtemporal.writes import replacing

    n = 0
    with replacing(path) as tmp, tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for record in records:
            fh.write(dumps(record) + "\n")
            n += 1
    return n


def iter_jsonl(path: str | Path, model: type[R]) -> Iterator[R]:
    """Yield ``model`` records from a JSON Lines file, naming file, line and field on error."""
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"{path} does not exist; check the path.")
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield model.model_validate_json(line)
            except ValidationError as exc:
                raise InvalidInputError(
                    f"{path}, line {lineno}: {describe_validation_error(exc)}; fix or remove that line."
                ) from None


def read_json_object(path: Path, fix: str) -> dict[str, Any]:
    """The JSON object in ``path``; one sentence ending in ``fix`` when it is not valid JSON or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise InvalidInputError(f"{path} is not valid JSON; {fix}.") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path} must hold a JSON object; {fix}.")
    return data


def describe_validation_error(exc: ValidationError) -> str:
    """The first problem of a pydantic error as 'field `x`: message'."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "record"
    return f"field `{where}` {err['msg'].lower()}"
