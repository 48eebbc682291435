"""Evaluation (the spec's Verification section): the verification suite behind `vak eval`.

Owns the ledger and request-invariant checks over every session (`checks`), the model checks
(probe harness, two-model replay, cache test: `model_checks`) and their scratch session
(`fixture`). The top of the runtime: it may import every other room.
"""
