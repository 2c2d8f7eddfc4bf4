"""The Report is a contract (docs/report.md): its JSON Schema is pinned by a golden file."""

import json
from pathlib import Path

from sage_npu.npu_eval.report import Report, report_json_schema

GOLDEN = Path(__file__).parent / "golden" / "report.schema.json"
SHIPPED = Path(__file__).resolve().parents[1] / "npu_eval" / "schema" / "report.schema.json"


def test_schema_matches_golden_file():
    # A failure here means the report contract changed: update docs/report.md, bump
    # schema_version if it breaks consumers, then regenerate both files.
    assert report_json_schema() == json.loads(GOLDEN.read_text())


def test_shipped_schema_is_current():
    assert json.loads(SHIPPED.read_text()) == json.loads(GOLDEN.read_text())


def test_report_round_trips_through_json():
    r = Report(task="t", kernel="k.cpp", status="mismatch",
               diagnostics=[{"file": "k.cpp", "line": 3, "column": 5, "end_line": 3, "end_column": 9,
                             "severity": "error", "code": "mismatch", "message": "m", "block": 2}],
               correctness={"trials": 5, "passed": 4, "max_abs_err": 0.5, "mean_rel_err": 0.01,
                            "max_rel_err": 0.2, "first_mismatch": {"index": 7, "got": 1.0, "expected": 2.0,
                                                                   "block": 2, "line": 40}})
    again = Report.model_validate_json(r.model_dump_json())
    assert again == r
    assert again.schema_version == 1
    assert again.correctness.first_mismatch.line == 40
