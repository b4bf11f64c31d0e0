"""Generators: the one backend seam. `stream(request)` yields text deltas."""

from ragshield.generators.base import Generator, complete, make_generator

__all__ = ["Generator", "complete", "make_generator"]
