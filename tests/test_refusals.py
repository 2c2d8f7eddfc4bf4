"""What the emulator cannot run is one line (at most 200 characters) naming what it is and what to
do: a cube API, an Ascend 950-only API, HCCL, a CANN-only library, a host library; a misspelt
AscendC name gets the nearest emulated names. What a name is comes from asc-devkit's include/ and
docs (npu_eval/api_classes_table.py, generated)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sage_npu.npu_eval import api_classes, compile_errors, refusals

REPO = Path(__file__).resolve().parents[1]


def gcc(file: str, line: int, message: str) -> str:
    return f"{file}: In function 'void k()':\n{file}:{line}:5: error: {message}\n"


def parse_one(tmp_path: Path, message: str, source: str = "int main() {}\n") -> compile_errors.CompileDiagnostic:
    src = tmp_path / "k.asc"
    src.write_text(source)
    diags = compile_errors.parse(gcc(str(src), 3, message), {str(src.resolve())}, (str(src), 1))
    assert len(diags) == 1, diags
    d = diags[0]
    assert len(d.message) <= refusals.MAX_CHARS and "\n" not in d.message, d.message
    return d


@pytest.mark.parametrize("message, code, words", [
    ("\u2018MmadBitMode\u2019 is not a member of \u2018AscendC\u2019", "not-emulated", ["MmadBitMode", "cube"]),
    ("'LoadDataWithStride' in namespace 'AscendC' does not name a type", "not-emulated",
     ["LoadDataWithStride", "cube"]),
    ("'RegTensor' is not a member of 'AscendC'", "not-emulated", ["RegTensor", "Ascend 950"]),
    ("'HcclHandle' was not declared in this scope", "not-emulated", ["HcclHandle", "HCCL"]),
    ("'DataCpy' is not a member of 'AscendC'", "compile-error", ["did you mean DataCopy"]),
    ("'Nonexistent' is not a member of 'AscendC'", "compile-error", ["AscendC::Nonexistent", "spelling"]),
    ("aclnn/aclnn_base.h: No such file or directory", "not-emulated", ["aclnn", "CANN"]),
    ("acl/acl_op_compiler.h: No such file or directory", "not-emulated", ["single-operator API"]),
    ("graph/graph.h: No such file or directory", "not-emulated", ["graph engine"]),
    ("lib/matmul_intf.h: No such file or directory", "not-emulated", ["matmul_intf.h", "cube"]),
    ("gflags/gflags.h: No such file or directory", "compile-error", ["host library"]),
    ("'lenght' was not declared in this scope", "compile-error", ["'lenght' was not declared"]),
])
def test_each_refusal_is_one_line_naming_what_it_is(tmp_path, message, code, words):
    d = parse_one(tmp_path, message)
    assert d.code == code and d.line == 3, d
    for w in words:
        assert w in d.message, d.message


def test_a_failed_build_that_uses_the_cube_unit_is_one_refusal_at_the_first_cube_use(tmp_path):
    source = ("#include \"kernel_operator.h\"\n"
              "// Mmad in a comment does not count\n"
              "struct Own { void Iterate(); };\n"
              "__aicore__ void k() {\n"
              "    own.Iterate();\n"            # a member call is anyone's
              "    AscendC::LoadDataWithStride(a, b, i, p);\n"
              "    AscendC::MmadBitMode(c, a, b, p);\n"
              "}\n")
    src = tmp_path / "mm.asc"
    src.write_text(source)
    out = gcc(str(src), 5, "'IsSameType' was not declared in this scope") + gcc(str(src), 7, "something else")
    diags = compile_errors.parse(out, {str(src.resolve())}, (str(src), 1))
    assert [(d.line, d.code) for d in diags] == [(6, "not-emulated")], diags
    assert "cube" in diags[0].message and "LoadDataWithStride" in diags[0].message
    assert len(diags[0].message) <= refusals.MAX_CHARS


def test_the_refusal_names_the_cube_api_the_compiler_could_not_find_not_the_users_own_names(tmp_path):
    # asc-devkit's data_copy_l0c2gm defines its own C0_SIZE (a name CANN's Matmul headers also have)
    # and fails on a cube API sage-npu lacks (here MmadBitMode), further down.
    source = ("#include \"kernel_operator.h\"\n"
              "constexpr uint32_t C0_SIZE = 32;\n"
              "uint32_t CeilAlign(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }\n"
              "__aicore__ void k() {\n"
              "    AscendC::MmadBitMode(c, a, b, p);\n"
              "}\n")
    src = tmp_path / "dc.asc"
    src.write_text(source)
    out = gcc(str(src), 5, "\u2018MmadBitMode\u2019 is not a member of \u2018AscendC\u2019")
    diags = compile_errors.parse(out, {str(src.resolve())}, (str(src), 1))
    assert [(d.line, d.code) for d in diags] == [(5, "not-emulated")], diags
    assert "MmadBitMode" in diags[0].message
    # the source scan (the fallback when no message names a cube API) skips the user's own names too
    assert refusals.cube_use({"dc.asc": source.replace("AscendC::MmadBitMode(c, a, b, p);", "")}) is None


def test_a_cube_api_in_a_branch_the_build_does_not_select_is_not_refused(tmp_path):
    # asc-devkit samples choose code per architecture; a 910B build (-D__NPU_ARCH__=2201) never sees
    # the other branch, so its vector compile error is the user's own, not a cube refusal.
    source = ("#include \"kernel_operator.h\"\n"
              "__aicore__ void k() {\n"
              "#if __NPU_ARCH__ == 3101\n"
              "    AscendC::AdjustBaseMNK(a);\n"
              "#else\n"
              "    int x = 1\n"
              "#endif\n"
              "}\n")
    src = tmp_path / "arch.asc"
    src.write_text(source)
    out = gcc(str(src), 6, "expected \u2018,\u2019 or \u2018;\u2019 before \u2018}\u2019 token")
    files, fallback = {str(src.resolve())}, (str(src), 1)
    flags = compile_errors.flag_defines(["-O0", "-D__NPU_ARCH__=2201", "-DASCENDC_CPU_DEBUG"])
    assert flags == {"__NPU_ARCH__": "2201", "ASCENDC_CPU_DEBUG": "1"}
    assert [(d.line, d.code) for d in compile_errors.parse(out, files, fallback, flags)] == [(6, "compile-error")]
    other = compile_errors.parse(out, files, fallback, {"__NPU_ARCH__": "3101"})
    assert [(d.line, d.code) for d in other] == [(4, "not-emulated")] and "AdjustBaseMNK" in other[0].message


def test_a_vector_kernel_that_fails_keeps_its_own_errors(tmp_path):
    src = tmp_path / "v.asc"
    src.write_text("struct Matrix { void Wait(); };\nvoid k() { m.Wait(); AscendC::TPosition::VECIN; }\n")
    diags = compile_errors.parse(gcc(str(src), 2, "expected ';' before '}' token"), {str(src.resolve())},
                                 (str(src), 1))
    assert [d.code for d in diags] == ["compile-error"]


def test_cube_positions_mark_a_cube_kernel():
    use = refusals.cube_use({"k.asc": "int a;\nTQue<TPosition::CO2, 1> q;\n"})
    assert use is not None and use.line == 2 and use.name == "TPosition::CO2"
    assert refusals.cube_use({"k.asc": "TQue<TPosition::A1, 1> a;\nTQue<TPosition::CO1, 1> c;\n"}) is None


def test_did_you_mean_offers_the_nearest_emulated_names():
    assert refusals.did_you_mean("DataCpy")[0] == "DataCopy"
    assert "WholeReduceSum" in refusals.did_you_mean("WholeReduceSun")
    assert refusals.did_you_mean("Zzzzqqq") == []


def test_the_classification_reads_header_paths_and_doc_folders():
    headers = [("include/basic_api/kernel_operator_mm_intf.h", "void Mmad(); struct SharedThing;"),
               ("include/basic_api/kernel_operator_vec_binary_intf.h", "struct SharedThing; void NewVecOp();"),
               ("include/basic_api/reg_compute/kernel_reg_compute_intf.h", "void RegOnly();"),
               ("include/adv_api/hccl/hccl.h", "class HcclThing;")]
    pages = [("docs/zh/api/SIMD-API/基础API/Memory矢量计算/Foo.md",
              '# FooOnly950\n<!-- npu="950" -->\n- Ascend 950：支持\n<!-- npu="910b" -->\n- Atlas A2：不支持\n'),
             ("docs/zh/api/SIMD-API/基础API/Memory矢量计算/Bar.md",
              '# Bar\\_Vec\n<!-- npu="910b" -->\n- Atlas A2：支持\n')]
    table = api_classes.classify(headers, pages, known={"Known"})
    assert table["Mmad"][0] == "cube" and table["SharedThing"][0] == "missing"
    assert table["RegOnly"][0] == "ascend950" and table["HcclThing"][0] == "hccl"
    assert table["NewVecOp"] == ("missing", "include/basic_api/kernel_operator_vec_binary_intf.h")
    assert table["FooOnly950"][0] == "ascend950" and table["Bar_Vec"][0] == "missing"


def test_the_generated_table_knows_the_cube_apis_and_headers():
    for name in ("MmadBitMode", "LoadDataWithStride", "SetSplitRange", "SetHF32Mode", "Conv3D"):
        hit = api_classes.lookup(name)
        assert hit is not None and hit.kind == "cube", (name, hit)
    hit = api_classes.header("lib/matmul_intf.h")
    assert hit is not None and hit.kind == "cube" and hit.where == "include/adv_api/matmul/matmul_intf.h"
    for name in ("DataCopy", "Mmad", "LoadData", "Fixpipe", "LoadData2DParams", "LoadData3DParamsV2", "SetFmatrix",
                 "Matmul", "REGIST_MATMUL_OBJ", "TCubeTiling", "MatmulType", "IterateAll", "IterateBatch",
                 "IterateNBatch", "MatmulShapeParams", "MatmulApiStaticTiling", "GetMatmulApiTiling",
                 "InitConstValueParams", "LoadData2DParamsV2", "MmadWithSparse", "LoadDataWithSparse",
                 "SetSparse", "SetSparseIndex", "SparseMatmulType"):
        assert api_classes.lookup(name) is None, name  # emulated


@pytest.mark.skipif(not os.environ.get("SAGE_NPU_ASC_DEVKIT"),
                    reason="set SAGE_NPU_ASC_DEVKIT to an asc-devkit checkout or bare mirror to check the table")
def test_the_table_is_current_with_asc_devkit():
    text = api_classes.generate(Path(os.environ["SAGE_NPU_ASC_DEVKIT"]))
    assert text == (REPO / "npu_eval" / "api_classes_table.py").read_text(), (
        "regenerate: python -m sage_npu.npu_eval.api_classes $SAGE_NPU_ASC_DEVKIT > npu_eval/api_classes_table.py")
