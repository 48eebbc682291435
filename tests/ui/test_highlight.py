"""Code blocks coloured by Pygments in the theme's style; unknown languages stay plain."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from tests.shots import shots_dir
from vak_desktop.ui.parts.markdown import MarkdownPane, markdown_html, palette_colors
from vak_desktop.ui.parts.theme import apply_theme

SOURCE = 'Here:\n\n```python\ndef f(x: int) -> str:\n    return "<%d>" % x  # done\n```\n'
SHOTS = shots_dir("dsk")


def _colors(qapp: QApplication, theme: str) -> dict[str, str]:
    apply_theme(qapp, theme)
    return palette_colors(qapp.palette())


def test_a_known_language_is_coloured_in_the_themes_style_and_stays_escaped(
    qapp: QApplication,
) -> None:
    light = markdown_html(SOURCE, _colors(qapp, "light"), [])
    dark = markdown_html(SOURCE, _colors(qapp, "dark"), [])
    assert '<span style="color: #008000; font-weight: bold">def</span>' in light
    assert "#C678DD" in dark and "#008000" not in dark  # one-dark, not the light style
    assert "&lt;" in light and "<%d>" not in light  # the code cannot inject markup
    plain = markdown_html("```nosuchlang\ndef f(): pass\n```\n", _colors(qapp, "light"), [])
    assert 'monospace;">def f(): pass</pre>' in plain  # no colour spans
    apply_theme(qapp, "light")


def test_the_pane_keeps_the_codes_text_and_screenshots_light_and_dark(qapp: QApplication) -> None:
    for theme in ("light", "dark"):
        apply_theme(qapp, theme)
        pane = MarkdownPane()
        pane.resize(560, 200)
        pane.show_markdown(SOURCE)
        assert pane.codes == ['def f(x: int) -> str:\n    return "<%d>" % x  # done']
        assert 'return "<%d>" % x' in pane.toPlainText()
        pane.show()
        pane.fit()
        assert pane.grab().save(str(SHOTS / f"code_block_{theme}.png"))
        pane.deleteLater()
    apply_theme(qapp, "light")


def test_the_lexers_are_compiled_ahead_off_the_ui_thread() -> None:
    from vak_desktop.ui.parts.highlight import _lexer, preload

    thread = preload(("toml", "nosuchlang"))
    thread.join(timeout=30)
    assert not thread.is_alive() and thread.name == "pygments-preload"
    hits = _lexer.cache_info().hits
    assert _lexer("toml") is not None and _lexer("nosuchlang") is None
    assert _lexer.cache_info().hits == hits + 2  # both answered from what the thread made
