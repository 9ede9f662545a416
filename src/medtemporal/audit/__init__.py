"""``medtemporal audit``: how much of a benchmark can be answered without the images?

`audit_items` scores, per task and subtype, two blind readers cross-validated
by patient (structural option heuristics and a TF-IDF text classifier)
against chance, and flags subtypes a blind reader beats by more than five
points. Builds store the result as the manifest's ``audit`` section; reports
show it (`audit_markdown`, `audit_html`). See ``docs/audit.md``.
"""

from medtemporal.audit.core import MARGIN, audit_items, chance_level
from medtemporal.audit.render import audit_html, audit_markdown

__all__ = ["MARGIN", "audit_html", "audit_items", "audit_markdown", "chance_level"]
