"""Gaussian noise under (α, ε)-Rényi Pufferfish in the app: its settings, numbers, words and script block
(docs/math.md §17)."""
