"""The data: readers, the sequence model and the built-in datasets (docs/math.md §1).

- :mod:`.sequences`: :class:`Sequences`, one user's states in time order, checked value by value;
- :mod:`.readers`: CSV or Parquet (paths, bytes, uploads) into a :class:`Table`, then into sequences;
- :mod:`.columns`: which columns are likely the user, time, state and group (the upload page's guess, messages' hint);
- :mod:`.times`: text times read one way per column (the format decided once, ambiguity refused);
- :mod:`.stats`: :class:`SequenceStats`, every count the library needs from the data (tiny, whatever the data's size);
- :mod:`.engines`: :func:`load_stats`, the same SQL on DuckDB (embedded, spills to disk) or Spark (a cluster);
- :mod:`.datasets`: the built-in datasets, read exactly like an upload.
"""

from .datasets import DATASETS, Dataset, get_dataset, load_dataset
from .engines import load_stats
from .readers import Loaded, Repair, Table, find_repairs, load_sequences, load_with_repair, read_columns, read_table
from .sequences import Sequences, build_sequences
from .stats import SequenceStats

__all__ = [
    "DATASETS",
    "Dataset",
    "Loaded",
    "Repair",
    "SequenceStats",
    "Sequences",
    "Table",
    "build_sequences",
    "find_repairs",
    "get_dataset",
    "load_dataset",
    "load_sequences",
    "load_stats",
    "load_with_repair",
    "read_columns",
    "read_table",
]
