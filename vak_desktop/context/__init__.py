"""The context engine (spec §1–§7, §10): pure values and functions, no I/O, no clock, no asyncio.

Rooms, top to bottom (a contract in pyproject.toml keeps the order): `invariants` (the spec's
request invariants as findings); `planning`; `capacity`; `evidence` and `presentations`; and the
shared values every room reads: `request` (the provider-neutral request), `codec` and
`payloads` (the ledger's entry payloads).
"""
