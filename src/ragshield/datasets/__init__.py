"""Knowledge-base corpora: the synthetic PII corpus and loaders for real data."""

from ragshield.datasets.base import Corpus, PiiItem, load_corpus

__all__ = ["Corpus", "PiiItem", "load_corpus"]
