"""A run's generated reports in the CSV shapes the field's repositories release, for use with their scripts.

* CXRMate (``aehrc/cxrmate@314f891``, ``generated_reports/*/test_reports_*.csv``): one row per study,
  columns ``findings,impression,study_id`` (the study id without its ``s``), the generated sections; a section
  the run did not write (its task not run, or no impression for the study) is empty.
* MLRG (``mk-runner/MLRG@03f63d1``, ``generated-radiology-reports/MIMIC-CXR/test_reports_*.csv``): columns
  ``dicom_id,labels,report``: the reference findings and the generated ones. MLRG writes a row per *image*
  (3,852 rows for 2,341 studies); this file has one per study, keyed by the current study's first image
  (frontal where it has one), because a study-level run writes one report per study.

An answer the run could not extract (invalid or missing) is written as an empty report, as scoring reads it.
"""

from __future__ import annotations

import csv
import io
from pathlib import PurePosixPath
from typing import Sequence

from medtemporal.schema import Item

CXRMATE_COLUMNS = ("findings", "impression", "study_id")
MLRG_COLUMNS = ("dicom_id", "labels", "report")


def _csv(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def cxrmate_csv(pairs: Sequence[tuple[Item, str | None]]) -> str:
    """CXRMate's file from (item, generated text) pairs of one run, studies in the items' order.

    >>> from medtemporal.schema import Item
    >>> item = Item.create(benchmark="longitudinal-rrg", task="findings", subtype="no_prior", images=[],
    ...                    question="q", answer_type="open", answer="x", meta={"study_id": "s5"})
    >>> cxrmate_csv([(item, "Lungs clear.")])
    'findings,impression,study_id\\nLungs clear.,,5\\n'
    """
    studies: dict[str, dict[str, str]] = {}
    for item, text in pairs:
        studies.setdefault(item.meta["study_id"], {})[item.task] = text or ""
    rows = [[got.get("findings", ""), got.get("impression", ""), study.removeprefix("s")]
            for study, got in studies.items()]
    return _csv(CXRMATE_COLUMNS, rows)


def mlrg_csv(pairs: Sequence[tuple[Item, str | None]]) -> str:
    """MLRG's file from (item, generated text) pairs of one run: the findings items only."""
    rows = [[PurePosixPath(item.images[0].path).stem, str(item.reference or item.answer), text or ""]
            for item, text in pairs if item.task == "findings" and item.images]
    return _csv(MLRG_COLUMNS, rows)
