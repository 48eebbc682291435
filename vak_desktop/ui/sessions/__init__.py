"""Sessions: the sidebar's chat list and search, the import and export dialogs, a chat's
system prompt dialog.

May import `settings`, `chat`, `cards` and `parts`; never the shell, `models` or `inspector`.
"""
