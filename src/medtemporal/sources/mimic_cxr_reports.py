"""Sections of MIMIC-CXR free-text reports (``files/pXX/pSUBJECT/sSTUDY.txt``), by their real headers.

The rules follow the dataset creators' own section parser (MIT-LCP ``mimic-cxr@3190146``,
``txt/section_parser.py``, MIT licence; read, not copied), with two deliberate differences:

1. **Headers.** A header is a line that starts (after any indentation) with a name and a colon; the
   section's text runs from after the colon, on the same line or below, to the next header, wrapped lines
   and all, its whitespace collapsed. An upper-case name is always a header, as in MIT-LCP's parser
   (``section_parser.py`` L23-24, which needs a line of capitals, spaces and ``()/,-``). A name in lower or
   mixed case (``Findings:``, ``Impression:``) is a header only when it is a *known* section name (rule 2), so
   that ``Heart: normal size.`` inside a findings paragraph does not cut it (the creators' parser misses
   such headers; ours reads them).
2. **Names.** Each header's name is normalised as ``section_parser.normalize_section_names`` does
   (L91-204): first `SECTION_NAMES` (the frequent names and their typos: ``CONCLUSION`` → impression,
   ``FINDINGS AND IMPRESSION`` and ``FINDINGS/IMPRESSION`` → impression, ``FINIDNGS`` → findings,
   ``REASON FOR EXAM`` → indication, ``WET READ`` ...); else the first of `MAIN_SECTIONS` the name contains;
   else ``findings`` when it describes the views taken (`VIEW_WORDS`: ``PA AND LATERAL CHEST RADIOGRAPHS:``,
   ``CHEST, TWO VIEWS:``, ``PORTABLE AP CHEST:``). Ours checks ``indication`` and ``reason`` before the view
   words, so ``REASON FOR CHEST X-RAY:`` is an indication, not findings.

Then, as the creators' parser does (L66-75), a ``findings`` or ``impression`` section with no text is
dropped (``FINDINGS:`` directly followed by ``IMPRESSION:``), and of two sections with one name the last one
with text is kept (``create_section_files.py`` takes the last: ``list_rindex``), except that headers of one
name that follow each other make one section (``FRONTAL VIEW: ... LATERAL VIEW: ...`` are both findings;
ours: the creators' parser keeps the lateral view's text alone). The text before the first
header (``FINAL REPORT``) is not a section. The creators' per-study corrections (``custom_mimic_cxr_rules``,
31 studies) are not applied: they name the *conclusion* text for labelling, not the findings.

>>> report = '''                                 FINAL REPORT
...  EXAMINATION:  CHEST (PA AND LAT)
...  INDICATION:  ___ with cough.
...  FINDINGS:
...  The lungs are clear.  No pleural
...  effusion.
...  CONCLUSION:  No acute process.'''
>>> sections = parse_sections(report)
>>> sections["findings"], sections["impression"], list(sections)[:2]
('The lungs are clear. No pleural effusion.', 'No acute process.', ['examination', 'indication'])
"""

from __future__ import annotations

import re
from pathlib import Path

