"""Tiny random-weight vision-language models built here from a config (no download), in two architectures.

Idefics3 (SmolVLM), Gemma 3 (MedGemma) and Qwen2-VL / Qwen2.5-VL handle several images differently
(fixed image-token blocks vs. a grid of merged patches per image, with its own ``image_grid_thw``),
so the transformers backend is tested on each. The Qwen processors are written as the released
checkpoints lay them out, without a video processor (it needs torchvision, which is not installed here).
"""

from __future__ import annotations

from pathlib import Path

CORPUS = ["User: Which interval? Answer with the letter A B C D E. Assistant: The answer is C."] * 3


def _tokenizer(specials: list[str], eos: str, bos: str, pad: str, **named: str):  # noqa: ANN202
    """A byte-level BPE tokenizer trained on a few sentences, with ``specials`` as special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    extra = {"extra_special_tokens": named} if named else {}
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=bos, eos_token=eos, pad_token=pad, **extra)


IDEFICS3_SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>", "<image>", "<global-img>"
]
IDEFICS3_TEMPLATE = (
    "<|im_start|>{% for m in messages %}{{ m['role'] | capitalize }}:"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>{% elif c['type'] == 'text' %} {{ c['text'] }}"
    "{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)


def build_tiny_idefics3(folder: Path) -> Path:
    """A random-weight Idefics3 (SmolVLM architecture): four image tokens per image."""
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor
    from transformers.models.idefics3.image_processing_pil_idefics3 import Idefics3ImageProcessorPil

    grid = [f"<row_{i}_col_{j}>" for i in range(1, 7) for j in range(1, 7)]
    tokenizer = _tokenizer(IDEFICS3_SPECIALS + grid, eos="<end_of_utterance>", bos="<|im_start|>",
                           pad="<|endoftext|>")
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in IDEFICS3_SPECIALS}
    image_processor = Idefics3ImageProcessorPil(
        size={"longest_edge": 64}, max_image_size={"longest_edge": 32}, do_image_splitting=False
    )
    Idefics3Processor(image_processor=image_processor, tokenizer=tokenizer, image_seq_len=4,
                      chat_template=IDEFICS3_TEMPLATE).save_pretrained(folder)
    text = {"model_type": "llama", "vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 4096,
            "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<end_of_utterance>"],
            "pad_token_id": ids["<|endoftext|>"]}
    vision = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
              "image_size": 32, "patch_size": 8}
    config = Idefics3Config(text_config=text, vision_config=vision, scale_factor=2, image_token_id=ids["<image>"],
                            pad_token_id=ids["<|endoftext|>"])
    return _save_model(folder, Idefics3ForConditionalGeneration, config, ids["<end_of_utterance>"],
                       ids["<|endoftext|>"])


def _save_without_video_processor(folder: Path, image_processor, tokenizer, template: str,  # noqa: ANN001
                                  processor_class: str, **settings) -> None:  # noqa: ANN003
    """A processor laid out as the released checkpoints lay it out (image processor, tokenizer, chat template,
    ``processor_class`` and its settings), written without building it: its video processor needs torchvision."""
    import json

    folder = Path(folder)
    image_processor.save_pretrained(folder)
    tokenizer.chat_template = template
    tokenizer.save_pretrained(folder)
    config = folder / "preprocessor_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "processor_class": processor_class}, indent=2))
    (folder / "processor_config.json").write_text(json.dumps({"processor_class": processor_class, **settings}))


QWEN2VL_SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
    "<|video_pad|>",
]
QWEN2VL_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Qwen2-VL's own chat template, reduced to what the tests send (text and image parts)."""


def _qwen_text_config(tokenizer, ids: dict[str, int], **extra) -> dict:  # noqa: ANN001
    return {"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
            "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 2048,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
            "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"], **extra}


def _qwen_tokens(config_class, text: dict, vision: dict, ids: dict[str, int]):  # noqa: ANN001, ANN202
    return config_class(text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
                        video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                        vision_end_token_id=ids["<|vision_end|>"], pad_token_id=ids["<|endoftext|>"])


def _save_model(folder: Path, model_class, config, eos: int, pad: int) -> Path:  # noqa: ANN001
    """A ``model_class`` of ``config`` with seeded random weights, saved with its end and padding tokens."""
    import torch

    torch.manual_seed(0)
    model = model_class(config)
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = pad
    model.save_pretrained(folder)
    return Path(folder)


