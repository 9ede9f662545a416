"""``medtemporal run BENCHMARK [BENCHMARK ...] --model NAME|URI [--model ...] --out DIR``: run models on benchmarks
(the same command resumes); several benchmarks, or an eval-set file (`medtemporal.runner.evalset`), make one run
folder each under DIR (under DIR/<model> with several models) and end with one summary table across them; a model
that fails to load is reported and the others go on."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from medtemporal.backends.base import GenerateConfig
from medtemporal.backends.images import DEFAULT_MAX_PIXELS
from medtemporal.backends.session import RetryPolicy
from medtemporal.bounds import CONCURRENCY_MAX
from medtemporal.cli._score import (
    add_judge_arguments,
    add_tracking_arguments,
    check_tracking,
    judge_from_args,
    print_scores,
    track,
)
from medtemporal.errors import InvalidInputError, MedTemporalError
from medtemporal.progress import add_no_progress
from medtemporal.prompts import PromptSet
from medtemporal.runner import RunOptions, run
from medtemporal.runner.evalset import check_entries, is_done, model_folder, plan_runs
from medtemporal.runs import RunFolder
from medtemporal.scoring import score_run
from medtemporal.scoring.failures import scores_failure


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run a model on benchmarks into run folders (the same command resumes)",
        description="Run a model on a benchmark; predictions are saved as they arrive and the same command resumes. "
                    "Several benchmarks (or an eval-set file, YAML or JSON: see the README) make one run folder "
                    "each under --out, skip those already done, and end with one summary table.",
    )
    p.add_argument("benchmark", type=Path, nargs="+", metavar="BENCHMARK",
                   help="benchmark folder (items.jsonl + manifest.json); several; or one eval-set file (.yaml, .json)")
    p.add_argument("--model", metavar="NAME|URI", action="append",
                   help="a registered model (`medtemporal models`: medgemma-4b, lingshu-7b@vllm ...) or a URI: "
                   "openai:MODEL, openai+http://HOST:PORT/v1:MODEL, hf:PATH, vllm:PATH, baseline:random ...; "
                   "repeat it to run several models, each into DIR/<model>/ (required unless the eval set names one)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="run folder (config.json, predictions.jsonl, scores.json); with several "
                   "benchmarks, the folder of their run folders (required unless the eval set names one)")
    p.add_argument("--name", metavar="NAME",
                   help="the run's display name in tables and reports (default: the model's short name, e.g. "
                   "Qwen2.5-VL-7B-Instruct)")
    p.add_argument("--protocol", metavar="NAME",
                   help="protocol name (default: the benchmark's, usually direct; see `medtemporal list protocol`)")
    p.add_argument("--protocol-option", action="append", default=[], metavar="KEY=VALUE",
                   help="protocol option, e.g. k=3 or retriever=pairwise for the RAG protocols")
    p.add_argument("--tasks", metavar="LIST",
                   help="comma-separated tasks to run, e.g. vqa,image_pair (default: all the model can answer; "
                   "baseline:random and baseline:majority skip open tasks)")
    p.add_argument("--limit", type=int, metavar="N",
                   help="run at most N items: a seeded sample spread evenly over tasks and subtypes (the same N "
                   "gives the same items)")
    p.add_argument("--limit-per-task", type=int, metavar="N",
                   help="run at most N items of each task, spread over its subtypes likewise")
    p.add_argument("--image-root", type=Path, metavar="DIR", help="folder holding the images (default: the manifest's)")
    p.add_argument("--prompt", action="append", default=[], metavar="NAME=FILE", help="replace a prompt template")
    g = p.add_argument_group("generation")
    g.add_argument("--temperature", type=float, metavar="T",
                   help="sampling temperature (default: the paper's, from the benchmark's spec, else 0)")
    g.add_argument("--max-tokens", type=int, metavar="N",
                   help="most output tokens per call (default: the paper's setting, "
                   f"from the benchmark's spec, else {GenerateConfig.max_tokens}; 0: no cap)")
    g.add_argument("--seed", type=int, metavar="N", help="sampling seed passed to the model (default: none)")
    g.add_argument("--repeats", type=int, default=1, metavar="N",
                   help="answers per item, each its own sample above temperature 0 (default 1); "
                        "a finished run resumes with more")
    g.add_argument("--top-p", type=float, metavar="P", help="nucleus sampling bound (default: the model's)")
    g.add_argument("--system-prompt", metavar="TEXT", help="system message sent before every request")
    g.add_argument("--max-pixels", type=int, default=DEFAULT_MAX_PIXELS, metavar="N",
                   help=f"shrink images to at most this many pixels (default {DEFAULT_MAX_PIXELS}; 0: no bound)")
    b = p.add_argument_group("backend and endpoint")
    b.add_argument("--api-key-env", metavar="NAME",
                   help="environment variable with the API key (default OPENAI_API_KEY)")
    b.add_argument("--concurrency", type=int, metavar="N",
                   help=f"requests in flight at once, at most {CONCURRENCY_MAX} (default: the backend's)")
    b.add_argument("--timeout", type=float, default=RetryPolicy.timeout_s, metavar="SECONDS",
                   help=f"seconds per request to a remote endpoint (default {RetryPolicy.timeout_s:g})")
    b.add_argument("--attempts", type=int, default=RetryPolicy.max_attempts, metavar="N",
                   help=f"tries per request, the first included (default {RetryPolicy.max_attempts})")
    b.add_argument("--max-errors", type=int, metavar="N",
                   help="stop once more than N items have failed (default: never stop)")
    b.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="backend option, e.g. dtype=bfloat16, device=cuda, batch_size=4, max_images=5")
    b.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="run model replicas on a Ray cluster (pip install 'medtemporal[ray]'): alone for a local "
                   "one, or the address of `ray start --head` (auto, HOST:6379, ray://HOST:10001); each replica "
                   "takes --option num_gpus=N (default 1 with GPUs) and num_cpus=N")
    b.add_argument("--replicas", type=int, metavar="N", help="model replicas with --ray (default: one per GPU, else 1)")
    b.add_argument("--allow-remote-data", action="store_true",
                   help="allow credentialed data to go to a non-local endpoint (check your data-use agreement)")
    c = p.add_argument_group("cache and output")
    c.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    c.add_argument("--cache", type=Path, metavar="FILE",
                   help="response cache file (default $MEDTEMPORAL_CACHE or ~/.cache/medtemporal)")
    add_no_progress(c)
    c.add_argument("--no-score", action="store_true", help="do not write scores.json at the end")
    add_judge_arguments(p)
    add_tracking_arguments(p)
    p.set_defaults(func=main)


def _value(text: str) -> Any:
    """``5`` → 5, ``0.5`` → 0.5, ``true`` → True, ``null`` → None, anything else stays text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_pairs(pairs: list[str], flag: str) -> dict[str, str]:
    """``["a=1", "b=x"]`` → ``{"a": "1", "b": "x"}``, refusing items without ``=``."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"{flag} {pair!r} is not KEY=VALUE; write e.g. {flag} name=value.")
        out[key.strip()] = value
    return out


def main(args: argparse.Namespace) -> int:
    """Run (or resume) each benchmark for each model and print the scores; exit status 1 when items failed, a run
    stopped early or failed as a whole, or a model failed to load (said in one sentence each)."""
    check_tracking(args)
    entries, evalset = plan_runs(args.benchmark, args.out)
    models = list(dict.fromkeys(args.model or (evalset.models if evalset else [])))
    if not models:
        raise InvalidInputError("--model is required (or a `model:` in the eval set); e.g. --model baseline:random.")
    if len(models) > 1 and args.name:
        raise InvalidInputError("--name names the runs of one model; with several models each run takes its "
                                "model's name, so leave --name out.")
    if len(models) > 1 and evalset is None and len(entries) == 1:  # one folder: it becomes the parent
        entries = [dataclasses.replace(entries[0], out=entries[0].out / entries[0].benchmark.name)]
    base = _options(args, (args.name or (evalset.name if evalset else None)))
    judge, judge_options = judge_from_args(args)
    single = evalset is None and len(entries) == 1 and len(models) == 1
    if not single:  # every benchmark's options, before any model is asked (a model that fails to load is its own)
        check_entries(entries, base)
    scored, failures, code = [], [], 0
    for model in models:
        plan = entries if len(models) == 1 else [
            dataclasses.replace(e, out=e.out.parent / model_folder(model) / e.out.name) for e in entries]
        for k, entry in enumerate(plan):
            options = dataclasses.replace(base, **dict(entry.options))
            if not single and is_done(entry, model, options, args.judge):
                print(f"{entry.out}: already done (finished and scored), skipped.")
                scored.append(entry.out)
                continue
            try:
                summary = run(entry.benchmark, model, entry.out, options)
            except MedTemporalError as exc:
                if len(models) == 1:
                    raise
                left = len(plan) - k - 1
                failures.append(f"{model}: {exc}" + (f" (its {left} other benchmark{'s' if left > 1 else ''} "
                                                     "skipped)" if left else ""))
                print(f"{model}: failed ({exc}); going on with the other models.", file=sys.stderr)
                code = 1
                break
            if judge is not None and not args.no_score and summary.stopped is None:
                score_run(entry.out, judge=judge, judge_options=judge_options)
                summary.scored = True
            print(summary)
            failure = summary.failure
            if summary.scored:
                scored.append(entry.out)
                failure = failure or scores_failure(RunFolder(entry.out).scores(), entry.out)
                track(args, entry.out)
                if single:
                    print(f"scores: {RunFolder(entry.out).scores_file}; the report: `medtemporal report {entry.out}`")
            failures.append(failure)
            code = max(code, 1 if failure or summary.stopped or summary.n_errors else 0)
    if scored:
        print_scores(scored)
    for failure in filter(None, failures):
        print(f"medtemporal: error: {failure}", file=sys.stderr)
    return code


def _options(args: argparse.Namespace, name: str | None) -> RunOptions:
    """The run options the command line sets (each benchmark of a set may override some)."""
    generation: dict[str, Any] = {"seed": args.seed, "top_p": args.top_p, "system_prompt": args.system_prompt}
    generation = {k: v for k, v in generation.items() if v is not None}
    if args.temperature is not None:
        generation["temperature"] = args.temperature
    if args.max_tokens is not None:
        generation["max_tokens"] = args.max_tokens or None  # 0: no cap
    return RunOptions(
        protocol=args.protocol,
        protocol_options={k: _value(v) for k, v in parse_pairs(args.protocol_option, "--protocol-option").items()},
        config=generation,
        tasks=[t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None,
        limit=args.limit,
        limit_per_task=args.limit_per_task,
        repeats=args.repeats,
        concurrency=args.concurrency,
        max_errors=args.max_errors,
        image_root=args.image_root,
        prompts=PromptSet(parse_pairs(args.prompt, "--prompt")),
        max_pixels=args.max_pixels,
        cache_path=args.cache,
        no_cache=args.no_cache,
        progress=not args.no_progress,
        api_key_env=args.api_key_env,
        retry=RetryPolicy(max_attempts=args.attempts, timeout_s=args.timeout),
        backend_options={k: _value(v) for k, v in parse_pairs(args.option, "--option").items()},
        score=not args.no_score and not args.judge,
        allow_remote_data=args.allow_remote_data,
        ray=args.ray,
        replicas=args.replicas,
        name=name,
    )
