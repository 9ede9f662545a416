"""Read MIMIC-CXR-JPG + MIMIC-CXR reports + MIMIC-Ext-CXR-QBA into patient timelines.

`read_timelines` reads the files as the datasets release them (the phantom
writer `medtemporal.phantoms.cxr` writes the same layout):

* ``<mimic_cxr_jpg>/mimic-cxr-2.0.0-metadata.csv.gz``: one row per image with
  `METADATA_COLUMNS`; ``files/pXX/pSUBJECT/sSTUDY/<dicom_id>.jpg``;
* reports ``files/pXX/pSUBJECT/sSTUDY.txt`` under ``reports`` (default: the
  MIMIC-CXR-JPG root, where ``mimic-cxr-reports.zip`` unzips to);
* ``<qba>/metadata/study_metadata.parquet`` (or ``.csv.gz``) and
  ``<qba>/scene_data/pXX/pSUBJECT/sSTUDY.scene_graph.json``.

Rules, each exclusion counted in the returned `Counter` under the key named:

1. Ordering. A study's time is its ``StudyDate`` + ``StudyTime`` (``HHMMSS.ffffff``
   with leading zeros dropped, as in the released file). A study that has no
   QBA study-metadata row is left out (``study_no_qba_metadata``), as is one
   without a valid date (``study_missing_time``). Studies of one patient with
   the same time are all left out (``study_equal_timestamp``): their order is
   ambiguous. The remaining order is checked against QBA's
   ``timestamp_since_first``/``timespan_since_prev``: a study whose rank by QBA
   time differs from its rank by DICOM time, that ties with another in QBA, or
   whose ``timespan_since_prev`` does not equal the difference to QBA's previous
   study is left out (``study_order_mismatch``). The check compares ranks and
   differences within one column pair, so it holds whatever unit the columns use.
   ``Study.order`` is the study's 1-based position among *all* the patient's
   studies in the metadata CSV, so a left-out study leaves a gap that ends an
   MI-CXR window.
2. One visit per study, represented by one frontal image: ``PA`` over ``AP``,
   then the lexicographically smallest ``dicom_id``. Studies without a frontal
   image are left out (``study_lateral_only``). With ``verify_images`` the
   chosen JPEG must exist (``study_image_missing``) and be a whole JPEG
   (``study_image_corrupt``): PIL ``verify()`` plus the end-of-image marker
   (``verify`` alone does not notice a truncated JPEG; neither decodes pixels).
3. A study needs its scene graph (``study_no_scene_graph``) and a readable one
   (``study_scene_graph_unreadable``: JSON whose fields have their types). Study checks run in this order:
   lateral-only, scene graph present, image, scene graph readable.
4. Observations are kept when one of their ``obs_categories`` is in
   ``categories`` (else ``obs_not_disease_category``), one of their
   ``obs_entities`` maps to our names through `mimic_qba.ENTITY_ALIASES` (else
   ``obs_other_entity``), ``certainty`` is ``certain`` (else ``obs_uncertain``),
   and every ``obs_quality`` level reaches ``min_quality`` (else
   ``obs_low_quality``), checked in this order.
5. Kept observations of one entity in one study merge into one `Finding`:
   present if any is ``pos``; laterality the union of the sides of the deciding
   observations (left + right = ``bilateral``); severity the strongest
   ``modifiers.severity`` word as written (``small``, ``mild``, ``moderate``,
   ``large``, ``severe``, ...); ``changes`` the annotated change words in order
   (lower case, e.g. ``new``, ``resolved``, ``worsened``, ``improved``,
   ``unchanged``); quality the lowest level (0 = D ... 5 = A++).
6. With ``min_visits`` above 1, patients with fewer valid studies are left out
   (``patient_too_few_visits``); patients with none are counted as
   ``patient_no_valid_study``. Patients with fewer than ``min_visits`` studies
   that pass rule 1 and have a frontal image cannot reach it and are left out
   before their scene graphs are read, so their observation- and scene-graph
   exclusions are not counted (a MIMIC-scale build skips ~44 % of the reading).

Speed (a MIMIC-scale read has 228,000 scene graphs): scene graphs are parsed
with ``orjson``; equal findings are one shared object; reports are read only
``with_reports`` (MI-CXR uses none); above `PARALLEL_FROM` studies the scene
graphs are read in one process per CPU, in chunks whose results are merged in
order, so the result is the same as in one process; cyclic garbage collection
is paused while the studies are built.

Not verified against the released files (the documentation gives no more):
the unit of ``timestamp_since_first`` (handled unit-free), the quality
encoding (integer levels 0-5 for D..A++, larger = better, or grade letters),
``certainty`` values other than ``certain``, the exact QBA entity names (hence
the alias table) and laterality values other than ``left``/``right``/``bilateral``.

Patient and study ids are written as in MIMIC-Ext-CXR-QBA (``p10000032``,
``s50414267``); image paths are relative to the MIMIC-CXR-JPG root.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, Iterator

import numpy as np
import orjson
from PIL import Image

from medtemporal._gc import paused_gc
from medtemporal.errors import InvalidInputError
from medtemporal.progress import progress_bar
from medtemporal.schema import Finding, ImageRef, Study, Timeline
from medtemporal.sources.mimic_cxr_reports import read_sections
from medtemporal.sources.mimic_qba import (
    DISEASE_CATEGORIES,
    QUALITY_GRADES,
    findings_of,
    read_study_metadata,
    scene_graph_path,
)
from medtemporal.sources.mimic_qba import check_root as check_qba_root
from medtemporal.sources.release_files import read_table

if TYPE_CHECKING:
    import pandas as pd


METADATA_CSV = "mimic-cxr-2.0.0-metadata.csv.gz"
METADATA_COLUMNS: tuple[str, ...] = (
    "dicom_id",
    "subject_id",
    "study_id",
    "PerformedProcedureStepDescription",
    "ViewPosition",
    "Rows",
    "Columns",
    "StudyDate",
    "StudyTime",
    "ProcedureCodeSequence_CodeMeaning",
    "ViewCodeSequence_CodeMeaning",
    "PatientOrientationCodeSequence_CodeMeaning",
)
"""Columns of the MIMIC-CXR-JPG 2.0.0 metadata file, in order."""
_NEEDED = ("dicom_id", "subject_id", "study_id", "ViewPosition", "StudyDate", "StudyTime")
_TEXT_COLUMNS = ("dicom_id", "ViewPosition", "StudyDate", "StudyTime")


FRONTAL_VIEWS: tuple[str, ...] = ("PA", "AP")
"""``ViewPosition`` values of frontal images, in order of preference."""


def subject_folder(subject: int | str) -> str:
    """``pXX/pSUBJECT`` for a numeric or ``p``-prefixed subject id."""
    s = str(subject).lstrip("p")
    return f"p{s[:2]}/p{s}"


def image_path(subject: int | str, study: int | str, dicom_id: str) -> str:
    """The path of an image relative to the MIMIC-CXR-JPG root."""
    return f"files/{subject_folder(subject)}/s{str(study).lstrip('s')}/{dicom_id}.jpg"


def report_path(subject: int | str, study: int | str) -> str:
    """The path of a report relative to the reports root."""
    return f"files/{subject_folder(subject)}/s{str(study).lstrip('s')}.txt"


def read_timelines(
    mimic_cxr_jpg: str | Path,
    qba: str | Path,
    *,
    reports: str | Path | None = None,
    min_quality: str = "B",
    categories: Collection[str] = DISEASE_CATEGORIES,
    verify_images: bool = True,
    min_visits: int = 1,
    with_reports: bool = True,
    workers: int | None = None,
) -> tuple[list[Timeline], Counter[str]]:
    """Read patient timelines from MIMIC-CXR-JPG and MIMIC-Ext-CXR-QBA (rules in the module docstring).

    Args:
        mimic_cxr_jpg: The MIMIC-CXR-JPG root (holds ``files/`` and the metadata CSV).
        qba: The MIMIC-Ext-CXR-QBA root (holds ``scene_data/`` and ``metadata/``).
        reports: Root of the MIMIC-CXR reports (``files/.../sSTUDY.txt``); default ``mimic_cxr_jpg``.
        min_quality: Lowest observation quality grade kept (``D`` ... ``A++``).
        categories: ``obs_categories`` values that make an observation disease-relevant.
        verify_images: Check that each chosen frontal JPEG exists and is whole.
        min_visits: Leave out patients with fewer valid studies.
        with_reports: Read each study's report into `Study.report` (else it stays empty: for builders that
            do not use report text).
        workers: Processes that read the scene graphs; default: one per available CPU for a cohort of more
            than `PARALLEL_FROM` studies, else one (this process). The result does not depend on it.

    Returns:
        Timelines sorted by patient id, and the exclusion counts.
    """
    jpg, qba_root = Path(mimic_cxr_jpg), Path(qba)
    if min_quality not in QUALITY_GRADES:
        raise InvalidInputError(f"min_quality must be one of {', '.join(QUALITY_GRADES)} (got {min_quality!r}).")
    threshold = QUALITY_GRADES.index(min_quality)
    if min_visits < 1:
        raise InvalidInputError(f"min_visits must be at least 1 (got {min_visits}).")
    csv_path = _check_jpg_root(jpg)
    check_qba_root(qba_root)
    excluded: Counter[str] = Counter()
    images = read_image_metadata(csv_path)
    views = _views_by_study(images)
    studies = _attach_qba(_studies(images, views), read_study_metadata(qba_root), excluded)
    studies = _drop_short(studies, min_visits, excluded)

    settings = _Settings(jpg, str(qba_root), Path(reports) if reports is not None else jpg, frozenset(categories),
                         threshold, verify_images, with_reports)
    built: dict[int, list[tuple[pd.Timestamp, Study]]] = defaultdict(list)
    timelines = []
    with paused_gc():  # hundreds of thousands of studies and findings
        for rows, counts in _read_all(studies, views, settings, workers):
            for subject, dt, study in rows:
                built[subject].append((dt, study))
            excluded.update(counts)
        for subject in sorted(set(studies["subject_id"])):
            visits = [s for _, s in sorted(built.get(subject, []), key=lambda p: p[0])]
            if not visits:
                excluded["patient_no_valid_study"] += 1
            elif len(visits) < min_visits:
                excluded["patient_too_few_visits"] += 1
            else:
                timelines.append(Timeline(patient_id=f"p{subject}", source="mimic-cxr", licence="credentialed",
                                          studies=tuple(visits)))
    return timelines, excluded


PARALLEL_FROM = 20_000
"""Studies from which `read_timelines` reads scene graphs in several processes by default."""
_CHUNK = 4_000


@dataclass(frozen=True)
class _Settings:
    """What reading one study needs besides its row (sent to worker processes)."""

    jpg: Path
    scene_root: str
    report_root: Path
    categories: frozenset[str]
    threshold: int
    verify_images: bool
    with_reports: bool


def _read_all(
    studies: pd.DataFrame, views: dict[int, list[tuple[str, str]]], settings: _Settings, workers: int | None
) -> Iterator[tuple[list[tuple[int, pd.Timestamp, Study]], Counter[str]]]:
    """`_read_studies` over chunks of ``studies``, in order, in ``workers`` processes (see `read_timelines`)."""
    if workers is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        workers = cpus if len(studies) > PARALLEL_FROM else 1
    size = _CHUNK  # read in chunks in one process too, so the progress bar moves
    chunks = [studies.iloc[a : a + size] for a in range(0, len(studies), size)]
    jobs = [(c, {sid: views[sid] for sid in c["study_id"].tolist()}, settings) for c in chunks]
    bar = progress_bar(total=len(studies), desc="MIMIC-CXR studies", unit="study", leave=False)
    with bar, contextlib.ExitStack() as stack:
        if workers > 1 and len(chunks) > 1:
            pool = stack.enter_context(ProcessPoolExecutor(max_workers=min(workers, len(chunks))))
            results = pool.map(_read_studies, *zip(*jobs))
        else:
            results = (_read_studies(*job) for job in jobs)
        for chunk, result in zip(chunks, results):
            bar.update(len(chunk))
            yield result


def _read_studies(
    studies: pd.DataFrame, views: dict[int, list[tuple[str, str]]], settings: _Settings
) -> tuple[list[tuple[int, pd.Timestamp, Study]], Counter[str]]:
    """Read the scene graph (and report) of each study (rules 2-5); the studies kept and what was left out."""
    with paused_gc():  # a worker's chunk: thousands of parsed scene graphs, studies and findings
        return _read_chunk(studies, views, settings)


def _read_chunk(
    studies: pd.DataFrame, views: dict[int, list[tuple[str, str]]], settings: _Settings
) -> tuple[list[tuple[int, pd.Timestamp, Study]], Counter[str]]:
    excluded: Counter[str] = Counter()
    memo: dict[tuple[Any, ...], Finding] = {}
    out = []
    for row in studies.itertuples(index=False):
        if not isinstance(row.frontal, str):
            excluded["study_lateral_only"] += 1
            continue
        data = _read_bytes(f"{settings.scene_root}/{scene_graph_path(row.subject_id, row.study_id)}")
        if data is None:
            excluded["study_no_scene_graph"] += 1
            continue
        frontal = image_path(row.subject_id, row.study_id, row.frontal)
        if settings.verify_images:
            state = _image_state(settings.jpg / frontal)
            if state:
                excluded[f"study_image_{state}"] += 1
                continue
        counted: Counter[str] = Counter()
        try:
            if isinstance(data, OSError):
                raise data
            observations = list(orjson.loads(data)["observations"].values())
            # valid JSON with values of the wrong types (a string for an observation, a list for modifiers ...)
            # fails here too: that scene graph is unreadable like one that is not JSON
            findings = findings_of(observations, settings.categories, settings.threshold, counted, memo)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            excluded["study_scene_graph_unreadable"] += 1
            continue
        excluded.update(counted)
        report = {}
        if settings.with_reports:
            report = read_report(settings.report_root / report_path(row.subject_id, row.study_id))
        out.append((row.subject_id, row.dt, _study(row, views[row.study_id], frontal, findings, report)))
    return out, excluded


def _check_jpg_root(jpg: Path) -> Path:
    hint = f"pass the MIMIC-CXR-JPG root that holds files/ and {METADATA_CSV}"
    if not jpg.is_dir():
        raise InvalidInputError(f"The MIMIC-CXR-JPG folder {jpg} does not exist; {hint}.")
    if not (jpg / "files").is_dir():
        raise InvalidInputError(f"{jpg} has no files/ folder; {hint}.")
    for name in (METADATA_CSV, METADATA_CSV.removesuffix(".gz")):
        if (jpg / name).is_file():
            return jpg / name
    raise InvalidInputError(f"{jpg} has no {METADATA_CSV}; put the metadata file of the MIMIC-CXR-JPG release there.")


def read_image_metadata(path: str | Path) -> pd.DataFrame:
    """The MIMIC-CXR-JPG metadata CSV with a parsed ``dt`` (study date-time) column.

    Raises:
        InvalidInputError: A needed column is missing or a value cannot be parsed.
    """
    path = Path(path)
    table = read_table(path, usecols=_NEEDED, what="the metadata file of the MIMIC-CXR-JPG 2.0.0 release")
    table.integers(("subject_id", "study_id"), "use the metadata file of the MIMIC-CXR-JPG release unchanged")
    df = table.frame
    df["dt"] = parse_study_datetime(df["StudyDate"], df["StudyTime"])
    return df


def parse_study_datetime(dates: pd.Series, times: pd.Series) -> pd.Series:
    """``StudyDate`` (YYYYMMDD) + ``StudyTime`` (HHMMSS.ffffff, leading zeros optional) → datetime; NaT when invalid.

    >>> import pandas as pd
    >>> parse_study_datetime(pd.Series(["21800506"]), pd.Series(["84530.031"]))[0]
    Timestamp('2180-05-06 08:45:30.031000')
    """
    import pandas as pd
    day = pd.to_datetime(dates, format="%Y%m%d", errors="coerce")
    t = pd.to_numeric(times, errors="coerce")
    whole = np.floor(t)
    seconds = (whole // 10000) * 3600 + (whole // 100 % 100) * 60 + whole % 100 + (t - whole)
    return day + pd.to_timedelta(seconds, unit="s").dt.round("us")


def _studies(images: pd.DataFrame, views: dict[int, list[tuple[str, str]]]) -> pd.DataFrame:
    """One row per study: subject, time, chosen frontal dicom id (None if none) and position in the patient.

    The frontal is the first of the study's `_views_by_study` pairs when that one is frontal.
    """
    import pandas as pd
    studies = images.groupby("study_id", sort=False).agg(subject_id=("subject_id", "first"), dt=("dt", "min"))
    studies = studies.reset_index()
    firsts = (views[s][0] for s in studies["study_id"].tolist())
    studies["frontal"] = pd.Series([d if v in FRONTAL_VIEWS else None for d, v in firsts], dtype=object)
    studies = studies.sort_values(["subject_id", "dt", "study_id"], na_position="last", kind="stable")
    studies["order"] = studies.groupby("subject_id").cumcount() + 1
    return studies.reset_index(drop=True)


def _attach_qba(studies: pd.DataFrame, qba: pd.DataFrame, excluded: Counter[str]) -> pd.DataFrame:
    """Keep studies with QBA metadata, a time and an unambiguous, agreeing order."""
    import pandas as pd
    q = qba.sort_values(["subject_id", "tsf"], kind="stable").copy()
    diff = q.groupby("subject_id")["tsf"].diff()
    tol = 1e-3 * np.maximum(diff.abs(), q["tsp"].abs()).fillna(0) + 1e-6
    q["qba_bad"] = diff.notna() & ((diff <= 0) | q["tsp"].isna() | ((q["tsp"] - diff).abs() > tol))
    q["qba_bad"] |= q.duplicated(["subject_id", "tsf"], keep=False)
    merged = studies.merge(q[["study_id", "tsf", "qba_bad"]], on="study_id", how="left")
    steps = [
        ("study_no_qba_metadata", merged["tsf"].isna()),
        ("study_missing_time", merged["dt"].isna()),
        ("study_equal_timestamp", merged.duplicated(["subject_id", "dt"], keep=False) & merged["dt"].notna()),
    ]
    keep = pd.Series(True, index=merged.index)
    for key, bad in steps:
        _count(excluded, key, int((keep & bad).sum()))
        keep &= ~bad
    rest = merged[keep]
    by_dt = rest.groupby("subject_id")["dt"].rank(method="first")
    by_qba = rest.groupby("subject_id")["tsf"].rank(method="first")
    mismatch = (by_dt != by_qba) | rest["qba_bad"].astype(bool)
    _count(excluded, "study_order_mismatch", int(mismatch.sum()))
    ok = rest[~mismatch]
    _count(excluded, "patient_no_valid_study", merged["subject_id"].nunique() - ok["subject_id"].nunique())
    return ok.reset_index(drop=True)


def _drop_short(studies: pd.DataFrame, min_visits: int, excluded: Counter[str]) -> pd.DataFrame:
    """Leave out, before their scene graphs are read, the patients with fewer than ``min_visits`` studies that
    have a frontal image (rule 6): they cannot reach ``min_visits`` valid studies."""
    if min_visits <= 1:
        return studies
    frontal = studies["frontal"].map(lambda f: isinstance(f, str))
    per_patient = frontal.groupby(studies["subject_id"]).transform("sum")
    short = per_patient < min_visits
    _count(excluded, "study_lateral_only", int((short & ~frontal).sum()))
    counts = per_patient[short].groupby(studies.loc[short, "subject_id"]).first()
    _count(excluded, "patient_no_valid_study", int((counts == 0).sum()))
    _count(excluded, "patient_too_few_visits", int((counts > 0).sum()))
    return studies[~short].reset_index(drop=True)


def _count(counter: Counter[str], key: str, n: int) -> None:
    if n:
        counter[key] += n


def _image_state(path: Path) -> str | None:
    """None for a whole image, ``missing`` or ``corrupt`` otherwise."""
    if not path.is_file():
        return "missing"
    try:
        with Image.open(path) as im:
            fmt = im.format
            im.verify()
        if fmt == "JPEG":
            with path.open("rb") as fh:
                fh.seek(max(0, path.stat().st_size - 32))
                if b"\xff\xd9" not in fh.read():
                    return "corrupt"
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):  # a bomb is not an OSError
        return "corrupt"
    return None


def _read_bytes(path: str) -> bytes | OSError | None:
    """A file's bytes; None when there is no such file, the error when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError as exc:
        return exc


