"""``medtemporal list``: what is registered (benchmarks, backends, protocols, metrics, prompts)."""

from __future__ import annotations

import argparse

from medtemporal import prompts, registry


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list",
                       help="list the benchmarks, backends, protocols, metrics, extractors, phantoms and prompts")
    p.add_argument("kind", nargs="?", choices=(*registry.KINDS, "prompt"), help="only this kind")
    p.set_defaults(func=run)


def _describe(entry: registry.Entry) -> str:
    obj = entry.obj
    text = entry.info.get("description") or getattr(obj, "description", None) or (obj.__doc__ or "")
    return str(text).strip().splitlines()[0] if text else ""


def _needs(entry: registry.Entry) -> str:
    """What a report metric needs to run (weights with hub id and size, CPU/GPU), and how to ask for it (its
    registration's ``request``, else ``score --metrics NAME``)."""
    from medtemporal.scoring.clinical.weights import WEIGHTS

    text = str(entry.info["needs"])
    weights = [WEIGHTS[k] for k in entry.info.get("weights", ())]
    if weights:
        text += "; weights: " + ", ".join(f"{w.hub_id} ({w.size}, or ${w.env})" for w in weights)
    if entry.info.get("on_request"):
        text += f"; on request: {entry.info.get('request') or f'score --metrics {entry.name}'}"
    return text


def run(args: argparse.Namespace) -> int:
    kinds = [args.kind] if args.kind else [*registry.KINDS, "prompt"]
    for kind in kinds:
        print(f"{kind}s:")
        if kind == "prompt":
            for name, source in sorted(prompts.templates().items()):
                print(f"  {name:<36} {source.owner}")
            continue
        for entry in registry.entries(kind):
            print(f"  {entry.name:<28} {_describe(entry)}")
            if kind == "metric" and entry.info.get("needs"):
                print(f"  {'':<28} needs: {_needs(entry)}")
    for name, reason in registry.failed_plugins().items():
        print(f"plugin {name!r} failed to load: {reason}")
    return 0
