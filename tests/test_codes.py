"""One registry of diagnostic codes (npu_eval/codes.py): the Report accepts only its codes, the
emulator's C++ side spells only its codes, and docs/diagnostic-codes.md is generated from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from sage_npu.npu_eval.codes import CODES, codes_markdown
from sage_npu.npu_eval.report import Diagnostic

REPO = Path(__file__).resolve().parents[1]
INCLUDE = REPO / "npu_eval" / "sim" / "include"
# A code passed to one of the emulator's reporting functions: fail("ub-out-of-bounds", ...),
# record_fault("flag-deadlock", ...), host_report("acl-error", ...), ...
_CXX_CODE = re.compile(r'\b(\w+)\(\s*"([a-z]+(?:-[a-z]+)+)"')


def cxx_codes() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for header in INCLUDE.rglob("*.h"):
        for i, line in enumerate(header.read_text(errors="replace").splitlines(), 1):
            for m in _CXX_CODE.finditer(line):
                found.setdefault(m.group(2), []).append(f"{header.relative_to(INCLUDE)}:{i} {m.group(1)}")
    return found


def test_every_code_the_emulator_reports_is_registered():
    found = cxx_codes()
    assert len(found) >= 10, f"the scan found too few codes ({sorted(found)}): did the reporting calls change?"
    unknown = {c: where for c, where in found.items() if c not in CODES}
    assert not unknown, f"codes spelt in the C++ headers but not in npu_eval/codes.py: {unknown}"


def test_registered_emulator_codes_are_reported_somewhere():
    found = cxx_codes()
    missing = [c.code for c in CODES.values() if c.origins == ("emulator",) and c.code not in found]
    assert not missing, f"registered as emulator codes but no header reports them: {missing}"


def test_report_rejects_an_unregistered_code():
    ok = dict(file="k.cpp", line=1, end_line=1, end_column=2, severity="error", message="m")
    assert Diagnostic(**ok, code="gm-race").code == "gm-race"
    with pytest.raises(ValidationError):
        Diagnostic(**ok, code="gm-racy")


def test_docs_table_is_generated_from_the_registry():
    doc = REPO / "docs" / "diagnostic-codes.md"
    assert doc.read_text() == codes_markdown(), (
        "docs/diagnostic-codes.md is stale: python -m sage_npu.npu_eval.codes > docs/diagnostic-codes.md")
    for code in CODES:
        assert f"`{code}`" in doc.read_text()
