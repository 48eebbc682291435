"""Chart card (QtCharts): {title?, kind: "line" | "bar" | "area" | "scatter" | "pie", x_label?,
y_label?, series: [{name, points: [[x, y]] or [{x, y}]}], accessible_summary?}.

Numeric x values make a value axis; any other x values become categories in the order they
first appear; a pie shows the first series' points as slices. Every chart carries a sentence a
screen reader can read (and a person can copy) — the payload's `accessible_summary`, else one
we write: how many series, their ranges, first and last values — shown under the chart.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCharts import (
    QAreaSeries,
    QBarCategoryAxis,
    QBarSeries,
    QBarSet,
    QChart,
    QChartView,
    QLineSeries,
    QPieSeries,
    QScatterSeries,
    QValueAxis,
)
from PySide6.QtCore import QMargins, QPointF, Qt
from PySide6.QtGui import QGuiApplication, QPainter, QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

from vak_desktop.ui.cards.frame import caption, text_of
from vak_desktop.ui.parts.markdown import is_dark

KIND_LABEL = "Chart"
KINDS = ("line", "bar", "area", "scatter", "pie")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def _series(payload: dict[str, Any]) -> list[tuple[str, list[tuple[Any, float]]]]:
    out = []
    for n, raw in enumerate(payload.get("series") or [], start=1):
        if not isinstance(raw, dict):
            continue
        points = []
        for point in raw.get("points") or []:
            if isinstance(point, dict) and "x" in point:
                x, y = point["x"], _number(point.get("y"))
            elif isinstance(point, (list, tuple)) and len(point) >= 2:
                x, y = point[0], _number(point[1])
            else:
                continue
            if y is not None:
                points.append((x, y))
        out.append((text_of(raw.get("name")) or f"series {n}", points))
    return out


def summary(payload: dict[str, Any]) -> str:
    """The chart in one or two sentences, for screen readers and for the caption."""
    kind = str(payload.get("kind")) if payload.get("kind") in KINDS else "line"
    series = _series(payload)
    title = text_of(payload.get("title"))
    head = f"{kind.capitalize()} chart" + (f" “{title}”" if title else "")
    axes = []
    if payload.get("x_label"):
        axes.append(f"x: {text_of(payload['x_label'])}")
    if payload.get("y_label"):
        axes.append(f"y: {text_of(payload['y_label'])}")
    head += f" ({', '.join(axes)})" if axes else ""
    if not series:
        return head + ": no data."
    parts = []
    for name, points in series:
        if not points:
            parts.append(f"{name}: no points")
            continue
        ys = [y for _x, y in points]
        parts.append(
            f"{name}: {len(points)} points from {text_of(points[0][0])} to"
            f" {text_of(points[-1][0])}, {text_of(points[0][1])} → {text_of(points[-1][1])}"
            f" (min {text_of(min(ys))}, max {text_of(max(ys))})"
        )
    return f"{head}, {len(series)} series. " + "; ".join(parts) + "."


def build(payload: dict[str, Any]) -> QWidget:
    kind = str(payload.get("kind")) if payload.get("kind") in KINDS else "line"
    series = _series(payload)
    chart = QChart()
    chart.setTheme(
        QChart.ChartTheme.ChartThemeDark
        if is_dark(QGuiApplication.palette())
        else QChart.ChartTheme.ChartThemeLight
    )
    chart.setBackgroundVisible(False)  # the card is the background
    chart.setMargins(QMargins(4, 4, 4, 4))
    chart.legend().setVisible(len(series) > 1 or bool(series and series[0][0]))
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
    if kind == "pie":
        _pie(chart, series)
    else:
        _plot(chart, kind, series, payload)
    view = QChartView(chart)
    view.setObjectName("cardChart")
    view.setRenderHint(QPainter.RenderHint.Antialiasing)
    view.setStyleSheet("background: transparent;")
    view.setMinimumHeight(240)
    view.setMaximumHeight(300)
    text = text_of(payload.get("accessible_summary")) or summary(payload)
    view.setAccessibleName(text_of(payload.get("title")) or f"{kind} chart")
    view.setAccessibleDescription(text)
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    layout.addWidget(view)
    note = caption(text, body, size="small")
    note.setObjectName("chartSummary")
    layout.addWidget(note)
    body.setBackgroundRole(QPalette.ColorRole.Base)
    return body


def _pie(chart: QChart, series: list[tuple[str, list[tuple[Any, float]]]]) -> None:
    pie = QPieSeries()
    name, points = series[0] if series else ("", [])
    pie.setName(name)
    for x, y in points:
        pie.append(text_of(x), max(0.0, y))
    pie.setLabelsVisible(len(points) <= 8)
    chart.addSeries(pie)
    chart.legend().setVisible(True)


def _plot(
    chart: QChart,
    kind: str,
    series: list[tuple[str, list[tuple[Any, float]]]],
    payload: dict[str, Any],
) -> None:
    xs_numeric = all(_number(x) is not None for _n, pts in series for x, _y in pts)
    ys = [y for _n, pts in series for _x, y in pts]
    if kind == "bar" or not xs_numeric:
        categories: list[str] = []
        for _name, points in series:
            for x, _y in points:
                if text_of(x) not in categories:
                    categories.append(text_of(x))
        x_axis: QBarCategoryAxis | QValueAxis = QBarCategoryAxis()
        x_axis.append(categories)  # type: ignore[union-attr]
    else:
        categories = []
        x_axis = QValueAxis()
        xs = [_number(x) or 0.0 for _n, pts in series for x, _y in pts]
        if xs:
            x_axis.setRange(min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1)
        x_axis.setLabelFormat("%g")
        x_axis.applyNiceNumbers()
    y_axis = QValueAxis()
    if ys:
        low, high = min(0.0, min(ys)), max(ys)  # from zero: a slope is not exaggerated
        pad = (high - low) * 0.05 or 1.0
        y_axis.setRange(low - pad if low < 0 else 0.0, high + pad)
    y_axis.setLabelFormat("%g")
    if ys:
        y_axis.applyNiceNumbers()
    if payload.get("x_label"):
        x_axis.setTitleText(text_of(payload["x_label"]))
    if payload.get("y_label"):
        y_axis.setTitleText(text_of(payload["y_label"]))
    chart.addAxis(x_axis, Qt.AlignmentFlag.AlignBottom)
    chart.addAxis(y_axis, Qt.AlignmentFlag.AlignLeft)
    if kind == "bar":
        bars = QBarSeries()
        for name, points in series:
            by_x = {text_of(x): y for x, y in points}
            bar_set = QBarSet(name)
            bar_set.append([by_x.get(c, 0.0) for c in categories])
            bars.append(bar_set)
        chart.addSeries(bars)
        bars.attachAxis(x_axis)
        bars.attachAxis(y_axis)
        return
    for name, points in series:
        line = QScatterSeries() if kind == "scatter" else QLineSeries()
        line.setName(name)
        if kind == "line":
            line.setPointsVisible(len(points) <= 30)
        for x, y in points:  # on a category axis, x is the category's index
            at = categories.index(text_of(x)) if categories else (_number(x) or 0.0)
            line.append(QPointF(float(at), y))
        shown: QLineSeries | QScatterSeries | QAreaSeries = line
        if kind == "area":
            assert isinstance(line, QLineSeries)
            area = QAreaSeries(line)
            area.setName(name)
            line.setParent(area)
            shown = area
        chart.addSeries(shown)
        shown.attachAxis(x_axis)
        shown.attachAxis(y_axis)


def title_of(payload: dict[str, Any]) -> str:
    return text_of(payload.get("title"))
