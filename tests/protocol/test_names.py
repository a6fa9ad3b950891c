"""Names of tables and members: what fits the wire (32 bytes of UTF-8), and what is printed
of names that other peers chose."""

from __future__ import annotations

import pytest

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.messages import NAME_MAX_BYTES, fit_name, name_problem, printable_name, quoted_name
from protocol.signing import SigningKeyPair
from tools.mesh import seeded_bytes


def test_a_derived_name_keeps_its_suffix_and_shortens_the_base_by_whole_characters() -> None:
    # 16 two-byte letters fill the wire: a bot named after the table loses letters, never
    # half a letter, and keeps its "-bot2" whole.
    fitted = fit_name("é" * 16, "-bot2")
    assert fitted == "é" * 13 + "-bot2"
    assert len(fitted.encode()) <= NAME_MAX_BYTES
    assert name_problem(fitted) is None
    assert fit_name("kitchen", "-guest") == "kitchen-guest"  # short names are left alone


def test_a_name_in_a_sentence_reads_as_it_was_typed() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one emoji, joined by ZWJs
    assert quoted_name(family) == f"'{family}'"  # repr spelled out its joiners as escapes
    assert quoted_name("back\\slash") == "'back\\slash'"  # one backslash, not two
    assert quoted_name("bob's") == '"bob\'s"'
    assert quoted_name("a\x1b[2Jb") == "'a[2Jb'"  # still no terminal escapes


def test_what_is_printed_of_a_name_cannot_drive_a_terminal() -> None:
    hostile = "a\x1b[2Jb\u202e  c\n\td"  # clear-screen escape, right-to-left override, newline
    assert printable_name(hostile) == "a[2Jb c d"
    assert name_problem(hostile) is not None
    assert fit_name(hostile) == "a[2Jb c d"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        ("two  spaces", "with single spaces"),
        ("x" * 33, "at most 32 bytes of UTF-8: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' is 33"),
    ],
)
def test_a_name_that_cannot_be_ours_is_refused_in_words(name: str, words: str) -> None:
    problem = name_problem(name)
    assert problem is not None
    assert words in problem


def test_a_replica_refuses_a_name_over_the_wire_limit_before_it_signs_anything() -> None:
    with pytest.raises(ValueError, match="at most 32 bytes of UTF-8"):
        TableReplica.open_table(
            SigningKeyPair(bytes(32)),
            name="ü" * 17,
            rules=Rules(seats=2),
            spectators=True,
            randomness=seeded_bytes("names"),
        )
    # 32 bytes exactly is a name the table takes
    replica = TableReplica.open_table(
        SigningKeyPair(bytes(32)),
        name="ü" * 16,
        rules=Rules(seats=2),
        spectators=True,
        randomness=seeded_bytes("names"),
    )
    assert replica.sync.open_op is not None


@pytest.mark.parametrize(
    "name",
    # a family, a flag, a Persian word ("mi-khaham", joined by a ZWNJ)
    ["👨\u200d👩\u200d👧 fam", "🏳️\u200d🌈", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"],
)
def test_names_joined_by_a_zero_width_joiner_are_names(name: str) -> None:
    # The joiners were dropped with every other formatting character, so an emoji family
    # or a Persian word was refused as "not printable text".
    assert name_problem(name) is None
    assert printable_name(name) == name


def test_a_table_name_typed_decomposed_finds_the_table_named_composed() -> None:
    from nerts_p2p.net.discovery import same_name

    assert same_name("caf\u00e9", "cafe\u0301")  # one é, or e and a combining accent
    assert not same_name("cafe", "café")
