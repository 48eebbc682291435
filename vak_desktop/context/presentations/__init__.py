"""Presentations (spec §7, §10): the card library and each card's identity.

Owns the card definitions, payload validation and fence parsing (`library`) and a payload's
canonical form and digest (`digest`). Imports no other room of `context`.
"""
