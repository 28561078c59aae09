"""Exports to the tools users train and look with: :mod:`.hf` (Hugging Face datasets)."""
