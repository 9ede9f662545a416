"""Throughput of ``medtemporal run --model hf:`` against a bare transformers ``generate`` loop (target ratio >= 0.95).

A real-size Qwen2-VL-2B is built from its config with random weights (no download: throughput does not
depend on the weights), with ``min_new_tokens = max_new_tokens`` in its generation config so every
answer has the same length. The same five-image MI-CXR phantom requests (the first ``--requests`` items
a run answers) go (1) through ``medtemporal run BENCH --model hf:MODEL`` (direct protocol, micro-batched
``generate`` calls of ``--batch-size``) and (2) through a plain loop: chat template, processor,
``model.generate`` on batches of the same size, decode. Both are timed as a user runs them, loading the
model and reading and decoding the images included (the weights were just written, so both read them from
the page cache), after a short warm-up run that initialises the device. Prints items/s for both and their ratio.

On a GPU machine, from a plain checkout whose Python has torch and transformers (the other packages of
``pyproject.toml``'s core dependencies installed from wheels if missing)::

    PYTHONPATH=src python bench/gpu_hf.py                      # Qwen2-VL-2B, 500 requests, batch 8, bf16
    PYTHONPATH=src python bench/gpu_hf.py --size toy --requests 4 --batch-size 2 --device cpu   # seconds, CPU

``tests/test_bench_gpu_hf.py`` runs the toy size on CPU so that this script cannot rot.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
            "<|video_pad|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Qwen2-VL's chat template for text and image parts."""

