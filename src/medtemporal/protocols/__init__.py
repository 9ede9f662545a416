"""Protocols: how an item becomes model calls (direct, stage-wise, RAG, ...)."""

from medtemporal.protocols import direct, rag, stagewise
from medtemporal.protocols.base import Generate, Solution, Solver

__all__ = ["Generate", "Solution", "Solver", "direct", "rag", "stagewise"]
