"""Streams: its settings, controls, views and accuracy."""