def _views_by_study(images: pd.DataFrame) -> dict[int, list[tuple[str, str]]]:
    """Study id → its (dicom_id, ViewPosition) pairs, frontal first in preference order, then by dicom id."""
    rank = images["ViewPosition"].map({v: i for i, v in enumerate(FRONTAL_VIEWS)}).fillna(len(FRONTAL_VIEWS))
    ordered = images.assign(rank=rank).sort_values(["study_id", "rank", "dicom_id"], kind="stable")
    ids, dicoms, views = ordered["study_id"].to_numpy(), ordered["dicom_id"].tolist(), ordered["ViewPosition"].tolist()
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    ends = np.r_[starts[1:], len(ids)]
    return {int(ids[a]): list(zip(dicoms[a:b], views[a:b])) for a, b in zip(starts, ends)}


def _study(row: Any, views: list[tuple[str, str]], frontal: str, findings: tuple[Finding, ...],
           report: dict[str, str]) -> Study:
    when = row.dt.isoformat(timespec="milliseconds")
    order = int(row.order)
    refs = tuple(
        ImageRef(path=image_path(row.subject_id, row.study_id, d), visit=order, timestamp=when, view=v or None)
        for d, v in views
    )
    # Every field is built above with its declared type, so validation is skipped (a MIMIC-scale read makes 228k).
    return Study.model_construct(
        patient_id=f"p{row.subject_id}",
        study_id=f"s{row.study_id}",
        timestamp=when,
        order=order,
        images=refs,
        frontal=frontal,
        report=report,
        findings=findings,
    )


def read_report(path: str | Path) -> dict[str, str]:
    """Sections of a MIMIC-CXR report by canonical lower-case name (`mimic_cxr_reports.parse_sections`: the
    headers real reports use, ``FINDINGS AND IMPRESSION`` and ``CONCLUSION`` read as the impression); empty when
    the file is absent.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "s1.txt")
    >>> _ = open(p, "w").write(" FINDINGS:\\n No effusion.\\n IMPRESSION:\\n Normal.\\n")
    >>> read_report(p)
    {'findings': 'No effusion.', 'impression': 'Normal.'}
    """
    return read_sections(path)
