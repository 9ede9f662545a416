"""MIMIC-Ext-CXR-QBA: its study metadata, and scene-graph observations merged into findings.

`medtemporal.sources.mimic_cxr.read_timelines` applies these to each study
(its rules 1 and 3-5 say when); this module holds what QBA itself defines:
the file layout, the quality grades, the entity names and their aliases, and
how kept observations of one entity merge into one `Finding`.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, Iterable

from medtemporal.errors import InvalidInputError
from medtemporal.schema import Finding
from medtemporal.sources.release_files import read_table

if TYPE_CHECKING:
    import pandas as pd


STUDY_METADATA = "metadata/study_metadata"
"""QBA study metadata, as ``.parquet`` and ``.csv.gz``."""
STUDY_METADATA_COLUMNS: tuple[str, ...] = ("patient_id", "study_id", "timestamp_since_first", "timespan_since_prev")
"""QBA study-metadata columns the reader needs."""

QUALITY_GRADES: tuple[str, ...] = ("D", "C", "B", "A", "A+", "A++")
"""QBA quality grades; a grade's index is its level (larger = better)."""

DISEASE_CATEGORIES: tuple[str, ...] = ("ANATOMICAL_FINDING", "DISEASE")
"""Default ``obs_categories`` kept (disease-relevant ones, not devices or technique)."""

ENTITIES: tuple[str, ...] = (
    "pleural effusion",
    "pneumothorax",
    "cardiomegaly",
    "pulmonary edema",
    "sub-diaphragmatic air",
    "consolidation",
    "vascular congestion",
    "elevated hemidiaphragm",
    "lung opacity",
    "atelectasis",
    "bony structures intact",
    "normal cardiac silhouette",
)
"""Our canonical entity names: the abnormalities of the MI-CXR paper's Table 10, in its order (by frequency)."""

ENTITY_ALIASES: dict[str, str] = {
    "pleural effusion": "pleural effusion",
    "effusion": "pleural effusion",
    "pneumothorax": "pneumothorax",
    "cardiomegaly": "cardiomegaly",
    "enlarged cardiac silhouette": "cardiomegaly",
    "pulmonary edema": "pulmonary edema",
    "edema": "pulmonary edema",
    "sub-diaphragmatic air": "sub-diaphragmatic air",
    "subdiaphragmatic air": "sub-diaphragmatic air",
    "free air under the diaphragm": "sub-diaphragmatic air",
    "pneumoperitoneum": "sub-diaphragmatic air",
    "consolidation": "consolidation",
    "vascular congestion": "vascular congestion",
    "pulmonary vascular congestion": "vascular congestion",
    "elevated hemidiaphragm": "elevated hemidiaphragm",
    "hemidiaphragm elevation": "elevated hemidiaphragm",
    "lung opacity": "lung opacity",
    "opacity": "lung opacity",
    "atelectasis": "atelectasis",
    "bony structures intact": "bony structures intact",
    "intact bony structures": "bony structures intact",
    "normal cardiac silhouette": "normal cardiac silhouette",
}
"""QBA ``obs_entities`` names (lower case) → our canonical names (`ENTITIES`)."""

SEVERITY_RANK: dict[str, int] = {
    "trace": 0, "minimal": 0, "tiny": 0, "small": 1, "mild": 1, "moderate": 2,
    "large": 3, "severe": 3, "extensive": 3, "massive": 4,
}
"""Severity words of ``modifiers.severity`` (lower case) → rank; a finding keeps its strongest word."""


def scene_graph_path(subject: int | str, study: int | str) -> str:
    """The path of a scene graph relative to the MIMIC-Ext-CXR-QBA root (``pXX/pSUBJECT`` as in MIMIC-CXR)."""
    s = str(subject).lstrip("p")
    return f"scene_data/p{s[:2]}/p{s}/s{str(study).lstrip('s')}.scene_graph.json"


def quality_level(value: Any) -> int | None:
    """A QBA quality value (level 0-5 or grade letter) as a level, or None when unknown."""
    if isinstance(value, str):
        return QUALITY_GRADES.index(value) if value in QUALITY_GRADES else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if math.isfinite(value) else None


def check_root(qba: Path) -> None:
    """Raise a one-sentence error unless ``qba`` is a MIMIC-Ext-CXR-QBA root with ``scene_data/``."""
    hint = "pass the MIMIC-Ext-CXR-QBA root that holds scene_data/ and metadata/"
    if not qba.is_dir():
        raise InvalidInputError(f"The MIMIC-Ext-CXR-QBA folder {qba} does not exist; {hint}.")
    if not (qba / "scene_data").is_dir():
        if (qba / "scene_data.zip").is_file():
            raise InvalidInputError(
                f"{qba} has scene_data.zip but no scene_data/ folder; unzip it there (unzip scene_data.zip -d {qba})."
            )
        raise InvalidInputError(f"{qba} has no scene_data/ folder; {hint}.")


