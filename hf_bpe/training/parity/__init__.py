"""Parity-aware BPE over one corpus per language: the Python spec, the compiled driver, the entry point."""
