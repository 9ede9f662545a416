"""The published weights each model-based report metric loads, fetched on first use through the HF hub cache.

Each `Weights` names a Hugging Face repo (and a file in it, for checkpoints
published as one ``.pth``/``.tar.gz`` among others), its download size, and the
environment variable that points at a local copy instead (a file or a folder,
used as it is: the tests point these at tiny models built from a config). A
name is resolved the way `medtemporal.hf_models` resolves encoders: from the hub
cache, else downloaded there (never with ``HF_HUB_OFFLINE=1``), else one
sentence (`UnavailableError`) that scoring reports as the metric's reason.

>>> WEIGHTS["chexbert"].hub_id, WEIGHTS["chexbert"].env
('StanfordAIMI/RRG_scorers/chexbert.pth', 'MEDTEMPORAL_CHEXBERT')
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from medtemporal.errors import UnavailableError
from medtemporal.hf_models import MODEL_CONFIG, model_file, model_folder


@dataclass(frozen=True)
class Weights:
    """One published model a metric loads."""

    key: str
    what: str
    """What it is, in messages (``"CheXbert labeller"``)."""
    repo: str
    """Hugging Face repo id."""
    files: tuple[str, ...]
    """The files of ``repo`` that are needed (a checkpoint among others), or () for a whole ``transformers`` model
    folder."""
    size: str
    """Download size as published (for ``medtemporal list`` and the docs)."""
    env: str
    """Environment variable naming a local copy (file or folder) used instead."""

    @property
    def hub_id(self) -> str:
        """``repo`` or ``repo/file``, as the docs table lists it."""
        return f"{self.repo}/{self.files[0]}" if len(self.files) == 1 else self.repo

    def local(self) -> Path:
        """The local file (one file), folder (several: the folder holding them) or model folder: ``$env`` if set,
        else the hub cache (downloaded on first use).

        Raises:
            UnavailableError: the copy named by ``$env`` does not exist, or the hub copy cannot be had now.
        """
        fix = f"set {self.env}=/path/to/a/local/copy"
        named = os.environ.get(self.env)
        if named:
            path = Path(named).expanduser()
            if not path.exists():
                raise UnavailableError(f"{self.env} names {path}, which does not exist; point it at the {self.what} "
                                       f"({self.hub_id}) or unset it.")
            return path
        if not self.files:
            return model_folder(self.repo, what=self.what, fix=fix)
        paths = [model_file(self.repo, name, what=self.what, fix=fix) for name in self.files]
        return paths[0] if len(paths) == 1 else paths[0].parent


def _w(key: str, what: str, repo: str, files: tuple[str, ...], size: str) -> Weights:
    return Weights(key, what, repo, files, size, f"MEDTEMPORAL_{key.upper()}")


WEIGHTS: dict[str, Weights] = {w.key: w for w in (
    _w("chexbert", "CheXbert labeller checkpoint", "StanfordAIMI/RRG_scorers", ("chexbert.pth",), "1.31 GB"),
    _w("chexbert_backbone", "CheXbert backbone configuration and vocabulary (bert-base-uncased)", "bert-base-uncased",
       (MODEL_CONFIG, "vocab.txt"), "0.7 MB"),
    _w("radgraph_xl", "RadGraph-XL model archive", "StanfordAIMI/RRG_scorers", ("radgraph-xl.tar.gz",), "416 MB"),
    _w("radgraph", "RadGraph model archive (RadCliQ-v1's)", "StanfordAIMI/RRG_scorers", ("radgraph.tar.gz",), "432 MB"),
    _w("ratescore_ner", "RaTEScore entity recogniser", "Angelakeke/RaTE-NER-Deberta", (), "≈0.74 GB"),
    _w("ratescore_encoder", "RaTEScore synonym encoder", "FremyCompany/BioLORD-2023-C", (), "≈0.44 GB"),
    _w("bertscore_distilbert", "BERTScore encoder distilbert-base-uncased", "distilbert-base-uncased", (), "0.27 GB"),
    _w("bertscore_distilroberta", "BERTScore encoder distilroberta-base (RadCliQ-v1's)", "distilroberta-base", (),
       "0.33 GB"),
    _w("ctrate_classifier", "CT-RATE 18-label report classifier (RadBERT-CT)", "IAMJB/RadBERT-CT", (), "≈0.50 GB"),
)}
"""Every published model the report metrics load, by key. Sizes marked ≈ are estimated from the architecture
(not read from the hub); the others are the published file sizes (FACTS §6.2)."""
