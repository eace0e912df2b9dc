"""Strategies shared by the fuzz tests."""

from __future__ import annotations

from hypothesis import strategies as st

MAX_SNAPSHOT_ID = 2**63 - 1  # Java's Long.MAX_VALUE: the largest id Java Paimon reads back


def json_values(max_leaves: int = 8) -> st.SearchStrategy:
    """Any value ``json.loads`` can return (NaN and infinities included), with integers
    around 0 and around the largest snapshot id over-represented."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.integers(min_value=-3, max_value=3),
        st.integers(min_value=MAX_SNAPSHOT_ID - 3, max_value=MAX_SNAPSHOT_ID + 3),
        st.floats(),
        st.text(max_size=12),
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=12), inner, max_size=3),
        max_leaves=max_leaves,
    )
