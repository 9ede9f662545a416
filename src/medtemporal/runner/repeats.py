"""Repeats (``--repeats N``, inspect's "epochs"): each repeat of an item is its own sample.

At temperature 0 a repeat sends the same request as repeat 0, so the response
cache may serve it. Above 0, repeat ``r > 0`` is a distinct sample: its index
is part of the request's cache key (`sample_index`), and where the run has a
seed, the request carries a seed derived from it and ``r`` (`repeat_config`),
so a seeded backend samples anew for every repeat yet the same command gives
the same answers again. Repeat 0 is exactly the run without repeats.

>>> from medtemporal.backends.base import GenerateConfig
>>> repeat_config(GenerateConfig(temperature=0.7, seed=5), 0).seed
5
>>> repeat_config(GenerateConfig(temperature=0.7, seed=5), 2).seed == derived_seed(5, 2) != 5
True
>>> repeat_config(GenerateConfig(temperature=0.0, seed=5), 2).seed
5
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from medtemporal.backends.base import GenerateConfig
from medtemporal.bounds import REPEATS_MAX, check_range


def check_repeats(repeats: int) -> int:
    """``repeats`` if it is from 1 to `medtemporal.bounds.REPEATS_MAX`, else one clear sentence."""
    check_range(repeats, "--repeats", 1, REPEATS_MAX)
    return repeats


def is_sampled(config: GenerateConfig) -> bool:
    """True when repeats are distinct samples: temperature above 0, or unset (the provider's default samples)."""
    return config.temperature is None or config.temperature > 0


def derived_seed(seed: int, repeat: int) -> int:
    """The seed of repeat ``repeat`` of a run seeded with ``seed`` (31 bits, stable across platforms)."""
    digest = hashlib.sha256(f"medtemporal-repeat\0{seed}\0{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def repeat_config(config: GenerateConfig, repeat: int) -> GenerateConfig:
    """The generation settings of repeat ``repeat``: a derived seed for sampled, seeded repeats after the first."""
    if repeat == 0 or not is_sampled(config) or config.seed is None:
        return config
    return replace(config, seed=derived_seed(config.seed, repeat))


def sample_index(config: GenerateConfig, repeat: int) -> int:
    """What the cache key records of the repeat: its index when sampled, else 0 (the cache may serve)."""
    return repeat if is_sampled(config) else 0