SIZES = {
    # Qwen/Qwen2-VL-2B-Instruct config.json
    "2b": dict(text={"vocab_size": 151936, "hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28,
                     "num_attention_heads": 12, "num_key_value_heads": 2, "max_position_embeddings": 32768,
                     "rms_norm_eps": 1e-6, "tie_word_embeddings": True,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [16, 24, 24]}},
               vision={"depth": 32, "embed_dim": 1280, "hidden_size": 1536, "num_heads": 16, "mlp_ratio": 4,
                       "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2},
               pixels=(56 * 56, 28 * 28 * 1280)),
    "toy": dict(text={"vocab_size": 512, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                      "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 4096,
                      "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}},
                vision={"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2,
                        "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2},
                pixels=(28 * 28, 56 * 56)),
}
"""Model sizes: the text and vision configs and the processor's (min_pixels, max_pixels)."""


def build_model(folder: Path, size: str, dtype: str, new_tokens: int) -> Path:
    """Write a random-weight Qwen2-VL of ``size`` with its processor (image processor, tokenizer) to ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2VLConfig, Qwen2VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    spec = SIZES[size]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = ["The images above are chest X-rays of the same patient. Answer with the letter of the option."] * 4
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|im_start|>", eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    min_pixels, max_pixels = spec["pixels"]
    Qwen2VLImageProcessorPil(min_pixels=min_pixels, max_pixels=max_pixels).save_pretrained(folder)
    config_file = folder / "preprocessor_config.json"
    config_file.write_text(json.dumps({**json.loads(config_file.read_text()), "processor_class": "Qwen2VLProcessor"}))
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in SPECIALS}
    text = {**spec["text"], "vocab_size": max(spec["text"]["vocab_size"], len(tokenizer)),
            "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"]}
    config = Qwen2VLConfig(text_config=text, vision_config=spec["vision"], image_token_id=ids["<|image_pad|>"],
                           video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                           vision_end_token_id=ids["<|vision_end|>"], pad_token_id=ids["<|endoftext|>"])
    torch.manual_seed(0)
    with torch.device("cpu"):
        model = Qwen2VLForConditionalGeneration(config).to(getattr(torch, dtype))
    gen = model.generation_config
    gen.eos_token_id, gen.pad_token_id = ids["<|im_end|>"], ids["<|endoftext|>"]
    gen.min_new_tokens = gen.max_new_tokens = new_tokens  # every answer the same length, in both paths
    model.save_pretrained(folder)
    return folder


def build_benchmark(work: Path, patients: int, image_size: int) -> Path:
    """MI-CXR phantoms and a benchmark of five-visit items built from them."""
    from medtemporal.cli import main

    data, bench = work / "cxr", work / "mi-cxr"
    assert main(["phantoms", "cxr", "--patients", str(patients), "--seed", "0", "--image-size", str(image_size),
                 "--out", str(data)]) == 0
    assert main(["build", "mi-cxr", "--mimic-cxr-jpg", str(data / "mimic-cxr-jpg"), "--qba",
                 str(data / "mimic-ext-cxr-qba"), "--out", str(bench)]) == 0
    return bench


def through_medtemporal(bench: Path, model: Path, out: Path, args: argparse.Namespace) -> tuple[float, list[str]]:
    """Seconds for ``medtemporal run`` of ``--requests`` items, and the ids of the items it answered."""
    from medtemporal.cli import main

    command = ["run", str(bench), "--model", f"hf:{model}", "--out", str(out), "--limit", str(args.requests),
               "--max-tokens", str(args.new_tokens), "--no-cache", "--no-score", "--no-progress",
               "--option", f"batch_size={args.batch_size}", "--option", f"dtype={args.dtype}",
               *(["--option", f"device={args.device}"] if args.device else [])]
    start = time.perf_counter()
    if main(command) != 0:
        raise SystemExit(f"medtemporal run failed; see {out}")
    seconds = time.perf_counter() - start
    ids = [json.loads(line)["item_id"] for line in (out / "predictions.jsonl").read_text().splitlines()]
    return seconds, ids


def bare_loop(bench: Path, model_dir: Path, ids: list[str], args: argparse.Namespace) -> float:
    """Seconds for the same requests through the processor and ``model.generate`` alone, in batches, model
    loading included (as in ``medtemporal run``)."""
    import torch
    import transformers
    from PIL import Image

    from medtemporal.backends.hf import load_processor
    from medtemporal.benchmark import load
    from medtemporal.prompts import PromptSet
    from medtemporal.protocols.direct import question_prompt

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    start = time.perf_counter()
    processor = load_processor(transformers, str(model_dir))
    processor.tokenizer.padding_side = "left"
    model = transformers.AutoModelForImageTextToText.from_pretrained(
        model_dir, dtype=getattr(torch, args.dtype)).to(device).eval()
    benchmark = load(bench)
    by_id = {item.id: item for item in benchmark.items}
    prompts = PromptSet()
    chats = []
    for item in (by_id[i] for i in ids):
        content = []
        for ref in item.images:
            content += [{"type": "text", "text": f"{ref.label}:"}, {"type": "image"}]
        content.append({"type": "text", "text": question_prompt(item, prompts)[1]})
        chats.append((processor.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True,
                                                    tokenize=False), [benchmark.image_root / r.path for r in item.images]))
    for k in range(0, len(chats), args.batch_size):
        batch = chats[k:k + args.batch_size]
        images = [[Image.open(p).convert("RGB") for p in paths] for _, paths in batch]
        inputs = processor(text=[t for t, _ in batch], images=images, padding=True, return_tensors="pt").to(device)
        inputs["pixel_values"] = inputs["pixel_values"].to(model.dtype)
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                                 do_sample=False, temperature=None, top_p=None, top_k=None)
        processor.batch_decode(out[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict[str, float]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=sorted(SIZES), default="2b")
    p.add_argument("--requests", type=int, default=500)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--new-tokens", type=int, default=32, help="max_new_tokens = min_new_tokens")
    p.add_argument("--dtype", default=None, help="default: bfloat16 on CUDA, float32 on CPU")
    p.add_argument("--device", default=None, help="default: cuda when available")
    p.add_argument("--patients", type=int, default=24, help="phantom patients (24 give about 700 items)")
    p.add_argument("--image-size", type=int, default=512)
    p.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    args = p.parse_args(argv)
    import torch

    cuda = (args.device or ("cuda" if torch.cuda.is_available() else "cpu")).startswith("cuda")
    args.dtype = args.dtype or ("bfloat16" if cuda else "float32")
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        model = build_model(work / f"qwen2-vl-{args.size}", args.size, args.dtype, args.new_tokens)
        bench = build_benchmark(work, args.patients, args.image_size)
        through_medtemporal(bench, model, work / "warm-up", argparse.Namespace(**{**vars(args),
                                                                                  "requests": args.batch_size}))
        ours, ids = through_medtemporal(bench, model, work / "run", args)
        if len(ids) < args.requests:
            print(f"note: the benchmark has {len(ids)} items, fewer than --requests {args.requests}", file=sys.stderr)
        bare = bare_loop(bench, model, ids, args)
    rates = {"medtemporal_items_per_s": len(ids) / ours, "bare_items_per_s": len(ids) / bare}
    rates["ratio"] = rates["medtemporal_items_per_s"] / rates["bare_items_per_s"]
    device = torch.cuda.get_device_name(0) if cuda else "CPU"
    print(f"Qwen2-VL-{args.size} on {device}, {len(ids)} five-image requests, batch {args.batch_size}, "
          f"{args.new_tokens} new tokens, {args.dtype}")
    print(f"  medtemporal run --model hf:  {rates['medtemporal_items_per_s']:8.2f} items/s  ({ours:.1f} s)")
    print(f"  bare transformers generate: {rates['bare_items_per_s']:8.2f} items/s  ({bare:.1f} s)")
    print(f"  ratio {rates['ratio']:.3f} (target >= 0.95)")
    return rates


if __name__ == "__main__":
    main()
