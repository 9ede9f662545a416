"""Helpers of the MMXU tests: where the released file is, and the parsed options of ``medtemporal build mmxu``."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

OFFICIAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "official" / "mmxu" / "MMXU-test.jsonl"
needs_release = pytest.mark.skipif(not OFFICIAL.is_file(), reason="the released MMXU file is not in ../shared")


def build_args(official: Path, root: Path | None, *, verify: bool = True, audit: bool = True) -> argparse.Namespace:
    """The parsed options of ``medtemporal build mmxu``."""
    return argparse.Namespace(official=official, mimic_cxr_jpg=root, verify_images=verify, no_audit=not audit, seed=0)
