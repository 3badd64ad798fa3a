"""SentencePiece unigram equal to spm_train: the Python spec, its lattice and seed step, the compiled trainer."""
