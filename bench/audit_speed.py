"""How long the blind-solvability audit takes on the demo-size builds (it runs inside ``medtemporal build``).

Writes the demo's phantoms (CXR and CheXpert Plus: 100 patients; ClinicalSkillQA: 100 instances; CT-RATE:
40 patients, 64 × 64 × 32), builds each family with ``--no-audit``, then times `audit_items` on its items
(the best of ``--repeats``, wall and CPU seconds). Run it with another checkout's ``src`` first on
``PYTHONPATH`` to compare two versions on the same machine.

    .venv/bin/python bench/audit_speed.py [--repeats 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from medtemporal.audit import audit_items
from medtemporal.benchmark import load
from medtemporal.cli import main as cli


def _builds(work: Path) -> dict[str, list[str]]:
    cxr, cxp, skill, ct = work / "cxr", work / "cxp", work / "skill", work / "ct"
    cli(["phantoms", "cxr", "--patients", "100", "--seed", "0", "--out", str(cxr)])
    cli(["phantoms", "chexpert-plus", "--patients", "100", "--seed", "0", "--image-size", "128", "--out", str(cxp)])
    cli(["phantoms", "skillqa", "--instances", "100", "--seed", "0", "--image-size", "128", "--out", str(skill)])
    cli(["phantoms", "ct-rate", "--patients", "40", "--seed", "0", "--shape", "64,64,32", "--out", str(ct)])
    jpg = ["--mimic-cxr-jpg", str(cxr / "mimic-cxr-jpg"), "--qba", str(cxr / "mimic-ext-cxr-qba")]
    return {
        "mi-cxr": [*jpg, "--icr-variant"],
        "eltlm": jpg,
        "temmed": ["--chexpert-plus", str(cxp), "--test-size", "33", "--vqa-items", "100"],
        "skillqa": ["--frames", str(skill)],
        "3d-rad": ["--ct-rate", str(ct)],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3, help="timed audits per family; the fastest is reported")
    p.add_argument("--keep", type=Path, help="write phantoms and builds here and keep them (default: a temp folder)")
    args = p.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="audit-speed-"))
    try:
        out = {}
        for family, options in _builds(work).items():
            bench = work / "benchmarks" / family
            cli(["build", family, *options, "--no-audit", "--overwrite", "--out", str(bench)])
            items = load(bench).items
            walls, cpus = [], []
            for _ in range(args.repeats):
                start, cpu = time.perf_counter(), time.process_time()
                audit = audit_items(items)
                walls.append(time.perf_counter() - start)
                cpus.append(time.process_time() - cpu)
            out[family] = {"items": len(items), "audited_subtypes": len(audit["subtypes"]),
                           "wall_s": round(min(walls), 2), "cpu_s": round(min(cpus), 2)}
        print(json.dumps(out, indent=2))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
