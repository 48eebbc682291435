"""Parts every room draws with: the theme (palettes, the style sheet, `follow_theme`), task sets,
glyphs, dialog parts, Markdown panes and highlighting, the collapsible message sections.

The bottom room: imports no other room of the window.
"""
