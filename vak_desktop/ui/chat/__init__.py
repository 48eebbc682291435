"""The chat: the service a window talks through (`ChatService` with its model selection,
session browsing and Compact now), the transcript view and its messages, the composer, streamed
Markdown and code panes, the words under an answer and the notice line.

May import `cards` and `parts` (the window-rooms contract in pyproject.toml); never the shell,
the model manager, the sessions' dialogs or settings.
"""
