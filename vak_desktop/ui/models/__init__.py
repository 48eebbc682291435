"""Models: the picker, the model manager and its pulls, the embedded engine's catalogue and
downloads, and the hosted providers the window opens.

May import `settings`, `chat`, `cards` and `parts`; never the shell, `sessions` or `inspector`.
"""
