"""`bench/probe.py --model`'s real-model mode loads: it imported names the efficacy bench had
moved to its cases module, and failed only when someone ran it on a model."""

from __future__ import annotations

import importlib


def test_the_real_model_mode_imports_and_asks_the_shipment_task() -> None:
    probe_real = importlib.import_module("bench.probe_real")
    assert probe_real.FRESH_ASK.startswith("Search my files for the shipment code ")
    assert callable(probe_real.real_model)
