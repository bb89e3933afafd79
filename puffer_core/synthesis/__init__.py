"""Synthetic sequences with a Pufferfish guarantee (docs/math.md §19)."""
