"""The phantom kinds written over a ``medtemporal phantoms cxr`` cohort (``mmxu``, ``ms-cxr-t``,
``medical-diff-vqa``): their ``--cxr``/``--patients`` options and the cohort's truth by patient (their output
folder is prepared by `medtemporal.phantoms.out`).

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / PHANTOM_TRUTH).write_text('{"patient_id": "p1", "visit": 1, "findings": {}}\\n')
>>> [s["visit"] for s in read_cohort(folder, images=False)["p1"]]
[1]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from medtemporal.errors import InvalidInputError
from medtemporal.provenance import PHANTOM_TRUTH

JPG_DIR = "mimic-cxr-jpg"
"""As `medtemporal.phantoms.cxr` writes them (not imported from there: it loads pandas and the renderer)."""


def cohort_options(p: argparse.ArgumentParser) -> None:
    """``--cxr`` and ``--patients``."""
    p.add_argument("--cxr", type=Path, required=True, metavar="DIR",
                   help="a cohort written by `medtemporal phantoms cxr` (its images are the MIMIC-CXR-JPG root)")
    p.add_argument("--patients", type=int, metavar="N",
                   help="when DIR holds no cohort, write one of N patients there first (as `phantoms cxr "
                   "--patients N --seed SEED`)")


def ensure_cohort(folder: Path, patients: int | None, seed: int) -> None:
    """Write a cohort of ``patients`` into ``folder`` when it holds none and ``patients`` is given (as
    ``medtemporal phantoms cxr --patients N --seed SEED --out FOLDER``)."""
    if patients is not None and not (folder / PHANTOM_TRUTH).is_file():
        from medtemporal.phantoms.cxr import write_cxr_phantoms

        write_cxr_phantoms(folder, patients=patients, seed=seed)


def read_cohort(folder: Path, *, images: bool = True) -> dict[str, list[dict[str, Any]]]:
    """The truth lines of the cohort in ``folder``, by patient (sorted), each patient's in visit order.

    Raises:
        InvalidInputError: ``folder`` holds no ``phantom_truth.jsonl`` (or, with ``images``, no ``mimic-cxr-jpg/``),
            or a line of it is not a CXR phantom truth line.
    """
    path = folder / PHANTOM_TRUTH
    for needed, there in ((PHANTOM_TRUTH, path.is_file()), (f"{JPG_DIR}/", not images or (folder / JPG_DIR).is_dir())):
        if not there:
            raise InvalidInputError(f"{folder} holds no {needed}; pass --cxr the folder `medtemporal phantoms cxr` "
                                    "wrote.")
    patients: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row["visit"], int) or not isinstance(row["findings"], dict):
                    raise TypeError
                patients[row["patient_id"]].append(row)
            except (ValueError, KeyError, TypeError):
                raise InvalidInputError(f"{path}, line {lineno} is not a CXR phantom truth line; "
                                        "write the cohort again with `medtemporal phantoms cxr`.") from None
    return {p: sorted(rows, key=lambda r: r["visit"]) for p, rows in sorted(patients.items())}


def write_lines(path: Path, lines: Iterable[Mapping[str, Any]]) -> None:
    """One compact JSON object per line (a phantom's truth file)."""
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for line in lines:
            fh.write(json.dumps(line, separators=(",", ":")) + "\n")
