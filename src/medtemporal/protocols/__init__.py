"""Protocols: how an item becomes model calls (direct zero-shot, stage-wise, shuffled-timestamps,
caption-then-reason).

A family's own protocols (TemMed-Bench's retrieval augmentation) live in its
package under ``medtemporal.benchmarks`` and register themselves the same way.
"""

from medtemporal.protocols import caption_then_reason, direct, shuffled_timestamps, stagewise
from medtemporal.protocols.base import Generate, Solution, Solver

__all__ = ["Generate", "Solution", "Solver", "caption_then_reason", "direct", "shuffled_timestamps", "stagewise"]
