"""Inspection: the next request previewed and a past request rebuilt, without sending.

Owns `preview` (what `vak plan`, `vak request` and the inspector show of the next request) and
`replay` (the request a past step sent, rebuilt from the ledger and checked against its
receipt). May import `runtime.turn`, `runtime.tools` and `runtime.capacity`.
"""
