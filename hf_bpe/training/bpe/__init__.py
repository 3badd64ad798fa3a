"""Byte-level BPE: the trainer equal to `tokenizers`' BpeTrainer, extension of a trained model, SuperBPE."""
