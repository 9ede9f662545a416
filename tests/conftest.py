"""Suite-wide settings: verification stamps of phantom folders go to a temporary folder, not the user's cache."""

import os
import tempfile


def pytest_configure(config) -> None:  # noqa: ARG001 (pytest hook signature)
    os.environ.setdefault("MEDTEMPORAL_PHANTOM_STAMPS", tempfile.mkdtemp(prefix="medtemporal-phantom-stamps-"))
