"""3D-RAD test helpers: the phantom shape and the parsed options of ``build 3d-rad``."""

from __future__ import annotations

import argparse
from pathlib import Path

SHAPE = (48, 48, 24)


def build_args(root: Path | None, out: Path, seed: int = 0, **extra) -> argparse.Namespace:
    """The parsed options of ``medtemporal build 3d-rad --ct-rate ROOT``."""
    values = dict(ct_rate=root, split="valid", official=None, volume_prefix="valid", volume_map=None, image_root=None,
                  tasks="task1,task2,task3,task4,task5,task6", no_volume_check=False, out=out, seed=seed)
    values.update(extra)
    return argparse.Namespace(**values)
