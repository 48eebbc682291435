"""Evidence (spec §3): tool results kept whole in the ledger and shown by reference.

Owns evidence windows and line selection (`windows`), the shape digests a later request sees in
place of a result (`digests`), and the recogniser for tool calls written as text (`text_calls`).
Imports only the shared values (`payloads`, `request`); no other room of `context`.
"""
