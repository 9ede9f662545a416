"""The kill figure of issues 15 and 24: random SIGKILLs of ``run``, ``score --judge``, ``build``, ``report`` and
``export`` with faults injected (HTTP 500, malformed JSON and empty replies from the model and the judge) lose,
duplicate and re-ask nothing and end in identical scores and files.

Prints one line per command (kills, attempts, what was lost, duplicated or re-asked, identical results), then the
totals.

    .venv/bin/python bench/kill.py [--kills 24] [--items 100]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from helpers.fake_openai import FakeOpenAI  # noqa: E402
from helpers.kill import kill_figure  # noqa: E402
from helpers.kill_commands import command_figures  # noqa: E402

RUN_SHARE = 0.4
"""Share of the kills that go to ``run``; the rest are shared by `helpers.kill_commands.SHARE`."""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kills", type=int, default=24, help="SIGKILLs in all (default %(default)s)")
    p.add_argument("--items", type=int, default=100, help="items of the killed run (default %(default)s)")
    p.add_argument("--seed", type=int, default=20240611)
    args = p.parse_args()
    run_kills = max(1, round(args.kills * RUN_SHARE))
    start = time.perf_counter()
    with FakeOpenAI.spawn() as fake, tempfile.TemporaryDirectory() as tmp:
        figure = kill_figure(fake, Path(tmp) / "run", items=args.items, kills=run_kills, seed=args.seed)
        others = command_figures(fake, Path(tmp) / "commands", kills=args.kills - run_kills, seed=args.seed)
    unexpected = figure.pop("unexpected_exits") + [e for f in others.values() for e in f.pop("unexpected_exits")]
    for err in unexpected:
        print(f"unexpected exit: {err}", file=sys.stderr)
    print(f"run: {figure['kills']} SIGKILLs over {figure['attempts']} attempts, {figure['items']} items: "
          f"{figure['lost']} lost, {figure['duplicated']} duplicated, {figure['reasked']} re-asked, "
          f"{figure['different']} differing answers, identical scores: {figure['identical_scores']}, "
          f"finished: {figure['finished']}")
    judge = others.pop("score --judge")
    print(f"score --judge: {judge['kills']} SIGKILLs over {judge['attempts']} attempts, {judge['verdicts']} verdicts: "
          f"{judge['lost']} lost, {judge['duplicated']} duplicated, {judge['reasked']} re-asked, identical scores: "
          f"{judge['identical']}, finished: {judge['finished']}, left behind: {len(judge['leftovers'])}")
    for name, f in others.items():
        items = f" {f['lost']} items lost, {f['duplicated']} duplicated, manifest identical: {f['manifest_matches']}," \
            if name.startswith("build") else ""
        print(f"{name}: {f['kills']} SIGKILLs over {f['attempts']} attempts:{items} identical files: {f['identical']}, "
              f"finished: {f['finished']}, left behind: {len(f['leftovers'])}")
    kills = figure["kills"] + judge["kills"] + sum(f["kills"] for f in others.values())
    builds = [f for name, f in others.items() if name.startswith("build")]
    lost = figure["lost"] + judge["lost"] + sum(f["lost"] for f in builds)
    duplicated = figure["duplicated"] + judge["duplicated"] + sum(f["duplicated"] for f in builds)
    identical = figure["identical_scores"] and judge["identical"] and all(f["identical"] for f in others.values())
    print(f"all: {kills} SIGKILLs, {lost} lost, {duplicated} duplicated, {figure['reasked'] + judge['reasked']} "
          f"re-asked, {len(unexpected)} unexpected exits, identical scores and files: {identical} "
          f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
