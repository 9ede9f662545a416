"""``medtemporal audit``: how much of a benchmark can be answered without the images?

`audit_items` scores, per task and subtype, two blind readers cross-validated
by patient (structural option heuristics and a TF-IDF text classifier)
against chance, and flags subtypes a blind reader beats by more than five
points; `run_audit` also returns each item's held-out classifier pick. Builds
store the result as the manifest's ``audit`` section; reports show it
(`medtemporal.report.audit`, which this package does not import). See
``docs/audit.md``.
"""

from medtemporal.audit.core import FITS, MARGIN, Audit, audit_items, chance_level, run_audit

__all__ = ["FITS", "MARGIN", "Audit", "audit_items", "chance_level", "run_audit"]
