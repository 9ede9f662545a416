"""A tiny remote-code volume model (M3D-LaMed's calling convention), written to a folder from source, no download.

``model.generate(images=<1 × 1 × D × H × W>, inputs=<ids>, ...)`` as M3D-LaMed's remote code
(``BAAI-DCAI/M3D`` ``LaMed/src/model/language_model/lamed_phi3.py``): it returns only the new
tokens. Its answer spells what it received, ``"<placeholders>x<D>x<H>x<W>x<mean of the volume × 10000>"``,
so a test can prove the volume and the prompt's placeholders arrived.
"""

from __future__ import annotations

from pathlib import Path

from helpers.tiny_vlms import _tokenizer

MODELING = '''
import torch
from transformers import PretrainedConfig, PreTrainedModel


class TinyVolConfig(PretrainedConfig):
    model_type = "tinyvol"

    def __init__(self, vocab_size=8, patch_token_id=0, char_ids=None, **kwargs):
        self.vocab_size = vocab_size
        self.patch_token_id = patch_token_id
        self.char_ids = char_ids or {}
        super().__init__(**kwargs)


class TinyVolForCausalLM(PreTrainedModel):
    config_class = TinyVolConfig
    _no_split_modules = []

    def __init__(self, config):
        super().__init__(config)
        self.embed = torch.nn.Embedding(config.vocab_size, 4)
        self.post_init()

    def generate(self, images=None, inputs=None, attention_mask=None, max_new_tokens=20, **kwargs):
        if images is None or images.dim() != 5 or images.shape[:2] != (1, 1):
            raise ValueError("images must be 1 x 1 x D x H x W")
        if images.dtype != self.embed.weight.dtype:
            raise ValueError("images must have the model's dtype")
        patches = int((inputs == self.config.patch_token_id).sum())
        depth, height, width = images.shape[2:]
        text = f"{patches}x{depth}x{height}x{width}x{round(float(images.float().mean()) * 10000)}"
        ids = [self.config.char_ids[c] for c in text][:max_new_tokens]
        ids += [self.config.eos_token_id] * (len(ids) < max_new_tokens)
        return torch.tensor([ids], dtype=torch.long, device=inputs.device)
'''


def build_tiny_volume_lm(folder: Path) -> Path:
    """Write the model's code, config, weights and tokenizer into ``folder``; load it with ``trust_remote_code``."""
    import importlib.util

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "modeling_tinyvol.py").write_text(MODELING)
    tokenizer = _tokenizer(["<|endoftext|>", "<im_patch>"], eos="<|endoftext|>", bos="<|endoftext|>",
                           pad="<|endoftext|>")
    tokenizer.save_pretrained(folder)
    spec = importlib.util.spec_from_file_location("modeling_tinyvol_build", folder / "modeling_tinyvol.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    chars = {c: tokenizer.convert_tokens_to_ids(c) for c in "0123456789x"}
    config = module.TinyVolConfig(vocab_size=len(tokenizer), patch_token_id=tokenizer.convert_tokens_to_ids("<im_patch>"),
                                  char_ids=chars, eos_token_id=tokenizer.eos_token_id,
                                  pad_token_id=tokenizer.pad_token_id)
    config.auto_map = {"AutoConfig": "modeling_tinyvol.TinyVolConfig",
                       "AutoModelForCausalLM": "modeling_tinyvol.TinyVolForCausalLM"}
    module.TinyVolForCausalLM(config).save_pretrained(folder)
    return folder
