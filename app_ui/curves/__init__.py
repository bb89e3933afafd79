"""Influence curves: the figures and tables of a prior's a(b) curve."""
