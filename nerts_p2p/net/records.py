"""What a networked match prints: per round the object `nerts-p2p simulate --json` prints,
then the match object. Built only from a round's final fold, so every peer of the table
prints the same lines (the same state hash, moves, scores and totals)."""

from __future__ import annotations

from nerts_p2p.game.position import state_hash
from nerts_p2p.game.state import ENDED_STALEMATE
from nerts_p2p.table.replica import ReplicatedRound, RoundFinal


def network_round_record(rnd: ReplicatedRound, final: RoundFinal) -> dict[str, object]:
    end = rnd.states[-1]
    # The moves that count for the round: before its end, or in the air after it.
    counted = [step for step in rnd.steps if step.move is not None and step.in_the_air is not None]
    applied = sum(step.applied for step in counted)
    return {
        "round": final.round,
        "ended_by": end.ended_by or ENDED_STALEMATE,
        "called_by": end.called_by,
        "moves": applied,
        "rejected": len(counted) - applied,
        "state_hash": state_hash(end),
        "seats": [
            {
                "seat": s.seat,
                "foundation_cards": s.foundation_cards,
                "nerts_left": s.nerts_left,
                "score": s.score,
                "total": final.totals[s.seat],
            }
            for s in final.scores
        ],
        "cheaters": sorted(final.cheaters),
        # Seats whose players the others voted out as silent (PROTOCOL.md 13): scored as
        # their cards lay, not audited. Not in `simulate`'s records, where nobody leaves.
        "departed": sorted(final.departed),
    }


def network_match_record(finals: list[RoundFinal], *, target_reached: bool) -> dict[str, object]:
    last = finals[-1] if finals else None
    totals = list(last.totals) if last else []
    best = max(totals) if totals else None
    alone = best is not None and totals.count(best) == 1
    return {
        "match_winner": last.match_winner if last else None,
        "finished": target_reached,
        "rounds": len(finals),
        "leader": totals.index(best) if alone and best is not None else None,
        "totals": totals,
    }
