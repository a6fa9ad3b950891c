"""The replicated table: the sync state machine folded through the rules into a game."""
