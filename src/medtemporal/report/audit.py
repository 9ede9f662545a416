"""A benchmark's blind-solvability audit (`medtemporal.audit`, the manifest's ``audit`` section) as a Markdown or
HTML table, for `medtemporal audit` and the reports. It reads the stored dictionary only: the audit package
computes, the report package renders, and neither imports the other."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from medtemporal.report.tables import markdown_table


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _cell(r: Mapping[str, Any]) -> str:
    return f"{_pct(r['accuracy'])} [{_pct(r['ci_low'])}, {_pct(r['ci_high'])}]"


def _flag(r: Mapping[str, Any]) -> str:
    """``BLIND-SOLVABLE``, ``ok``, or ``breakdown`` for a subtype row of a task audited as a whole."""
    return "BLIND-SOLVABLE" if r["flagged"] else "breakdown" if r.get("breakdown") else "ok"


HEADER = ["Task", "Subtype", "n", "Patients", "Chance", "Heuristic (95% CI)", "Rule", "Classifier (95% CI)", "Flag"]


def audit_rows(audit: Mapping[str, Any]) -> list[list[str]]:
    """One row per audited subtype, accuracies in percent."""
    return [[r["task"], r["subtype"], str(r["n"]), str(r["patients"]), _pct(r["chance"]), _cell(r["heuristic"]),
             r["heuristic"]["rule"], _cell(r["classifier"]), _flag(r)]
            for r in audit.get("subtypes", [])]


def _summary(audit: Mapping[str, Any]) -> str:
    flagged = audit.get("flagged", [])
    head = (f"{len(flagged)} subtype(s) answerable blind more than 5 points above chance: {', '.join(flagged)}."
            if flagged else "No subtype is answerable blind more than 5 points above chance.")
    if audit.get("method", {}).get("fit") == "task":
        head += (" Readers were fitted on each task's items across its subtypes (a model never sees the subtype); "
                 "each task is judged over all its subtypes (subtype (all)), its subtype rows are the breakdown.")
    skipped = "; ".join(f"{k}: {v}" for k, v in audit.get("skipped", {}).items())
    return head + (f" Skipped: {skipped}." if skipped else "")


def audit_markdown(audit: Mapping[str, Any], title: str = "Blind-solvability audit") -> str:
    """The audit as a Markdown section."""
    return "\n".join([f"## {title}", "", _summary(audit), "",
                      markdown_table(HEADER, audit_rows(audit)) if audit.get("subtypes") else "", ""])


def audit_html(audit: Mapping[str, Any], title: str = "Blind-solvability audit") -> str:
    """The audit as an HTML section."""
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in audit_rows(audit))
    return (f"<h2>{escape(title)}</h2><p class=\"note\">{escape(_summary(audit))}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
