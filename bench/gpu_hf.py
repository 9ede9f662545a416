"""Throughput of ``medtemporal run --model hf:`` against a bare transformers loop, per registry entry (target >= 0.95).

Each registry entry with a native ``hf:`` architecture (no adapter or remote code) of at most ``--max-params``
billion parameters (or each of ``--entries``) is built at real size with random weights, offline: the tests' tiny
model of its architecture (``tests/helpers/tiny_vlms.py``: tokenizer, processor, chat template) with the sizes of
the released ``config.json`` that ``gpu_hf_sizes.json`` names, through transformers' own config classes, and
``min_new_tokens = max_new_tokens``. The first ``--requests`` five-image MI-CXR phantom items and one
longitudinal-rrg item (prior study and report) go through ``medtemporal run --model hf:MODEL`` and through a bare
loop (chat template, processor, ``generate``, decode) at the same batch size, both timed with model loading
(``--entries medvlm-r1,medgemma-4b``; default: every entry <= 8B)::

    PYTHONPATH=src python bench/gpu_hf.py --tiny --entries medvlm-r1,medgemma-4b --requests 4 --batch-size 2  # CPU
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / folder) for folder in ("src", "tests")]

from helpers import tiny_vlms  # noqa: E402  (the tests' tiny builders: tokenizer, processor, chat template)
from medtemporal.backends.hf import load_processor  # noqa: E402
from medtemporal.cli import main as cli  # noqa: E402
from medtemporal.models import entries, lookup  # noqa: E402

REAL = json.loads(Path(__file__).with_name("gpu_hf_sizes.json").read_text())  # "architecture size" → real sizes
TINY = {k.split()[0]: getattr(tiny_vlms, f"build_tiny_{k.split()[0].replace('_', '')}") for k in REAL if k != "_doc"}


def eligible(args: argparse.Namespace) -> list:
    """The entries to measure: native ``hf:`` architectures, named or of at most ``--max-params``."""
    native = [e for e in entries() if e.architecture in TINY and e.adapter is None and not e.unsupported]
    chosen = [lookup(n) for n in args.entries.split(",")] if args.entries else [
        e for e in native if e.params_b is not None and e.params_b <= args.max_params]
    if stray := [e.name for e in chosen if e not in native or not (args.tiny or f"{e.architecture} {e.size}" in REAL)]:
        raise SystemExit(f"{', '.join(stray)}: no native architecture with sizes in gpu_hf_sizes.json; pass --tiny.")
    return chosen


def merge(into: dict, keys: dict) -> dict:
    """``into`` with ``keys`` written over it, nested dictionaries merged."""
    return {**into, **{k: merge(into.get(k) or {}, v) if isinstance(v, dict) else v for k, v in keys.items()}}


def real_size(folder: Path, entry) -> Path:  # noqa: ANN001
    """The real sizes of ``entry`` written over its architecture's tiny config and processor files in ``folder``."""
    files = dict(REAL[f"{entry.architecture} {entry.size}"]["files"])
    if "min_pixels" in (pixels := entry.hf_options.get("processor_kwargs", {})):  # the entry's own resolution
        files["preprocessor_config.json"] = merge(files["preprocessor_config.json"], {"size": {
            "shortest_edge": pixels["min_pixels"], "longest_edge": pixels["max_pixels"]}})
    for name, keys in files.items():
        (folder / name).write_text(json.dumps(merge(json.loads((folder / name).read_text()), keys)))
    return folder


def build_model(folder: Path, entry, args: argparse.Namespace) -> Path:  # noqa: ANN001
    """``entry``'s architecture in ``folder``, real-size unless ``--tiny``, with ``min_new_tokens = max_new_tokens``."""
    import torch
    import transformers

    TINY[entry.architecture](folder)
    if not args.tiny:
        real_size(folder, entry)
    generation = transformers.GenerationConfig.from_pretrained(folder)
    generation.min_new_tokens = generation.max_new_tokens = args.new_tokens
    torch.manual_seed(0)
    with torch.device(args.device):  # random weights, built where they run
        model = transformers.AutoModelForImageTextToText.from_config(
            transformers.AutoConfig.from_pretrained(folder), dtype=getattr(torch, args.dtype))
    model.generation_config = generation
    model.save_pretrained(folder, max_shard_size="1000GB")  # one file, over the tiny model's
    return folder


def build_benchmarks(work: Path, args: argparse.Namespace) -> dict[str, tuple[Path, int]]:
    """MI-CXR and longitudinal-rrg built from one phantom CXR cohort, with how many items each run answers."""
    data, size = work / "cxr", ["--image-size", str(args.image_size)]
    for command in (["phantoms", "cxr", "--patients", str(args.patients), "--seed", "0", *size, "--out", str(data)],
                    ["build", "mi-cxr", "--mimic-cxr-jpg", str(data / "mimic-cxr-jpg"), "--qba",
                     str(data / "mimic-ext-cxr-qba"), "--out", str(work / "mi-cxr")],
                    ["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(data / "mimic-cxr-jpg"), "--out",
                     str(work / "longitudinal-rrg")]):
        if cli(command) != 0:
            raise SystemExit(f"medtemporal {' '.join(command)} failed (see above).")
    return {"mi-cxr": (work / "mi-cxr", args.requests), "longitudinal-rrg": (work / "longitudinal-rrg", 1)}


def through_medtemporal(bench: Path, model: Path, out: Path, limit: int, args: argparse.Namespace) -> tuple:
    """Seconds for ``medtemporal run`` of ``limit`` items, and the ids of the items it answered."""
    start = time.perf_counter()
    if cli(["run", str(bench), "--model", f"hf:{model}", "--out", str(out), "--limit", str(limit), "--no-cache",
             "--max-tokens", str(args.new_tokens), "--no-score", "--no-progress", "--option", f"dtype={args.dtype}",
             "--option", f"batch_size={args.batch_size}", "--option", f"device={args.device}"]) != 0:
        raise SystemExit(f"medtemporal run failed; see {out}")
    answered = (out / "predictions.jsonl").read_text().splitlines()
    return time.perf_counter() - start, [json.loads(line)["item_id"] for line in answered]


