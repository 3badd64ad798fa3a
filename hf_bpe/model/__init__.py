"""The model layer: :class:`BPEModel`, what a trainer produces and what files load into."""

from .bpe import SAVED_FILES, BPEModel, IncrementalDecoder

__all__ = ["BPEModel", "IncrementalDecoder", "SAVED_FILES"]
