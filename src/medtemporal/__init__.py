"""medtemporal: benchmarks of temporal medical reasoning for vision-language models."""

__version__ = "0.1.0"
