"""Suite-wide settings: verification stamps of phantom folders go to a temporary folder, not the user's cache, and
nothing is downloaded: Hugging Face downloads are switched off (``HF_HUB_OFFLINE=1``, which also stops
``nltk.download``) and the hub cache is an empty temporary ``HF_HOME``, so encoders come only from the folders a
test names (tiny models built from a config, the packaged MiniLM). Whatever a test registers (a toy family, a
scripted backend) is gone after it (`medtemporal.registry.isolated`), so no toy family reaches another test."""

import os
import tempfile

import pytest

from medtemporal.registry import isolated


def pytest_configure(config) -> None:  # noqa: ARG001 (pytest hook signature)
    os.environ.setdefault("MEDTEMPORAL_PHANTOM_STAMPS", tempfile.mkdtemp(prefix="medtemporal-phantom-stamps-"))
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="medtemporal-hf-home-")


@pytest.fixture(autouse=True)
def _registry_restored_after_each_test():
    """Entries a test registers are removed when it ends (those medtemporal's modules register on first import
    stay: a module runs once)."""
    with isolated():
        yield
