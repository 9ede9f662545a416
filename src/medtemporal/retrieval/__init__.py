"""Retrieval: embedders (images, texts), cached corpus embeddings, exact top-k retrievers.

Used by TemMed-Bench's retrieval augmentation; knows nothing of generative models.
"""

from medtemporal.retrieval.embedders import Embedder, PixelEmbedder, load_embedder
from medtemporal.retrieval.search import (
    ImageRetriever,
    ImageTextRetriever,
    PairwiseImageRetriever,
    TfidfRetriever,
    top_k,
)
from medtemporal.retrieval.store import PairEntry, image_embeddings, load_corpus, save_corpus, text_embeddings

__all__ = [
    "Embedder",
    "ImageRetriever",
    "ImageTextRetriever",
    "PairEntry",
    "PairwiseImageRetriever",
    "PixelEmbedder",
    "TfidfRetriever",
    "image_embeddings",
    "load_corpus",
    "load_embedder",
    "save_corpus",
    "text_embeddings",
    "top_k",
]
