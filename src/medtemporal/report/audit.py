"""A benchmark's blind-solvability audit (`medtemporal.audit`, the manifest's ``audit`` section) as a Markdown or
HTML table, for `medtemporal audit` and the reports. It reads the stored dictionary only: the audit package
computes, the report package renders, and neither imports the other."""

from __future__ import annotations

from html import escape
from typing import Any, Mapping

from medtemporal.report.tables import markdown_table


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _cell(r: Mapping[str, Any]) -> str:
    return f"{_pct(r['accuracy'])} [{_pct(r['ci_low'])}, {_pct(r['ci_high'])}]"


HEADER = ["Task", "Subtype", "n", "Patients", "Chance", "Heuristic (95% CI)", "Rule", "Classifier (95% CI)", "Flag"]


def audit_rows(audit: Mapping[str, Any]) -> list[list[str]]:
    """One row per audited subtype, accuracies in percent."""
    return [[r["task"], r["subtype"], str(r["n"]), str(r["patients"]), _pct(r["chance"]), _cell(r["heuristic"]),
             r["heuristic"]["rule"], _cell(r["classifier"]), "BLIND-SOLVABLE" if r["flagged"] else "ok"]
            for r in audit.get("subtypes", [])]


def _summary(audit: Mapping[str, Any]) -> str:
    flagged = audit.get("flagged", [])
    head = (f"{len(flagged)} subtype(s) answerable blind more than 5 points above chance: {', '.join(flagged)}."
            if flagged else "No subtype is answerable blind more than 5 points above chance.")
    skipped = "; ".join(f"{k}: {v}" for k, v in audit.get("skipped", {}).items())
    return head + (f" Skipped: {skipped}." if skipped else "")


def audit_markdown(audit: Mapping[str, Any], title: str = "Blind-solvability audit") -> str:
    """The audit as a Markdown section."""
    return "\n".join([f"## {title}", "", _summary(audit), "",
                      markdown_table(HEADER, audit_rows(audit)) if audit.get("subtypes") else "", ""])


def audit_html(audit: Mapping[str, Any], title: str = "Blind-solvability audit", anchor: str = "audit") -> str:
    """The audit as an HTML section (``id`` ``anchor``); its table only where a subtype was audited."""
    rows = audit_rows(audit)
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    table = (f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
             if rows else "")
    return f'<h2 id="{escape(anchor)}">{escape(title)}</h2><p class="note">{escape(_summary(audit))}</p>{table}'
