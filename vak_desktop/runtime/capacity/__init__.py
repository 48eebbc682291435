"""Capacity at run time (spec §1, §6): binding a model, probing it, measuring its prefix.

Owns the model binding and its `num_ctx` (`binding`), the profile a turn is planned against
(`service`), the probe runner (`probe`) and its idle-time scheduler (`scheduler`), and the
usage-only prefix measurement (`prefix`). Imports no other room of `runtime`.
"""
