"""Planning (spec §2–§4, §7): from the ledger's entries to the request a turn sends.

Owns the turn index (`turns`), the directive's reading (`reading`, over the per-language cue
sets of `lexicon`, handed in as data), explicit instructions (`instructions`), BM25 relevance
(`relevance`), TurnCards and full records (`turn_cards`), the working-set planner (`planner`),
context packets (`packets`), drift checks (`drift`) and the assembler (`assemble`). The top of
the engine: it may import every other room of `context`.
"""