def chats(bench: Path, ids: list[str]) -> list[tuple[list[dict], list[Path]]]:
    """The messages (chat-template form) and image paths the benchmark's default protocol sends for ``ids``."""
    from medtemporal.backends.base import GenerateConfig, ImagePart, Response
    from medtemporal.benchmark import load
    from medtemporal.contract import spec
    from medtemporal.registry import lookup
    benchmark, sent = load(bench), []
    by_id = {item.id: item for item in benchmark.items}

    async def capture(request):  # noqa: ANN001, ANN202
        sent.append(request)
        return Response("")
    for item in (by_id[i] for i in ids):
        solver = lookup("protocol", spec(item.benchmark).defaults.protocol).obj()
        asyncio.run(solver.solve(item, benchmark.image_root, capture, GenerateConfig()))
    part = lambda p: {"type": "image"} if isinstance(p, ImagePart) else {"type": "text", "text": p.text}  # noqa: E731
    return [([{"role": m.role, "content": [part(p) for p in m.parts]} for m in r.messages],
             [p.path for m in r.messages for p in m.parts if isinstance(p, ImagePart)]) for r in sent]


def bare_loop(bench: Path, model_dir: Path, ids: list[str], args: argparse.Namespace) -> float:
    """Seconds for the same requests through a bare loop of the same batch size, model loading included."""
    import torch
    import transformers
    from PIL import Image

    start = time.perf_counter()
    processor = load_processor(transformers, str(model_dir))
    model = transformers.AutoModelForImageTextToText.from_pretrained(
        model_dir, dtype=getattr(torch, args.dtype)).to(args.device).eval()
    requests = chats(bench, ids)
    for k in range(0, len(requests), args.batch_size):
        batch = requests[k:k + args.batch_size]
        texts = [processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False) for chat, _ in batch]
        images = [[Image.open(p).convert("RGB") for p in paths] for _, paths in batch]
        inputs = processor(text=texts, images=images, padding=True, padding_side="left", return_tensors="pt")
        inputs = {key: v.to(args.device, model.dtype if v.is_floating_point() else None) for key, v in inputs.items()}
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                                 do_sample=False, temperature=None, top_p=None, top_k=None)
        processor.batch_decode(out[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)  # waits for the device
    return time.perf_counter() - start


def measure(entry, benches: dict[str, tuple[Path, int]], work: Path, args: argparse.Namespace) -> dict:  # noqa: ANN001
    """One entry's row: items/s through ``medtemporal run`` and the bare loop, and their ratio."""
    model = build_model(work / entry.name, entry, args)
    through_medtemporal(benches["mi-cxr"][0], model, work / f"{entry.name}-warm-up", args.batch_size, args)
    ours = bare = items = 0
    for family, (bench, limit) in benches.items():
        seconds, ids = through_medtemporal(bench, model, work / f"{entry.name}-{family}", limit, args)
        ours, bare, items = ours + seconds, bare + bare_loop(bench, model, ids, args), items + len(ids)
    if not args.work:
        shutil.rmtree(model)  # a real-size model takes up to 16 GB of disk
    return {"entry": entry.name, "architecture": entry.architecture, "size": "tiny" if args.tiny else entry.size,
            "config": "tests" if args.tiny else REAL[f"{entry.architecture} {entry.size}"]["from"], "items": items,
            "medtemporal/s": items / ours, "bare/s": items / bare, "ratio": bare / ours}


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--entries", help="registry names, comma-separated (default: every native entry <= --max-params)")
    p.add_argument("--max-params", type=float, default=8.0, help="billions of parameters (default 8)")
    p.add_argument("--tiny", action="store_true", help="the tests' tiny configs (CPU, seconds), not the real sizes")
    p.add_argument("--requests", type=int, default=500, help="MI-CXR items (plus one longitudinal-rrg item)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--new-tokens", type=int, default=32, help="max_new_tokens = min_new_tokens")
    p.add_argument("--dtype", default=None, help="default: bfloat16 on CUDA, float32 on CPU")
    p.add_argument("--device", default=None, help="default: cuda when available")
    p.add_argument("--patients", type=int, default=24, help="phantom patients (24 give about 700 MI-CXR items)")
    p.add_argument("--image-size", type=int, default=512)
    p.add_argument("--work", type=Path, default=None, help="scratch folder, kept (default: a temporary one)")
    args = p.parse_args(argv)
    import torch

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    args.dtype = args.dtype or ("bfloat16" if args.device.startswith("cuda") else "float32")
    chosen = eligible(args)
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        benches = build_benchmarks(work, args)
        rows = [measure(entry, benches, work, args) for entry in chosen]
    device = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "CPU"
    print(f"\n{device}, {args.dtype}, batch {args.batch_size}, {args.new_tokens} new tokens; five-image MI-CXR items + "
          "one longitudinal-rrg item; items/s with model loading (target ratio >= 0.95); config: sizes from")
    print(f"{'entry':<20} {'arch':<11} {'size':<5} {'config':<35} items medtemporal/s    bare/s ratio")
    for r in rows:
        print(f"{r['entry']:<20} {r['architecture']:<11} {r['size']:<5} {r['config']:<35} {r['items']:>5} "
              f"{r['medtemporal/s']:>13.2f} {r['bare/s']:>9.2f} {r['ratio']:.3f}")
    return rows


if __name__ == "__main__":
    main()
