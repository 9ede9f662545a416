"""Suite-wide settings: verification stamps of phantom folders go to a temporary folder, not the user's cache, and
nothing is downloaded: Hugging Face downloads are switched off (``HF_HUB_OFFLINE=1``, which also stops
``nltk.download``) and the hub cache is an empty temporary ``HF_HOME``, so encoders come only from the folders a
test names (tiny models built from a config, the packaged MiniLM)."""

import os
import tempfile


def pytest_configure(config) -> None:  # noqa: ARG001 (pytest hook signature)
    os.environ.setdefault("MEDTEMPORAL_PHANTOM_STAMPS", tempfile.mkdtemp(prefix="medtemporal-phantom-stamps-"))
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="medtemporal-hf-home-")
