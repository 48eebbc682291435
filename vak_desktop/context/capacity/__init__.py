"""Capacity (spec §1, §6): what a bound model can really do, as plain values.

Owns the `CapacityProfile` and token estimates (`profile`), the probe ladder's decisions
(`probe`) and its recorded history (`probe_history`), the usage feedback that narrows a profile
(`feedback`), the stable prefix's measured size (`prefix`) and the prefix-cache watch
(`cache_watch`). May import `context.evidence` and the shared values (`payloads`, `request`,
`codec`); never `context.planning` or `context.presentations`.
"""
