"""Exceptions raised by puffer_core for bad input."""

from __future__ import annotations

from .validation import InvalidParameter


class DataError(ValueError):
    """An uploaded or given dataset cannot be used; the message says what is wrong."""


class DataTypeError(DataError, InvalidParameter):
    """A data source of the wrong type (``None``, a number, a dict): a DataError and a TypeError at once."""