SECTION_NAMES: dict[str, str] = {
    "preamble": "preamble", "impression": "impression", "comparison": "comparison", "indication": "indication",
    "findings": "findings", "examination": "examination", "technique": "technique", "history": "history",
    "comparisons": "comparison", "clinical history": "history", "reason for examination": "indication",
    "notification": "notification", "reason for exam": "indication", "clinical information": "history",
    "exam": "examination", "clinical indication": "indication", "conclusion": "impression",
    "chest, two views": "findings", "recommendation(s)": "recommendations", "type of examination": "examination",
    "reference exam": "comparison", "patient history": "history", "addendum": "addendum",
    "comparison exam": "comparison", "date": "date", "comment": "comment",
    "findings and impression": "impression", "wet read": "wet read", "comparison film": "comparison",
    "recommendations": "recommendations", "findings/impression": "impression", "pfi": "history",
    "recommendation": "recommendations", "wetread": "wet read", "ndication": "impression",
    "impresson": "impression", "imprression": "impression", "imoression": "impression",
    "impressoin": "impression", "imprssion": "impression", "impresion": "impression",
    "imperssion": "impression", "mpression": "impression", "impession": "impression",
    "findings/ impression": "impression", "finding": "findings", "findins": "findings",
    "findindgs": "findings", "findgings": "findings", "findngs": "findings", "findnings": "findings",
    "finidngs": "findings", "idication": "indication", "reference findings": "findings",
    "comparision": "comparison", "comparsion": "comparison", "comparrison": "comparison",
    "comparisions": "comparison",
}
"""Header name (lower case, single spaces) → canonical section: MIT-LCP ``section_parser.py`` L97-155, whose
``ndication`` → impression is kept as written there."""
MAIN_SECTIONS: tuple[str, ...] = ("impression", "findings", "history", "comparison", "addendum")
"""A name containing one of these is that section (``section_parser.py`` L181-192), first match in this order."""
VIEW_WORDS = re.compile(
    r"chest|portable|pa and lateral|lateral and pa|ap and lateral|lateral and ap|frontal and|two views|"
    r"frontal view|pa view|ap view|one view|lateral view|bone window|frontal upright|frontal semi-upright|ribs|"
    r"pa and lat"
)
"""Names that describe the views taken are findings (``section_parser.py`` L157-177)."""
_INDICATION_WORDS = re.compile(r"indication|reason")
_HEADER = re.compile(r"(?m)^[ \t]*([A-Za-z][A-Za-z ()/,&-]{0,60}?)[ \t]*:(?=[ \t\r]|$)")
NARRATIVE = ("findings", "impression")
"""Sections dropped when they hold no text (``section_parser.py`` L66-75)."""


def canonical_name(header: str) -> str | None:
    """The section a header names (module doc, rule 2), or None for an unknown name.

    >>> canonical_name("PA AND LATERAL CHEST RADIOGRAPHS"), canonical_name("Impresion"), canonical_name("Heart")
    ('findings', 'impression', None)
    """
    name = " ".join(header.lower().split())
    if name in SECTION_NAMES:
        return SECTION_NAMES[name]
    main = next((m for m in MAIN_SECTIONS if m in name), None)
    if main is not None:
        return main
    if _INDICATION_WORDS.search(name):
        return "indication"
    return "findings" if VIEW_WORDS.search(name) else None


def parse_sections(text: str) -> dict[str, str]:
    """Sections of a report's text by canonical name, in the order they first appear (module doc).

    A section's text has its whitespace collapsed (wrapped lines joined with one space); an upper-case header
    of an unknown name keeps its own lower-case name, a mixed-case one is ordinary text.
    """
    heads: list[tuple[str, int, int]] = []
    for m in _HEADER.finditer(text):
        header = m.group(1).strip()
        name = canonical_name(header)
        if name is None and header == header.upper():
            name = " ".join(header.lower().split())
        if name is not None:
            heads.append((name, m.start(), m.end()))
    sections: dict[str, str] = {}
    previous = None
    for (name, _, start), nxt in zip(heads, [*heads[1:], None]):
        body = " ".join(text[start : nxt[1] if nxt else len(text)].split())
        if name == previous and sections.get(name):
            sections[name] = f"{sections[name]} {body}".strip()  # FRONTAL VIEW: ... LATERAL VIEW: ...
        elif body or (name not in NARRATIVE and name not in sections):
            sections[name] = body  # a later section of a name replaces an earlier one, an empty one none
        previous = name
    return sections


def read_sections(path: str | Path) -> dict[str, str]:
    """The sections of the report file at ``path`` (`parse_sections`); empty when there is no such file."""
    path = Path(path)
    if not path.is_file():
        return {}
    return parse_sections(path.read_text(encoding="utf-8", errors="replace"))
