"""Sessions as the user sees them: transcripts, branches, search, import and export.

Owns the turn-by-turn transcripts `vak show` and the window list (`transcripts`), branches of
edits and regenerations (`branches`), search over TurnCards (`search`) and the OpenAI chat
interchange (`interchange`). Reads the ledger and the engine; imports no other room of `runtime`.
"""
