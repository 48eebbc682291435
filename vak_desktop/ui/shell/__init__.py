"""The shell: the main window, its status bar and banner, onboarding, the event loop, the
self-test, quit signals, crash notices and Qt's messages, and the live application of saved
settings. The top room: it may import every other.
"""
