"""The data: readers, the sequence model and the built-in datasets (docs/math.md §1).

- :mod:`.sequences`: :class:`Sequences`, one user's states in time order, checked value by value;
- :mod:`.readers`: CSV or Parquet (paths, bytes, uploads) into a :class:`Table`, then into sequences;
- :mod:`.datasets`: the built-in datasets, read exactly like an upload.
"""

from .datasets import DATASETS, Dataset, get_dataset, load_dataset
from .readers import Loaded, Repair, Table, find_repairs, load_sequences, load_with_repair, read_columns, read_table
from .sequences import Sequences, build_sequences

__all__ = [
    "DATASETS",
    "Dataset",
    "Loaded",
    "Repair",
    "Sequences",
    "Table",
    "build_sequences",
    "find_repairs",
    "get_dataset",
    "load_dataset",
    "load_sequences",
    "load_with_repair",
    "read_columns",
    "read_table",
]
