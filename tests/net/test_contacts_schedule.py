"""When a member tells the table its contacts (`ContactsSchedule`, PROTOCOL.md N.2), on its
own: a member never named is told at once, a changed address not more often than every
`CONTACTS_SOONEST`, and everything once every `CONTACTS_INTERVAL`."""

from __future__ import annotations

from nerts_p2p.net.contacts import CONTACTS_INTERVAL, CONTACTS_SOONEST, ContactsSchedule

ANN, BOB = b"ann-id--", b"bob-id--"


def test_a_member_never_named_is_told_at_once_even_right_after_the_last_contacts() -> None:
    schedule = ContactsSchedule()
    first = [(ANN, ("10.0.0.2", 4000))]
    assert schedule.due(first, 0.0)
    schedule.told(first, 0.0)
    assert not schedule.due(first, 0.01), "nothing new"
    assert schedule.due([*first, (BOB, ("10.0.0.3", 4000))], 0.01)


def test_a_changed_address_is_told_again_only_after_the_rate_limit() -> None:
    schedule = ContactsSchedule()
    schedule.told([(ANN, ("10.0.0.2", 4000))], 0.0)
    moved = [(ANN, ("10.0.0.2", 4001))]
    assert not schedule.due(moved, CONTACTS_SOONEST / 2), "a flapping address waits"
    assert schedule.due(moved, CONTACTS_SOONEST)


def test_the_same_contacts_are_told_again_once_an_interval() -> None:
    schedule = ContactsSchedule()
    same = [(ANN, ("10.0.0.2", 4000))]
    schedule.told(same, 0.0)
    assert not schedule.due(same, CONTACTS_INTERVAL - 0.01)
    assert schedule.due(same, CONTACTS_INTERVAL)
    schedule.looked(CONTACTS_INTERVAL)  # nothing told (not a member yet, say)
    assert not schedule.due(same, CONTACTS_INTERVAL + 0.5)
