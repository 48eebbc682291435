"""The turn (spec §2, §4, §7, §8): one directive from the user to a closed turn.

Owns the loop that streams, runs tools and writes entries (`runner`), its rules for repeated
cards, empty steps and drift (`rules`), the projection of a plan into a request (`projection`),
the summariser and packets written ahead (`summariser`, `compaction`), over-length recovery
(`recovery`), and the cache watch (`cache_watch`). May import `runtime.capacity`,
`runtime.tools`, `runtime.sessions` and the shared modules; never `runtime.providers`,
`runtime.inspection` or `runtime.evaluation`.
"""