def build_tiny_qwen2vl(folder: Path) -> Path:
    """A random-weight Qwen2-VL: each image a grid of 14-pixel patches merged 2 × 2 (``min_pixels`` and
    ``max_pixels`` bound how many)."""
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    folder = Path(folder)
    tokenizer = _tokenizer(QWEN2VL_SPECIALS, eos="<|im_end|>", bos="<|im_start|>", pad="<|endoftext|>")
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in QWEN2VL_SPECIALS}
    image_processor = Qwen2VLImageProcessorPil(min_pixels=28 * 28, max_pixels=56 * 56)
    _save_without_video_processor(folder, image_processor, tokenizer, QWEN2VL_TEMPLATE, "Qwen2VLProcessor")
    vision = {"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2, "patch_size": 14,
              "spatial_merge_size": 2, "temporal_patch_size": 2}
    config = _qwen_tokens(Qwen2VLConfig, _qwen_text_config(tokenizer, ids), vision, ids)
    return _save_model(folder, Qwen2VLForConditionalGeneration, config, ids["<|im_end|>"], ids["<|endoftext|>"])


def build_tiny_qwen25vl(folder: Path) -> Path:
    """A random-weight Qwen2.5-VL (windowed vision attention, RMSNorm, a merger to the text width)."""
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    folder = Path(folder)
    tokenizer = _tokenizer(QWEN2VL_SPECIALS, eos="<|im_end|>", bos="<|im_start|>", pad="<|endoftext|>")
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in QWEN2VL_SPECIALS}
    image_processor = Qwen2VLImageProcessorPil(min_pixels=28 * 28, max_pixels=56 * 56)
    _save_without_video_processor(folder, image_processor, tokenizer, QWEN2VL_TEMPLATE, "Qwen2_5_VLProcessor")
    vision = {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "patch_size": 14,
              "spatial_merge_size": 2, "temporal_patch_size": 2, "window_size": 56, "out_hidden_size": 32,
              "fullatt_block_indexes": [1]}
    config = _qwen_tokens(Qwen2_5_VLConfig, _qwen_text_config(tokenizer, ids), vision, ids)
    return _save_model(folder, Qwen2_5_VLForConditionalGeneration, config, ids["<|im_end|>"], ids["<|endoftext|>"])


GEMMA3_SPECIALS = ["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>",
                   "<end_of_image>", "<image_soft_token>"]
GEMMA3_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<start_of_image>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
"""Gemma 3's chat template (MedGemma's), reduced to what the tests send (text and image parts)."""


def build_tiny_gemma3(folder: Path) -> Path:
    """A random-weight Gemma 3 (MedGemma's architecture): SigLIP patches pooled to four soft tokens per image."""
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3Processor
    from transformers.models.gemma3.image_processing_pil_gemma3 import Gemma3ImageProcessorPil

    tokenizer = _tokenizer(GEMMA3_SPECIALS, eos="<end_of_turn>", bos="<bos>", pad="<pad>",
                           boi_token="<start_of_image>", eoi_token="<end_of_image>", image_token="<image_soft_token>")
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in GEMMA3_SPECIALS}
    image_processor = Gemma3ImageProcessorPil(size={"height": 32, "width": 32})
    Gemma3Processor(image_processor=image_processor, tokenizer=tokenizer, image_seq_length=4,
                    chat_template=GEMMA3_TEMPLATE).save_pretrained(folder)
    text = {"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "max_position_embeddings": 2048,
            "sliding_window": 64, "bos_token_id": ids["<bos>"], "eos_token_id": ids["<end_of_turn>"],
            "pad_token_id": ids["<pad>"]}
    vision = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
              "image_size": 32, "patch_size": 8}
    config = Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=4,
                          boi_token_index=ids["<start_of_image>"], eoi_token_index=ids["<end_of_image>"],
                          image_token_index=ids["<image_soft_token>"], pad_token_id=ids["<pad>"])
    return _save_model(folder, Gemma3ForConditionalGeneration, config, ids["<end_of_turn>"], ids["<pad>"])


LLAVA_SPECIALS = ["<unk>", "<s>", "</s>", "<image>", "<pad>"]
LLAVA_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'system' %}{% for c in m['content'] %}{{ c['text'] }}{% endfor %} "
    "{% else %}{{ 'USER: ' if m['role'] == 'user' else 'ASSISTANT: ' }}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>\n{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{{ ' ' if m['role'] == 'user' else '</s>' }}{% endif %}{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
