"""Providers as the app opens them: settings entries, keys, the embedded engine, the picker.

Owns opening a provider a settings entry names with its keyring key (`entries`, `secrets`), the
set of providers the window uses with one runner each (`provider_set`), the picker's choices
(`choices`), the model manager's operations (`models`) and the embedded llama.cpp server
(`embedded`). Sits above `runtime.turn` (it builds runners); nothing in `turn`, `tools` or
`capacity` imports it.
"""
