"""A benchmark's blind-solvability audit (`medtemporal.audit`, the manifest's ``audit`` section) as a Markdown or
HTML table, for `medtemporal audit` and the reports. It reads the stored dictionary only: the audit package
computes, the report package renders, and neither imports the other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from medtemporal.report.tables import DASH, cell, markdown_table
from medtemporal.report.escaping import html_text

READER_NAMES = {"heuristic": "heuristic", "classifier": "options", "question": "question + options"}
"""How each reader (`medtemporal.audit.core.READERS`) is named in tables."""


def reader_cell(r: Mapping[str, Any] | None) -> str:
    """A reader's accuracy with its interval, in percent (`medtemporal.report.tables.cell`'s rule)."""
    return DASH if r is None else f"{cell(r['accuracy'])} [{cell(r['ci_low'])}, {cell(r['ci_high'])}]"


HEADER = ["Task", "Subtype", "n", "Patients", "Chance", "Heuristic (95% CI)", "Rule", "Options (95% CI)",
          "Question + options (95% CI)", "Best", "Flag"]


def _flag(r: Mapping[str, Any]) -> str:
    if r.get("by_design"):
        return "BY DESIGN"
    if r["flagged"]:
        return "BLIND-SOLVABLE"
    from medtemporal.audit.core import MIN_PATIENTS  # here: the audit brings scikit-learn, not needed for scores

    return "ok (few patients)" if r["patients"] < MIN_PATIENTS else "ok"


def audit_rows(audit: Mapping[str, Any]) -> list[list[str]]:
    """One row per audited subtype, accuracies in percent (an audit written before the question reader shows
    a dash in its column)."""
    return [[r["task"], r["subtype"], str(r["n"]), str(r["patients"]), cell(r["chance"]), reader_cell(r["heuristic"]),
             r["heuristic"]["rule"], reader_cell(r["classifier"]), reader_cell(r.get("question")),
             READER_NAMES.get(r.get("best", ""), DASH), _flag(r)]
            for r in audit.get("subtypes", [])]


def _summary(audit: Mapping[str, Any]) -> str:
    from medtemporal.audit.core import MIN_PATIENTS, POOLED  # here, as in `_flag`

    flagged = audit.get("flagged", [])
    design = audit.get("by_design", {})
    if flagged:
        head = (f"{len(flagged)} subtype(s) answerable blind, the 95% interval of a blind reader lying more than "
                f"5 points above chance: {', '.join(flagged)}.")
    elif design:  # the rows marked BY DESIGN lie above chance: the sentence says so before any "no subtype"
        head = (f"{len(design)} subtype(s) are answerable blind by the paper's own design (BY DESIGN rows; see the "
                "notes below), not by a defect of the build; no other subtype is answerable blind more than 5 points "
                "above chance (the lower end of every blind reader's 95% interval).")
    else:
        head = ("No subtype is answerable blind more than 5 points above chance (the lower end of every blind "
                "reader's 95% interval).")
    if audit.get("method", {}).get("fit") == "task":
        head += (" Readers were fitted on each task's items across its subtypes (a model never sees the subtype); "
                 f"each task is judged over all its subtypes (subtype {POOLED}) and over each subtype.")
    if design and flagged:
        head += (f" {len(design)} subtype(s) are answerable blind by the paper's own design (BY DESIGN; see the "
                 "notes below), not by a defect of the build.")
    few = [f"{r['task']}/{r['subtype']}" for r in audit.get("subtypes", [])
           if r["patients"] < MIN_PATIENTS and not r.get("by_design")]
    if few:
        head += (f" Measured but not flagged, with fewer than {MIN_PATIENTS} patients (no interval to flag by): "
                 f"{', '.join(few)}.")
    skipped = "; ".join(f"{k}: {v}" for k, v in audit.get("skipped", {}).items())
    return head + (f" Skipped: {skipped}." if skipped else "")


def _notes(audit: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(subtypes, note) for each distinct by-design note, in table order."""
    by_note: dict[str, list[str]] = {}
    for where, note in audit.get("by_design", {}).items():
        by_note.setdefault(note, []).append(where)
    return [(", ".join(places), note) for note, places in by_note.items()]


FLOOR_HEADER = ["Task", "Subtype", "n", "Patients", "Baseline", "Metric", "Value (95% CI)"]


def floor_rows(audit: Mapping[str, Any]) -> list[list[str]]:
    """The text-only floor of open answers (`medtemporal.audit.floor`), one row per group, baseline and metric."""
    def value(r: Mapping[str, Any]) -> str:
        ci = "" if r["ci_low"] is None else f" [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        return f"{r['value']:.3f}{ci}"

    return [[r["task"], r["subtype"], str(r["n"]), str(r["patients"]), r["baseline"], r["metric"], value(r)]
            for r in (audit.get("text_floor") or {}).get("rows", [])]


def audit_markdown(audit: Mapping[str, Any], title: str = "Blind-solvability audit") -> str:
    """The audit as a Markdown section (with the text-only floor of open answers, where there is one)."""
    notes = [f"- **By design** ({places}): {note}" for places, note in _notes(audit)]
    floor = audit.get("text_floor")
    floor_part = ["", "### Text-only floor of open answers", "", floor["description"], "",
                  markdown_table(FLOOR_HEADER, floor_rows(audit))] if floor else []
    return "\n".join([f"## {title}", "", _summary(audit), "",
                      markdown_table(HEADER, audit_rows(audit)) if audit.get("subtypes") else "",
                      *([""] + notes if notes else []), *floor_part, ""])


def audit_html(audit: Mapping[str, Any], title: str = "Blind-solvability audit", anchor: str = "audit") -> str:
    """The audit as an HTML section (``id`` ``anchor``); its table only where a subtype was audited."""
    rows = audit_rows(audit)
    head = "".join(f"<th>{html_text(h)}</th>" for h in HEADER)
    body = "".join("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>" for row in rows)
    table = (f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
             if rows else "")
    notes = "".join(f"<p class=\"note\"><b>By design</b> ({html_text(places)}): {html_text(note)}</p>"
                    for places, note in _notes(audit))
    floor = audit.get("text_floor")
    if floor:
        cells = "".join(f"<th>{html_text(h)}</th>" for h in FLOOR_HEADER)
        lines = "".join("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>" for row in floor_rows(audit))
        notes += (f'<h3>Text-only floor of open answers</h3><p class="note">{html_text(floor["description"])}</p>'
                  f'<div class="scroll"><table><thead><tr>{cells}</tr></thead><tbody>{lines}</tbody></table></div>')
    return (f'<h2 id="{html_text(anchor)}">{html_text(title)}</h2><p class="note">{html_text(_summary(audit))}</p>'
            f"{table}{notes}")
