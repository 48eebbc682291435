"""What the app ships beside its code: the card library, chat templates, icons, the Linux desktop
entry and AppStream metadata. setup.py installs this folder as the package `vak_desktop.resources`
(every file under it, at any depth); read it only through `vak_desktop.shipped.shipped(path)`.
"""
