"""The ``medtemporal`` command line: one sub-command per module, no logic of its own.

Each module in `COMMANDS` defines ``add(subparsers)``, which adds its parser
and sets ``func`` to a function taking the parsed arguments. `main` imports
only the module of the command it runs (the others appear in ``--help`` by
their `HELP` line), so ``medtemporal run`` never pays for what ``report`` needs.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys

from medtemporal import __version__
from medtemporal._gc import not_owned, own_process, start_up, started
from medtemporal.bounds import check_seed
from medtemporal.errors import MedTemporalError
from medtemporal.progress import quiet
from medtemporal.warning_summary import collect_warnings
from medtemporal.writes import disk_error, path_error

COMMANDS = ("demo", "list", "score", "report", "leaderboard", "view", "compare", "build", "audit", "export", "import-predictions", "run", "runs",
            "models", "phantoms", "nltk-data", "check", "new-family")


HELP = {
    "demo": "phantoms -> build -> run baselines -> score -> report, offline",
    "list": "list the benchmarks, backends, protocols, metrics, extractors, phantoms and prompts",
    "score": "score runs: each task's metrics with patient-clustered 95%% CIs -> scores.json",
    "report": "write report.md / .csv / .html for runs (scoring them first if needed)",
    "leaderboard": "a static site of every model x every family beside the published rows (no server needed)",
    "view": "browse runs and their reports on 127.0.0.1 (loopback only)",
    "compare": "paired differences of runs on their common items (patient-clustered bootstrap, McNemar's exact test)",
    "build": "build a benchmark from raw data (or import a released question file)",
    "audit": "how much of a benchmark can be answered without the images",
    "export": "export a benchmark to Parquet, a Hub folder, VLMEvalKit, lmms-eval, inspect_ai or its paper's release format",
    "import-predictions": "import VLMEvalKit results, lmms-eval sample logs or inspect_ai logs into a run folder and score them",
    "run": "run a model on benchmarks into run folders (the same command resumes)",
    "runs": "inspect run folders",
    "models": "list the registered models (`--model NAME`), or show what NAME resolves to",
    "phantoms": "write synthetic raw data (phantoms) in a real dataset's layout",
    "check": "check that a benchmark family keeps every rule of the contract",
    "new-family": "write a new benchmark family's folder that passes `medtemporal check`",
    "nltk-data": "fetch punkt_tab and WordNet 3.0 for the text metrics where missing (scoring does it on first use; "
                 "offline: --wordnet-archive)",
}
"""Each command's one-line help, shown without importing its module; a command missing here is imported."""
DESCRIPTION = ("Build, run and score benchmarks of temporal medical reasoning for vision-language models; "
               "`medtemporal COMMAND --help` tells more.")


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: every command in full (``only`` None), or ``only`` in full and the rest by name."""
    p = argparse.ArgumentParser(prog="medtemporal", description=DESCRIPTION)
    p.add_argument("--version", action="version", version=f"medtemporal {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        if only is None or name == only or name not in HELP:
            importlib.import_module(f"medtemporal.cli._{name.replace('-', '_')}").add(sub)
        else:
            sub.add_parser(name, help=HELP[name])
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the sub-command; user errors print one line and exit 2.

    Without ``argv`` (the ``medtemporal`` command, ``python -m medtemporal``) the command line is read and the
    process is taken to end after the command: what its start-up builds is kept out of the cyclic garbage
    collector (`medtemporal._gc.own_process`), and so is everything at the end, so the interpreter's last
    collection does not walk every item and module again (about 0.2 s of a run's exit).
    """
    if argv is None:
        own_process()
        try:
            return _main(sys.argv[1:])
        finally:
            gc.freeze()
    with not_owned():  # called from Python (a test, the demo's steps): the process is not this command's
        return _main(argv)


def _main(argv: list[str]) -> int:
    chosen = next((a for a in argv if not a.startswith("-")), "")
    start_up()  # the command's modules are imported here
    args = parser(chosen if chosen in COMMANDS else "").parse_args(argv)
    started()
    with collect_warnings() as collected, quiet(bool(getattr(args, "no_progress", False))):  # told once at the end
        try:
            check_seed(getattr(args, "seed", None))  # every command's --seed (builds, phantoms, scores, sampling)
            return int(args.func(args) or 0)
        except MedTemporalError as exc:
            print(f"medtemporal: error: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:  # a write the disk refused where no writer named it (a folder, a log, a cache),
            error = disk_error(exc) or path_error(exc)  # or a folder where a file belongs, a looping link
            if error is None:
                raise
            print(f"medtemporal: error: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("medtemporal: interrupted; finished work is saved, run the same command to resume.", file=sys.stderr)
            return 130
        finally:
            if collected.text():
                print(collected.text(), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
