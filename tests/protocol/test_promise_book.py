"""A heartbeat's promise about its author's next op (PROTOCOL.md 7), judged on its own:
which op it is about, which deps it binds, and how many unchecked promises are kept per
author and for how long. (Found by `tools.mutate`, seed 604, `protocol/promises.py`.)"""

from __future__ import annotations

from protocol.envelope import seal
from protocol.messages import Heartbeat, Kind, Op, decode, heartbeat_body, op_body, seal_op
from protocol.promises import MAX_OPEN_PER_AUTHOR, PromiseBook, broken_promise
from protocol.signing import SigningKeyPair
from tools.gen_vectors import TABLE

AUTHOR = SigningKeyPair(b"\x61" * 32)
OTHER = SigningKeyPair(b"\x62" * 32)
A, B = AUTHOR.key_id, OTHER.key_id


def _heartbeat(lamport: int, vector: list[tuple[bytes, int]]) -> Heartbeat:
    message = decode(
        seal(AUTHOR, heartbeat_body(TABLE, A, lamport, sorted(vector), b"")), table=TABLE
    )
    assert isinstance(message, Heartbeat)
    return message


def _op(seq: int, lamport: int, deps: list[int] | None = None) -> Op:
    """The author's op `seq`: a round-1 MOVE with one dep per participant (B, A)."""
    return seal_op(
        AUTHOR,
        op_body(Kind.MOVE, TABLE, A, seq, bytes(16), lamport, 1, deps or [0, seq - 1], "stuck"),
    )


def test_a_heartbeat_naming_none_of_its_senders_ops_promises_about_its_first_op() -> None:
    promise = _heartbeat(10, [(B, 2)])
    assert broken_promise(promise, _op(1, 10, [2, 0]), (B, A)) is not None  # not above 10
    assert broken_promise(promise, _op(1, 11, [2, 0]), (B, A)) is None
    assert broken_promise(promise, _op(2, 5, [2, 1]), (B, A)) is None  # not the op it is about


def test_a_participant_the_heartbeat_does_not_name_may_be_named_as_seen_zero_times() -> None:
    assert broken_promise(_heartbeat(10, [(A, 3)]), _op(4, 11, [0, 3]), (B, A)) is None
    # ...and one it names may not be named as seen fewer times than it held.
    why = broken_promise(_heartbeat(10, [(A, 3), (B, 1)]), _op(4, 11, [0, 3]), (B, A))
    assert why is not None
    assert "names 0 ops" in why


def test_a_round_op_whose_round_is_not_known_is_held_to_its_time_alone() -> None:
    # Participants unknown (empty): the deps cannot be matched to anyone, so only the
    # promised time is judged, and nothing fails.
    promise = _heartbeat(10, [(A, 3), (B, 5)])
    assert broken_promise(promise, _op(4, 11, [0, 3]), ()) is None
    assert broken_promise(promise, _op(4, 10, [0, 3]), ()) is not None


def test_the_book_keeps_the_promises_about_the_eight_newest_ops_of_an_author() -> None:
    book = PromiseBook()
    for own in range(1, 11):
        book.note(_heartbeat(10 * own, [(A, own)]), delivered=0)
    assert MAX_OPEN_PER_AUTHOR == 8
    assert sorted(book.open[A]) == list(range(3, 11))


def test_promises_about_later_ops_outlive_the_check_of_an_earlier_one() -> None:
    book = PromiseBook()
    about_five, about_seven = _heartbeat(10, [(A, 4)]), _heartbeat(20, [(A, 6)])
    book.note(about_five, delivered=4)
    book.note(about_seven, delivered=4)
    assert book.due(_op(5, 11)) is about_five
    assert book.due(_op(6, 12)) is None  # no promise was made about op 6
    assert book.due(_op(7, 21)) is about_seven
    assert book.open == {}  # every promise checked: nothing kept about this author


def test_each_heartbeat_is_relayed_once_and_a_newer_one_again() -> None:
    # A relayed heartbeat carries a horizon across a one-way link; sending the same one on
    # every relay turn only costs datagrams (found by tools.mutate, seed 606: `and` made `or`
    # relayed every kept heartbeat again on every turn).
    book = PromiseBook()
    first = _heartbeat(10, [(A, 1)])
    book.note(first, delivered=1)
    assert book.to_relay(B) == [first]
    assert book.to_relay(B) == []
    newer = _heartbeat(12, [(A, 1)])
    book.note(newer, delivered=1)
    assert book.to_relay(B) == [newer]
    assert book.to_relay(A) == []  # never our own (and nothing new anyway)


def test_the_book_holds_a_heartbeat_naming_none_of_its_senders_ops_to_its_first_op() -> None:
    # As `broken_promise` reads it: a heartbeat whose vector does not name its sender (an
    # admitted joiner's, before its JOIN) is about its first op, and the book hands it
    # over when op 1 is delivered (seed 1201: it was filed as a promise about op 2).
    book = PromiseBook()
    promise = _heartbeat(10, [(B, 2)])
    book.note(promise, delivered=0)
    assert book.due(_op(1, 11, [2, 0])) is promise


def test_a_second_heartbeat_stamped_alike_does_not_replace_a_kept_promise() -> None:
    # Only a later heartbeat replaces the promise kept about an op: one stamped at the same
    # time (no honest peer signs two) cannot swap a weaker vector in for the one that binds
    # the op's deps (seed 1201: `>` made `>=` let it).
    book = PromiseBook()
    strong = _heartbeat(10, [(A, 3), (B, 5)])
    weak = _heartbeat(10, [(A, 3), (B, 1)])
    book.note(strong, delivered=3)
    book.note(weak, delivered=3)
    kept = book.due(_op(4, 11, [2, 3]))
    assert kept is strong
    assert broken_promise(kept, _op(4, 11, [2, 3]), (B, A)) is not None


def test_a_heartbeat_stamped_0_is_relayed_once_like_any_other() -> None:
    # Lamport 0 is a heartbeat's own range (PROTOCOL.md 3.3: a sender that has stamped
    # nothing yet): it is still a sign of life and an acknowledgment, relayed once, and a
    # later one after it. (Seed 16: a relay floor of 0 instead of -1 never relayed it.)
    book = PromiseBook()
    first = _heartbeat(0, [])
    book.note(first, 0)
    assert book.to_relay(B) == [first]
    assert book.to_relay(B) == []
    later = _heartbeat(1, [])
    book.note(later, 0)
    assert book.to_relay(B) == [later]
