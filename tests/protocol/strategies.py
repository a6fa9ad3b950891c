"""Hypothesis strategies for wire values, shared by the protocol tests."""

from __future__ import annotations

from hypothesis import strategies as st

from protocol import MAX_DEPTH

# Everything `pack` accepts and `unpack_bounded` returns: the wire's whole value space.
scalars: st.SearchStrategy[object] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.binary(max_size=24),
    st.text(max_size=12),
)


def depth(value: object) -> int:
    """Nesting depth as the codec counts it: a scalar is 0, `[]` is 1, `[[]]` is 2."""
    if isinstance(value, list):
        return 1 + max((depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(item) for item in value.values()), default=0)
    return 0


wire_values: st.SearchStrategy[object] = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.text(max_size=8) | st.binary(max_size=8), children, max_size=5),
    ),
    max_leaves=20,
).filter(lambda value: depth(value) <= MAX_DEPTH)
