"""Simulate: its settings, views, words and the published baselines."""
