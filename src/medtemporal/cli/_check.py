"""``medtemporal check FAMILY``: the conformance check of a benchmark family (`medtemporal.testing`)."""

from __future__ import annotations

import argparse


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="check that a benchmark family keeps every rule of the contract",
                       description="One check per rule of the family contract (`medtemporal.testing`): the names "
                                   "the spec gives are registered, the demo and published rows are declared, ...; "
                                   "exit status 1 when one fails.")
    p.add_argument("family", metavar="FAMILY", help="registered benchmark family (`medtemporal list benchmarks`)")
    p.add_argument("--build", action="store_true",
                   help="also write the demo's phantoms and build the family from them in a temporary folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from medtemporal.testing import check_family

    results = check_family(args.family, build=args.build)
    for rule, problem in results.items():
        print(f"{'ok  ' if problem is None else 'FAIL'} {rule}" + ("" if problem is None else f": {problem}"))
    failed = sum(p is not None for p in results.values())
    print(f"{args.family}: {len(results) - failed} of {len(results)} checks pass.")
    return 1 if failed else 0
