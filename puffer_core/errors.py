"""Exceptions raised by puffer_core for bad input."""

from __future__ import annotations


class DataError(ValueError):
    """An uploaded or given dataset cannot be used; the message says what is wrong."""