"""LLaVA-1.5's chat template (llava-hf), reduced to what the tests send; LLaVA-Med v1.5 uses the same layout."""


def build_tiny_llava(folder: Path) -> Path:
    """A random-weight LLaVA (LLaVA-Med v1.5's architecture): a CLIP vision tower, sixteen patch tokens per image."""
    from transformers import LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    tokenizer = _tokenizer(LLAVA_SPECIALS, eos="</s>", bos="<s>", pad="<pad>", image_token="<image>")
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in LLAVA_SPECIALS}
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=8,
                   vision_feature_select_strategy="default", num_additional_image_tokens=1,
                   chat_template=LLAVA_TEMPLATE).save_pretrained(folder)
    text = {"model_type": "llama", "vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
            "max_position_embeddings": 4096, "bos_token_id": ids["<s>"], "eos_token_id": ids["</s>"],
            "pad_token_id": ids["<pad>"]}
    vision = {"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 2, "image_size": 32, "patch_size": 8, "projection_dim": 32}
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_index=ids["<image>"],
                         vision_feature_layer=-1, vision_feature_select_strategy="default",
                         pad_token_id=ids["<pad>"])
    return _save_model(folder, LlavaForConditionalGeneration, config, ids["</s>"], ids["<pad>"])


INTERNVL_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<img>", "</img>", "<IMG_CONTEXT>", "<video>"]
INTERNVL_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<IMG_CONTEXT>\n"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""InternVL3's chat template (OpenGVLab/InternVL3-*-hf), reduced to what the tests send."""


def build_tiny_internvl(folder: Path) -> Path:
    """A random-weight InternVL (InternVL3's architecture): InternViT patches, pixel-shuffled to four tokens per
    448-pixel tile (here one 32-pixel tile per image)."""
    from transformers import InternVLConfig, InternVLForConditionalGeneration
    from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil

    tokenizer = _tokenizer(INTERNVL_SPECIALS, eos="<|im_end|>", bos="<|im_start|>", pad="<|endoftext|>",
                           start_image_token="<img>", end_image_token="</img>", context_image_token="<IMG_CONTEXT>",
                           video_token="<video>")
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in INTERNVL_SPECIALS}
    image_processor = GotOcr2ImageProcessorPil(size={"height": 32, "width": 32}, crop_to_patches=False)
    _save_without_video_processor(folder, image_processor, tokenizer, INTERNVL_TEMPLATE, "InternVLProcessor",
                                  image_seq_length=4)
    text = {"model_type": "qwen2", "vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
            "max_position_embeddings": 4096, "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"]}
    vision = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
              "image_size": [32, 32], "patch_size": [8, 8]}
    config = InternVLConfig(vision_config=vision, text_config=text, image_token_id=ids["<IMG_CONTEXT>"],
                            downsample_ratio=0.5, projector_hidden_act="gelu", vision_feature_layer=-1,
                            vision_feature_select_strategy="default")
    return _save_model(folder, InternVLForConditionalGeneration, config, ids["<|im_end|>"], ids["<|endoftext|>"])


def build_tiny_qwen3vl(folder: Path) -> Path:
    """A random-weight Qwen3-VL: 16-pixel patches merged 2 × 2, deep-stack features from a vision layer into the
    text model, interleaved M-RoPE."""
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    folder = Path(folder)
    tokenizer = _tokenizer(QWEN2VL_SPECIALS, eos="<|im_end|>", bos="<|im_start|>", pad="<|endoftext|>")
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in QWEN2VL_SPECIALS}
    image_processor = Qwen2VLImageProcessorPil(patch_size=16, min_pixels=32 * 32, max_pixels=64 * 64)
    _save_without_video_processor(folder, image_processor, tokenizer, QWEN2VL_TEMPLATE, "Qwen3VLProcessor")
    text = {**_qwen_text_config(tokenizer, ids), "head_dim": 16,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
                                "mrope_interleaved": True}}
    vision = {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "patch_size": 16,
              "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 32, "num_position_embeddings": 16,
              "deepstack_visual_indexes": [0]}
    config = _qwen_tokens(Qwen3VLConfig, text, vision, ids)
    return _save_model(folder, Qwen3VLForConditionalGeneration, config, ids["<|im_end|>"], ids["<|endoftext|>"])
