"""Shared fixtures: one Evaluator (a resident plan worker with torch imported) per module,
and paths to the bundled examples."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "tasks"

os.environ.setdefault("LANCEDB_LOG", "error")


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    ev = Evaluator(EvalSettings(trials=3, cache_dir=tmp_path_factory.getbasetemp() / "build-cache"))
    yield ev
    ev.close()
