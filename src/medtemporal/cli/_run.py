"""``medtemporal run BENCHMARK --model URI --out DIR``: run a model on a benchmark (resumes if DIR holds the run)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from medtemporal.backends.base import GenerateConfig
from medtemporal.backends.images import DEFAULT_MAX_PIXELS
from medtemporal.backends.session import RetryPolicy
from medtemporal.cli._score import add_judge_arguments, judge_from_args, print_scores
from medtemporal.errors import InvalidInputError
from medtemporal.prompts import PromptSet
from medtemporal.runner import RunOptions, run
from medtemporal.runs import RunFolder
from medtemporal.scoring import score_run


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run a model on a benchmark into a run folder (the same command resumes)",
        description="Run a model on a benchmark; predictions are saved as they arrive and the same command resumes.",
    )
    p.add_argument("benchmark", type=Path, help="benchmark folder (items.jsonl + manifest.json)")
    p.add_argument("--model", required=True, metavar="URI",
                   help="openai:MODEL, openai+http://HOST:PORT/v1:MODEL, hf:PATH, vllm:PATH, baseline:random ...")
    p.add_argument("--out", required=True, type=Path, help="run folder (config.json, predictions.jsonl, scores.json)")
    p.add_argument("--protocol",
                   help="protocol name (default: the benchmark's, usually direct; see `medtemporal list protocol`)")
    p.add_argument("--protocol-option", action="append", default=[], metavar="KEY=VALUE",
                   help="protocol option, e.g. k=3 or retriever=pairwise for the RAG protocols")
    p.add_argument("--tasks", help="comma-separated tasks to run, e.g. vqa,image_pair (default: all the model can "
                   "answer; baseline:random and baseline:majority skip open tasks)")
    p.add_argument("--limit", type=int, metavar="N",
                   help="run at most N items: a seeded sample spread evenly over tasks and subtypes (the same N "
                   "gives the same items)")
    p.add_argument("--limit-per-task", type=int, metavar="N",
                   help="run at most N items of each task, spread over its subtypes likewise")
    p.add_argument("--image-root", type=Path, help="folder holding the images (default: the manifest's)")
    p.add_argument("--prompt", action="append", default=[], metavar="NAME=FILE", help="replace a prompt template")
    g = p.add_argument_group("generation")
    g.add_argument("--temperature", type=float,
                   help="sampling temperature (default: the paper's, from the benchmark's spec, else 0)")
    g.add_argument("--max-tokens", type=int, help="most output tokens per call (default: the paper's setting, "
                   f"from the benchmark's spec, else {GenerateConfig.max_tokens}; 0: no cap)")
    g.add_argument("--seed", type=int, help="sampling seed passed to the model")
    g.add_argument("--repeats", type=int, default=1,
                   help="answers per item, each its own sample above temperature 0 (default 1); "
                        "a finished run resumes with more")
    g.add_argument("--top-p", type=float, help="nucleus sampling bound")
    g.add_argument("--system-prompt", help="system message sent before every request")
    g.add_argument("--max-pixels", type=int, default=DEFAULT_MAX_PIXELS,
                   help=f"shrink images to at most this many pixels (default {DEFAULT_MAX_PIXELS}; 0: no bound)")
    b = p.add_argument_group("backend and endpoint")
    b.add_argument("--api-key-env", metavar="NAME",
                   help="environment variable with the API key (default OPENAI_API_KEY)")
    b.add_argument("--concurrency", type=int, help="requests in flight at once (default: the backend's)")
    b.add_argument("--timeout", type=float, default=RetryPolicy.timeout_s,
                   help="seconds per request to a remote endpoint")
    b.add_argument("--attempts", type=int, default=RetryPolicy.max_attempts, help="tries per request, first included")
    b.add_argument("--max-errors", type=int, help="stop once more than N items have failed")
    b.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="backend option, e.g. dtype=bfloat16, device=cuda, batch_size=4, max_images=5")
    b.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="run model replicas on a Ray cluster (pip install 'medtemporal[ray]'): alone for a local "
                   "one, or the address of `ray start --head` (auto, HOST:6379, ray://HOST:10001); each replica "
                   "takes --option num_gpus=N (default 1 with GPUs) and num_cpus=N")
    b.add_argument("--replicas", type=int, help="model replicas with --ray (default: one per GPU, else 1)")
    b.add_argument("--allow-remote-data", action="store_true",
                   help="allow credentialed data to go to a non-local endpoint (check your data-use agreement)")
    c = p.add_argument_group("cache and output")
    c.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    c.add_argument("--cache", type=Path,
                   help="response cache file (default $MEDTEMPORAL_CACHE or ~/.cache/medtemporal)")
    c.add_argument("--no-progress", action="store_true", help="no progress bar")
    c.add_argument("--no-score", action="store_true", help="do not write scores.json at the end")
    add_judge_arguments(p)
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
    """Run (or resume) and print the summary; exit status 1 when items failed or the run stopped early."""
    generation: dict[str, Any] = {"seed": args.seed, "top_p": args.top_p, "system_prompt": args.system_prompt}
    generation = {k: v for k, v in generation.items() if v is not None}
    if args.temperature is not None:
        generation["temperature"] = args.temperature
    if args.max_tokens is not None:
        generation["max_tokens"] = args.max_tokens or None  # 0: no cap
    options = RunOptions(
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
    )
    summary = run(args.benchmark, args.model, args.out, options)
    judge, judge_options = judge_from_args(args)
    if judge is not None and not args.no_score and summary.stopped is None:
        score_run(args.out, judge=judge, judge_options=judge_options)
        summary.scored = True
    print(summary)
    if summary.scored:
        print(f"scores: {RunFolder(args.out).scores_file}; the report: `medtemporal report {args.out}`")
        print_scores([args.out])
    return 1 if summary.stopped or summary.n_errors else 0
