"""Radiology-report wording for phantom chest X-ray findings, consistent with the trajectory.

Each finding at a visit becomes one `Sentence`: the report sentence (with
comparative language when the finding changed: ``New small right pleural
effusion.``, ``Interval resolution of ...``, ``Unchanged ...``), the short
observation name and change-free summary sentence MIMIC-Ext-CXR-QBA scene
graphs carry, the change words, and the severity word as written.

>>> from medtemporal.phantoms.trajectory import EntityState
>>> describe("pleural effusion", EntityState(False), EntityState(True, 1, "right")).text
'New small right pleural effusion.'
"""

from __future__ import annotations

from dataclasses import dataclass

from medtemporal.phantoms.trajectory import SEVERITY_WORDS, EntityState, change_of

_SIZE_WORDS = ("small", "moderate", "large")
_SIZED = frozenset({"pleural effusion", "pneumothorax", "sub-diaphragmatic air"})
_COUNTABLE = _SIZED | {"lung opacity"}

_NEGATIVE: dict[str, str] = {
    "pleural effusion": "No pleural effusion.",
    "pneumothorax": "No pneumothorax.",
    "cardiomegaly": "No cardiomegaly.",
    "pulmonary edema": "No pulmonary edema.",
    "sub-diaphragmatic air": "No free air below the diaphragm.",
    "consolidation": "No focal consolidation.",
    "vascular congestion": "No pulmonary vascular congestion.",
    "elevated hemidiaphragm": "The hemidiaphragms are normally positioned.",
    "lung opacity": "No focal lung opacity.",
    "atelectasis": "No atelectasis.",
}

DEVICE_TEXT: dict[str, str] = {
    "endotracheal tube": "endotracheal tube",
    "nasogastric tube": "nasogastric tube",
    "central venous catheter": "right internal jugular central venous catheter",
    "pacemaker": "left chest wall pacemaker",
}


@dataclass(frozen=True)
class Sentence:
    """One finding's wording at one visit."""

    text: str
    """The report sentence."""
    name: str
    """Short observation name without change words."""
    summary: str
    """Change-free sentence describing the current state."""
    change: str | None
    """``new``/``resolved``/``worsened``/``improved``/``unchanged`` or None."""
    severity: str | None
    """Severity word as written (``small``/``moderate``/``large`` or ``mild``/``moderate``/``severe``)."""


def severity_word(entity: str, severity: int) -> str | None:
    """The word a report uses for ``severity`` (1-3) of ``entity``; None for 0."""
    if not severity:
        return None
    return (_SIZE_WORDS if entity in _SIZED else SEVERITY_WORDS)[severity - 1]


def phrase(entity: str, state: EntityState, *, with_severity: bool = True) -> str:
    """Noun phrase for a present finding, e.g. ``moderate right pleural effusion``."""
    sev = severity_word(entity, state.severity) if with_severity else None
    side = state.laterality
    both = side == "bilateral"
    if entity == "sub-diaphragmatic air":
        where = "both hemidiaphragms" if both else f"the {side} hemidiaphragm" if side else "the diaphragm"
        core = f"free air under {where}"
        return f"{sev} amount of {core}" if sev else core
    if entity == "elevated hemidiaphragm":
        where = "both hemidiaphragms" if both else f"the {side} hemidiaphragm"
        core = f"elevation of {where}" if side else entity
    elif entity == "atelectasis":
        core = "bibasilar atelectasis" if both else f"{side} basilar atelectasis" if side else entity
    elif entity == "consolidation":
        core = f"{side} lower lobe consolidation" if side else entity
    elif entity == "vascular congestion":
        core = "pulmonary vascular congestion"
    elif entity in ("cardiomegaly", "pulmonary edema"):
        core = entity
    else:
        core = f"{side} {entity}" if side else entity
    return f"{sev} {core}" if sev else core


def describe(entity: str, prev: EntityState | None, cur: EntityState, *, certain: bool = True) -> Sentence:
    """The wording of ``entity`` at a visit, comparing with the previous visit (None at the first)."""
    change = change_of(prev, cur)
    sev = severity_word(entity, cur.severity) if cur.present else None
    if entity == "bony structures intact":
        return _bones(prev, cur, change)
    if entity == "normal cardiac silhouette":
        return _silhouette(prev, cur, change)
    if not certain:
        if cur.present:
            text = f"Possible {phrase(entity, cur)}."
        else:
            text = f"{capitalised(phrase(entity, EntityState(True)))} is unlikely but not excluded."
        name = phrase(entity, cur) if cur.present else f"no {phrase(entity, EntityState(True))}"
        return Sentence(text, name, text, None, sev)
    if cur.present:
        name = phrase(entity, cur)
        summary = f"There is {article(name)} {name}." if entity in _COUNTABLE else f"There is {name}."
        bare = phrase(entity, cur, with_severity=False)
        text = {
            None: f"{capitalised(name)}.",
            "new": f"New {name}.",
            "worsened": f"Interval worsening of the {bare}, now {sev}.",
            "improved": f"Interval improvement of the {bare}, now {sev}.",
            "unchanged": f"Unchanged {name}.",
        }[change]
        return Sentence(text, name, summary, change, sev)
    negative = _NEGATIVE[entity]
    name = f"no {phrase(entity, EntityState(True))}"
    if change == "resolved" and prev is not None:
        text = f"Interval resolution of the previously seen {phrase(entity, prev, with_severity=False)}."
        return Sentence(text, name, negative, change, None)
    return Sentence(negative, name, negative, None, None)


