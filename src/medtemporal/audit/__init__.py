"""``medtemporal audit``: how much of a benchmark can be answered without the images?

`audit_items` scores, per task and subtype, three blind readers cross-validated
by patient (structural option heuristics, an option classifier, and a reader of
the question with the options) against chance, and flags subtypes where a reader's
95% interval lies more than five points above chance (unless the family's notes
say the paper's design makes them so). Readers are fitted per subtype, or
per task across its subtypes (``fit="task"``, for subtypes that name the
answer's category); `run_audit` also returns each item's held-out blind pick.
Builds store the result as the manifest's ``audit`` section; reports show it
(`medtemporal.report.audit`, which this package does not import). See
``docs/audit.md``.
"""

from medtemporal.audit.core import (
    FITS,
    MARGIN,
    POOLED,
    READERS,
    Audit,
    audit_items,
    chance_level,
    run_audit,
)

__all__ = ["FITS", "MARGIN", "POOLED", "READERS", "Audit", "audit_items", "chance_level", "run_audit"]
