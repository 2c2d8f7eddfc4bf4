"""api-unsupported: each API's chip support comes from the supported-products table of its
asc-devkit doc page (npu_eval/api_support_table.py, generated); a kernel calling an API its chip
lacks gets an error at the call, and the evaluation stops before the build, as the chip's
compiler would."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from sage_npu.cli import main
from sage_npu.npu_eval.analysis import analyze
from sage_npu.npu_eval.api_support import generate, page_support, table, unsupported
from sage_npu.npu_eval.evaluate import evaluate
from sage_npu.npu_eval.settings import EvalSettings

REPO = Path(__file__).resolve().parents[1]
PAD = REPO / "examples" / "tasks" / "mul_pad_tail"

PAGE = """# DataCopyPad（GMToUB非对齐数据搬运）<a name="x"></a>

## 产品支持情况<a name="y"></a>

### 不含mode模板参数的函数原型

<!-- npu="910b" id3 -->
- Atlas A2 训练系列产品/Atlas A2 推理系列产品：支持
<!-- end id3 -->
<!-- npu="310p" id5 -->
- Atlas 推理系列产品AI Core：不支持
<!-- end id5 -->
<!-- npu="310p" id6 -->
- Atlas 推理系列产品Vector Core：不支持
<!-- end id6 -->

### 含mode模板参数的函数原型

<!-- npu="910b" id10 -->
- Atlas A2 训练系列产品/Atlas A2 推理系列产品：不支持
<!-- end id10 -->
"""


def test_a_page_gives_its_api_and_each_familys_support():
    # A family is supported when any of its lines says so (the A2 line of the second prototype does not).
    assert page_support(PAGE) == ("DataCopyPad", {910: True, 310: False})
    assert page_support("# 概述\n\nno table") == (None, {})


def test_the_table_records_each_api_with_its_pages():
    t = table()
    pad = t["DataCopyPad"]
    assert 310 in pad.unsupported and 910 in pad.supported
    assert any(p.endswith("DataCopyPad（GMToUB非对齐数据搬运）.md") for p in pad.pages)
    assert all(p.startswith("docs/zh/api/SIMD-API/") for s in t.values() for p in s.pages)
    assert 910 in t["Add"].supported and 310 in t["Add"].supported
    assert unsupported("DataCopyPad", 310) is pad and unsupported("DataCopyPad", 910) is None
    assert unsupported("NoSuchApi", 310) is None


@pytest.mark.skipif(not os.environ.get("SAGE_NPU_ASC_DEVKIT"),
                    reason="set SAGE_NPU_ASC_DEVKIT to an asc-devkit checkout or bare mirror to check the table")
def test_the_table_is_current_with_asc_devkit():
    text = generate(Path(os.environ["SAGE_NPU_ASC_DEVKIT"]))
    assert text == (REPO / "npu_eval" / "api_support_table.py").read_text(), (
        "regenerate: python -m sage_npu.npu_eval.api_support $SAGE_NPU_ASC_DEVKIT > npu_eval/api_support_table.py")


def test_datacopypad_on_a_310p_is_an_error_at_its_line():
    src = (PAD / "mul_pad_tail.cpp").read_text()
    pads = [i for i, t in enumerate(src.splitlines(), 1) if "DataCopyPad(" in t]
    found = [f for f in analyze(src, "310P3") if f.code == "api-unsupported"]
    assert [f.line for f in found] == pads and all(f.severity == "error" for f in found)
    assert "DataCopyPad is not available on 310P3" in found[0].message and "DataCopyPad（" in found[0].message
    assert not [f for f in analyze(src, "910B2") if f.code == "api-unsupported"]


def test_evaluate_stops_before_the_build_on_a_chip_without_the_api(tmp_path):
    task = tmp_path / "mul_pad_tail"
    shutil.copytree(PAD, task, ignore=shutil.ignore_patterns("build", ".sage"))
    r = evaluate(task, EvalSettings(chip="310P3", trials=1))
    assert r.status == "compile_error" and r.chip == "310P3" and r.correctness is None
    lacking = [d for d in r.diagnostics if d.code == "api-unsupported"]
    assert lacking and all(d.severity == "error" and d.file == str(task / "mul_pad_tail.cpp") for d in lacking)
    assert len({(d.code, d.line) for d in r.diagnostics}) == len(r.diagnostics)  # the static pass adds no twin


def test_a_kernel_alone_with_an_api_its_chip_lacks_exits_one(tmp_path, capsys):
    k = tmp_path / "mul_pad_tail.cpp"
    k.write_text((PAD / "mul_pad_tail.cpp").read_text())
    assert main(["eval", str(k), "--chip", "310P3", "--json"]) == 1
    r = json.loads(capsys.readouterr().out)
    assert r["status"] == "compile_error" and {d["code"] for d in r["diagnostics"] if d["severity"] == "error"} == {
        "api-unsupported"}
    assert main(["eval", str(k), "--json"]) == 0  # on the default 910B2 it compiles
    assert json.loads(capsys.readouterr().out)["status"] == "compiled"