def _bones(prev: EntityState | None, cur: EntityState, change: str | None) -> Sentence:
    if cur.present:
        text = "The previously seen rib fracture has healed." if change == "new" else "The bony structures are intact."
        return Sentence(text, "intact bony structures", "The bony structures are intact.", change, None)
    summary = "There is a rib fracture; the bony structures are not intact."
    text = "New rib fracture." if change == "resolved" else "Unchanged rib fracture." if prev else "Rib fracture."
    return Sentence(text, "rib fracture", summary, change, None)


def _silhouette(prev: EntityState | None, cur: EntityState, change: str | None) -> Sentence:
    if cur.present:
        normal = "The cardiac silhouette is normal in size."
        text = "The cardiac silhouette has returned to normal size." if change == "new" else normal
        return Sentence(text, "normal cardiac silhouette", normal, change, None)
    enlarged = "The cardiac silhouette is enlarged."
    text = "The cardiac silhouette is no longer normal in size." if change == "resolved" else enlarged
    return Sentence(text, "enlarged cardiac silhouette", enlarged, change, None)


def device_sentence(device: str, before: bool, now: bool) -> str | None:
    """Report sentence about a support device, or None when it is absent at both visits."""
    name = DEVICE_TEXT[device]
    if now and not before:
        return f"Interval placement of {article(name)} {name}."
    if now:
        return f"{capitalised(name)} in standard position."
    if before:
        return f"Interval removal of the {name}."
    return None


LAYOUTS: dict[str, float] = {
    "standard": 0.66, "wet_read": 0.05, "title_case": 0.05, "views_header": 0.04, "inline": 0.04,
    "conclusion": 0.04, "impression_only": 0.07, "findings_and_impression": 0.03, "empty_findings": 0.02,
}
"""How phantom reports are laid out, and how often: the header shapes real MIMIC-CXR reports use (a
``WET READ`` preamble; ``Findings:`` in title case; the views as the findings header, ``PA AND LATERAL CHEST
RADIOGRAPHS:``; text on the header's line; ``CONCLUSION:``) and three without a findings section (the
findings sentences under ``IMPRESSION:`` alone, under ``FINDINGS AND IMPRESSION:``, or below an empty
``FINDINGS:``). Every layout holds the same findings-then-impression text, so a reader that joins the two
sections reads the same words whatever the layout."""
NO_FINDINGS_LAYOUTS = frozenset({"impression_only", "findings_and_impression", "empty_findings"})
"""Layouts whose report has no findings section (`medtemporal.sources.mimic_cxr_reports` rules)."""


def report(
    *, examination: str, indication: str, technique: str, comparison: str, findings: list[str], impression: list[str],
    layout: str = "standard", wet_read_time: str = "10:15 AM",
) -> str:
    """A free-text report laid out like MIMIC-CXR's ``sNNNNNNNN.txt`` files, in one of `LAYOUTS`."""
    body = "\n ".join(_wrap(" ".join(findings)))
    impression_text = "\n ".join(_wrap(" ".join(impression)))
    both = "\n ".join(_wrap(" ".join([*findings, *impression])))
    title = str.title if layout == "title_case" else str.upper
    heads = {k: title(k) for k in ("examination", "indication", "technique", "comparison", "findings", "impression")}
    if layout == "conclusion":
        heads["impression"] = "CONCLUSION"
    if layout == "views_header":
        views = "PA AND LATERAL CHEST RADIOGRAPHS" if "PA" in examination else "PORTABLE AP CHEST RADIOGRAPH"
        heads["findings"] = views
    if layout == "inline":
        narrative = f" {heads['findings']}:  {body}\n \n {heads['impression']}:  {impression_text}\n"
    elif layout == "impression_only":
        narrative = f" {heads['impression']}:\n \n {both}\n"
    elif layout == "findings_and_impression":
        narrative = f" FINDINGS AND IMPRESSION:\n \n {both}\n"
    elif layout == "empty_findings":
        narrative = f" {heads['findings']}:\n \n {heads['impression']}:\n \n {both}\n"
    else:
        narrative = f" {heads['findings']}:\n \n {body}\n \n {heads['impression']}:\n \n {impression_text}\n"
    preamble = ""
    if layout == "wet_read":
        preamble = f" WET READ: ___ ___ {wet_read_time}\n  {impression_text}\n {'_' * 78}\n"
    return (
        f"{preamble}                                 FINAL REPORT\n"
        f" {heads['examination']}:  {examination}\n \n"
        f" {heads['indication']}:  {indication}\n \n"
        f" {heads['technique']}:  {technique}\n \n"
        f" {heads['comparison']}:  {comparison}\n \n"
        f"{narrative}"
    )


def _wrap(text: str, width: int = 76) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + ([line] if line else [])


def capitalised(text: str) -> str:
    """``text`` with its first character upper case."""
    return text[:1].upper() + text[1:]


def article(noun: str) -> str:
    """``a`` or ``an`` for ``noun`` (by its first letter, which serves the phrases written here)."""
    return "an" if noun[:1] in "aeiou" else "a"
