"""Values as text (puffer_core.priors.codecs): what a link or a box holds reads back to exactly what was written.

The references are the values themselves (float equality, bit for bit) and hand-built texts: a
compressed matrix is checked against ``struct``/``zlib`` decoding written here, not the codec's own.
"""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from puffer_core.priors.codecs import (
    MAX_STATES,
    DistributionText,
    LabelsText,
    MatrixText,
    Number,
    default_labels,
    pack_matrix,
)

probabilities = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_subnormal=True)


@given(
    st.integers(2, 40).flatmap(
        lambda k: st.lists(st.lists(probabilities, min_size=k, max_size=k), min_size=k, max_size=k)
    )
)
def test_a_matrix_reads_back_bit_for_bit_plain_or_compressed(rows: list[list[float]]) -> None:
    matrix = tuple(tuple(row) for row in rows)
    text = MatrixText().encode(matrix)
    assert text.startswith("z") == (len(matrix) > MAX_STATES)  # plain text up to 20 states, compressed beyond
    back = MatrixText().parse(text)
    assert np.array_equal(np.array(back).view(np.uint64), np.array(matrix).view(np.uint64))


def test_a_compressed_matrix_is_its_float64_bytes_zlib_compressed() -> None:
    matrix = np.random.default_rng(3).dirichlet(np.ones(25), size=25)
    text = pack_matrix(matrix)
    raw = zlib.decompress(base64.urlsafe_b64decode(text[1:] + "=" * (-len(text[1:]) % 4)))
    assert struct.unpack("<I", raw[:4]) == (25,)
    assert np.array_equal(np.frombuffer(raw[4:], "<f8").reshape(25, 25), matrix)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("zAAAA", "damaged"),
        (
            "z" + base64.urlsafe_b64encode(zlib.compress(struct.pack("<I", 3) + b"\0" * 8)).decode(),
            "size does not match",
        ),
        ("z" + base64.urlsafe_b64encode(zlib.compress(b"\0" * 10_000_000)).decode(), "too large"),  # no zip bomb
        ("0.5,0.5;0.5", "same number of entries"),
        ("0.5,0.5,0\n0.5,0.5,0", "must be square"),
        ("0.5,x;0.5,0.5", "row 1, entry 2: 'x' is not a number"),
    ],
)
def test_a_damaged_matrix_is_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        MatrixText().parse(text)


def test_typed_matrices_take_lines_spaces_and_fractions() -> None:
    assert MatrixText().parse("1/3 2/3\n0.1; 0.9") == ((1 / 3, 2 / 3), (0.1, 0.9))
    assert MatrixText().parse("0.5,0.5;0.25,0.75") == ((0.5, 0.5), (0.25, 0.75))


@given(
    st.lists(
        st.text(min_size=1, max_size=12).filter(lambda s: s.strip() == s and "\x1f" not in s),
        min_size=2,
        max_size=60,
        unique=True,
    )
)
def test_labels_read_back_whatever_they_hold(labels: list[str]) -> None:
    codec = LabelsText()
    text = codec.encode(labels)
    if tuple(labels) == default_labels(len(labels)):
        assert text == ""
    else:
        assert codec.parse(text) == tuple(labels)


def test_a_long_distribution_is_compressed_and_exact() -> None:
    values = tuple(np.random.default_rng(1).dirichlet(np.ones(30)))
    text = DistributionText().encode(values)
    assert text.startswith("z") and DistributionText().parse(text) == values


def test_numbers_say_why_a_value_is_refused() -> None:
    length = Number(2, 10_000, whole=True)
    assert length.problem(10_000_000) == "between 2 and 10,000"
    assert length.problem(2.5) == "a whole number"
    assert Number(0.01, 1000).problem(-1) == "between 0.01 and 1,000"
    assert length.problem(50) == ""
