"""``medtemporal audit BENCH``: blind accuracy per task and subtype against chance (see `medtemporal.audit`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from medtemporal.audit import FITS, audit_items
from medtemporal.audit.core import FOLDS
from medtemporal.benchmark import load
from medtemporal.errors import InvalidInputError
from medtemporal.progress import add_no_progress
from medtemporal.report.audit import audit_markdown
from medtemporal.writes import write_atomic


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("audit", help="how much of a benchmark can be answered without the images",
                       description="Blind accuracy per task and subtype (option heuristics, an option "
                                   "classifier and a reader of question and options together, cross-validated "
                                   "by patient) against chance; exit status 1 when a subtype is answerable blind "
                                   "(a reader's 95% interval more than 5 points above chance) and the family's "
                                   "notes do not say the paper's design makes it so.")
    p.add_argument("benchmark", type=Path, metavar="BENCH", help="benchmark folder (built or imported)")
    p.add_argument("--folds", type=int, default=FOLDS, metavar="N",
                   help=f"cross-validation folds by patient (default {FOLDS})")
    p.add_argument("--fit", choices=FITS, default=None,
                   help="fit the readers on each subtype's items, or on each task's items across its subtypes "
                        "(for subtypes that name the answer's category); default: as the build's audit did, else as "
                        "the family declares")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the audit as JSON to FILE")
    add_no_progress(p)
    p.set_defaults(func=run)


def _family_fit(name: str) -> str:
    """The fit the family's spec declares (`AuditRules.fit`); ``subtype`` for an unregistered name."""
    from medtemporal.contract import spec
    from medtemporal.errors import UnknownNameError

    try:
        return spec(name).audit.fit
    except UnknownNameError:
        return "subtype"


def run(args: argparse.Namespace) -> int:
    if args.folds < 2:
        raise InvalidInputError(f"--folds must be 2 or more, not {args.folds}.")
    bench = load(args.benchmark)
    fit = args.fit or (bench.manifest.audit or {}).get("method", {}).get("fit") or _family_fit(bench.manifest.benchmark)
    audit = audit_items(bench.items, folds=args.folds, progress=True, fit=fit)
    print(audit_markdown(audit, f"Blind-solvability audit of {bench.manifest.benchmark} ({args.benchmark})"))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.json, json.dumps(audit, indent=2) + "\n")
    return 1 if audit["flagged"] else 0