def read_study_metadata(qba: str | Path) -> pd.DataFrame:
    """QBA study metadata with integer ``subject_id``/``study_id`` and numeric ``tsf``/``tsp`` columns."""
    import pandas as pd
    qba = Path(qba)
    parquet, csv = qba / f"{STUDY_METADATA}.parquet", qba / f"{STUDY_METADATA}.csv.gz"
    if parquet.is_file():
        from pyarrow import ArrowException

        try:
            df = pd.read_parquet(parquet)
        except (OSError, ValueError, ArrowException) as exc:  # pyarrow's errors for damaged files
            raise InvalidInputError(
                f"{parquet} cannot be read as Parquet ({type(exc).__name__}); "
                f"re-download it, or delete it to use {csv.name}."
            ) from None
        source = parquet
    elif csv.is_file():
        df = read_table(csv, what="the study metadata of the MIMIC-Ext-CXR-QBA release").frame
        source = csv
    else:
        raise InvalidInputError(
            f"{qba / 'metadata'} has neither study_metadata.parquet nor study_metadata.csv.gz; "
            "pass the MIMIC-Ext-CXR-QBA root."
        )
    for column in STUDY_METADATA_COLUMNS:
        if column not in df.columns:
            raise InvalidInputError(
                f"{source} has no column `{column}`; use the study metadata of the MIMIC-Ext-CXR-QBA release."
            )
    try:
        out = pd.DataFrame({
            "subject_id": df["patient_id"].astype(str).str.lstrip("p").astype("int64"),
            "study_id": df["study_id"].astype(str).str.lstrip("s").astype("int64"),
            "tsf": _as_number(df["timestamp_since_first"]),
            "tsp": _as_number(df["timespan_since_prev"]),
        })
    except ValueError as exc:
        raise InvalidInputError(
            f"{source} has a malformed id ({exc}); ids must look like p10000032 and s50414267."
        ) from None
    return out


def _as_number(col: pd.Series) -> pd.Series:
    import pandas as pd
    if pd.api.types.is_timedelta64_dtype(col):
        return col.dt.total_seconds()
    if pd.api.types.is_numeric_dtype(col):
        return col.astype(float)
    col = col.replace("", float("nan"))  # the CSV reader gives empty cells as ""
    numbers = pd.to_numeric(col, errors="coerce")
    if numbers.notna().sum() >= col.notna().sum():
        return numbers.astype(float)
    as_td = pd.to_timedelta(col, errors="coerce")
    if as_td.notna().sum() >= col.notna().sum():
        return as_td.dt.total_seconds()
    return pd.to_numeric(col, errors="coerce")


def findings_of(
    observations: Iterable[dict[str, Any]], categories: Collection[str], threshold: int, excluded: Counter[str],
    memo: dict[tuple[Any, ...], Finding],
) -> tuple[Finding, ...]:
    """Keep the certain, good-enough, disease-relevant observations of our entities and merge them per entity.

    Equal findings are one shared (frozen) `Finding` from ``memo``: a MIMIC-scale read has millions. The
    checks run in the order of the exclusion they count (category, entity, certainty, quality), each with
    plain loops: this is the inner loop of a MIMIC-scale read.
    """
    kept: dict[str, list[tuple[dict[str, Any], str, int | None]]] = {}
    other_category = other_entity = uncertain = low_quality = 0
    aliases = ENTITY_ALIASES
    for obs in observations:
        for category in obs.get("obs_categories") or ():
            if category in categories:
                break
        else:
            other_category += 1
            continue
        for name in obs.get("obs_entities") or ():
            entity = aliases.get(str(name).lower())
            if entity is not None:
                break
        else:
            other_entity += 1
            continue
        certainty = obs.get("certainty", "")
        if (certainty if type(certainty) is str else str(certainty)).lower() != "certain":
            uncertain += 1
            continue
        lowest = None
        for value in (obs.get("obs_quality") or {}).values():
            level = value if type(value) is int else quality_level(value)
            if level is not None and (lowest is None or level < lowest):
                lowest = level
        if lowest is not None and lowest < threshold:
            low_quality += 1
            continue
        if entity in kept:
            kept[entity].append((obs, category, lowest))
        else:
            kept[entity] = [(obs, category, lowest)]
    for key, n in (("obs_not_disease_category", other_category), ("obs_other_entity", other_entity),
                   ("obs_uncertain", uncertain), ("obs_low_quality", low_quality)):
        if n:
            excluded[key] += n
    return tuple(_merge(entity, kept[entity], memo) for entity in ENTITIES if entity in kept)


_FINDING_FIELDS = ("entity", "present", "laterality", "severity", "changes", "change_sentence", "category", "quality")


def _merge(
    entity: str, kept: list[tuple[dict[str, Any], str, int | None]], memo: dict[tuple[Any, ...], Finding]
) -> Finding:
    """One finding from the kept ``(observation, category, quality level)`` triples of one entity."""
    positive = [k for k in kept if _is_positive(k[0])]
    deciding = positive or kept
    sides = set()
    words = []
    changes: dict[str, None] = {}
    sentence = None
    for o, _, _ in deciding:
        sides.add(str(o.get("laterality") or "").lower())
        for w in (o.get("modifiers") or {}).get("severity") or ():
            words.append(str(w).lower())
        for c in o.get("changes") or ():
            changes[str(c).lower()] = None
        if sentence is None and o.get("change_sentence"):
            sentence = o["change_sentence"]
    if "bilateral" in sides or ("left" in sides and "right" in sides):
        laterality = "bilateral"
    else:
        laterality = "left" if "left" in sides else "right" if "right" in sides else None
    severity = max(words, key=lambda w: SEVERITY_RANK.get(w, -1)) if words else None
    qualities = [q for _, _, q in deciding if q is not None]
    key = (
        entity,
        bool(positive),
        laterality if positive else None,
        severity if positive else None,
        tuple(changes),
        sentence,
        deciding[0][1],
        float(min(qualities)) if qualities else None,
    )
    found = memo.get(key)
    if found is None:
        found = memo[key] = Finding(certain=True, **dict(zip(_FINDING_FIELDS, key)))
    return found


def _is_positive(obs: dict[str, Any]) -> bool:
    if "positiveness" in obs:
        return str(obs["positiveness"]).lower() == "pos"
    return str(obs.get("probability", "")).lower() == "positive"
