"""``medtemporal models [NAME]``: the model registry, or what one name (``NAME@BACKEND``) resolves to."""

from __future__ import annotations

import argparse
import json

from medtemporal.models import ANSWER_FORMATS, ModelEntry, entries, lookup, resolve
from medtemporal.models.catalog import TESTED


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list the registered models (`--model NAME`), or show what NAME resolves to",
                       description="The registered models: `run --model NAME` loads each with the options shown; "
                                   "NAME@vllm, NAME@server or NAME@http://HOST:PORT/v1 pick another backend.")
    p.add_argument("name", nargs="?", metavar="NAME", help="a registered name, optionally NAME@BACKEND")
    p.set_defaults(func=main)


def _gating(entry: ModelEntry) -> str:
    if entry.hub_id is None:
        return f"needs an API key (${entry.api_key_env or 'OPENAI_API_KEY'})"
    return {True: "gated: accept the terms on the hub, then `huggingface-cli login`", False: "not gated",
            None: "gating unknown"}[entry.gated]


def _options(options: dict) -> str:
    return " ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in options.items()) or "-"


def _tested(entry: ModelEntry) -> str:
    if entry.unsupported:
        return "cannot run yet: " + entry.unsupported
    return TESTED.get(entry.architecture, "not tested")


def main(args: argparse.Namespace) -> int:
    if args.name:
        return _show(args.name)
    listed = entries()
    width = max(len(e.name) for e in listed)
    for e in listed:
        print(f"{e.name:<{width}}  {e.size or 'API':>4}  {e.uri()}  {_options(e.options())}")
        print(f"{'':<{width}}        licence: {e.licence}; {_gating(e).split(':')[0]}")
        print(f"{'':<{width}}        tested: {_tested(e)}{'; untested: ' + e.untested if e.untested else ''}")
    print("\n`medtemporal models NAME` shows one entry in full; `medtemporal run BENCH --model NAME --out DIR` "
          "runs it (NAME@vllm, NAME@server, NAME@http://HOST:PORT/v1 for other backends).")
    return 0


def _show(name: str) -> int:
    entry = lookup(name.partition("@")[0])
    resolved = resolve(name) if not entry.unsupported else None
    entry = resolved.entry if resolved is not None and resolved.entry is not None else entry
    print(f"{entry.name}: {entry.hub_id or entry.api_uri} ({entry.size or 'API model'}, architecture "
          f"{entry.architecture})")
    if resolved is not None:
        print(f"  resolves to:   {resolved.uri}  {_options(dict(resolved.options))}")
    for backend in entry.backends() if resolved is not None else ():
        print(f"  {backend + ':':<14} --model {entry.name}@{backend}  ->  {entry.uri(backend)}  "
              f"{_options(entry.options(backend))}")
    if entry.generation:
        print(f"  generation:    {_options(dict(entry.generation))} (beneath the benchmark paper's settings)")
    print(f"  image limit:   {entry.max_images if entry.max_images is not None else 'unknown (no source states one)'}")
    if entry.weights_gb is not None:
        print(f"  GPU memory:    about {entry.weights_gb:g} GB for the bfloat16 weights, more for images and the "
              "KV cache")
    print(f"  licence:       {entry.licence}; {_gating(entry)}")
    print(f"  answer format: {entry.answer_format}: {ANSWER_FORMATS[entry.answer_format]}")
    if entry.adapter:
        print(f"  adapter:       medtemporal.models.adapters.{entry.adapter} (the model's own interface)")
    print(f"  tested:        {_tested(entry)}")
    if entry.untested:
        print(f"  untested:      {entry.untested} (needs the real weights)")
    if entry.notes:
        print(f"  notes:         {entry.notes}")
    print("  sources:       " + "\n                 ".join(entry.sources))
    return 0
