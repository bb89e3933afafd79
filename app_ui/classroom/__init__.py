"""Classroom: privacy collapse, the two-node Laplace chain, a tiny chain audited."""
