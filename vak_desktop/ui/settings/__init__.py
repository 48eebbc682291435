"""Settings: the settings in force on the Qt side (`SettingsController`), the dialog with its
providers page and widgets, the update check.

May import `chat`, `cards` and `parts`; never the shell, `models`, `sessions` or `inspector`.
"""
