"""SentencePiece BPE equal to spm_train: the Python spec, the compiled trainer, options, normalizer, extension."""
