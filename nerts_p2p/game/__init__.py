"""The game of Nerts as pure code: cards, rules, state, moves, engine, bots, scoring, audit."""
