"""The game's values in the protocol's payloads: the rules as `[name, value]` pairs.

On the wire the rules are an array of `[name, value]` pairs, names strictly increasing in
byte order (so sorted, each at most once). A name left out takes its default (PROTOCOL.md
section 8.1 lists every field with its type, range and default). An unknown name, a name
given twice or out of order, or a value of the wrong type or out of range is refused.
"""

from __future__ import annotations

from nerts_p2p.game.errors import RulesError
from nerts_p2p.game.rules import Rules


def rules_to_wire(rules: Rules) -> list[list[object]]:
    return [[name, value] for name, value in sorted(rules.to_dict().items())]


def rules_from_wire(pairs: object) -> Rules:
    """The `Rules` a payload's pairs name; `RulesError` in plain words if they are not valid."""
    if not isinstance(pairs, list | tuple):
        raise RulesError("the rules must be an array of [name, value] pairs")
    values: dict[str, object] = {}
    previous: bytes | None = None
    for pair in pairs:
        if not isinstance(pair, list | tuple) or len(pair) != 2 or not isinstance(pair[0], str):
            raise RulesError("each rule is a [name, value] pair")
        name = pair[0]
        encoded = name.encode("utf-8", errors="surrogatepass")
        if previous is not None and encoded <= previous:
            raise RulesError(
                f"rule {name!r} is given twice or out of order (names must be sorted, each once)"
            )
        previous = encoded
        values[name] = pair[1]
    return Rules.from_dict(values)


__all__ = ["rules_from_wire", "rules_to_wire"]
