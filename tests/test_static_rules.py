"""The static rules (sage_npu.npu_eval.analysis) on small edits of real kernels,
table-driven: what each rule finds, where, what it leaves alone, and that every quick fix
produces the intended text. Every bundled example must come out clean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sage_npu.npu_eval.analysis import Edit, Finding, analyze
from sage_npu.npu_eval.analysis.model import KernelModel
from sage_npu.npu_eval.chips import chip_profile

REPO = Path(__file__).resolve().parents[1]
ADD = (REPO / "examples/tasks/add_custom/add_custom.cpp").read_text()
TBUF = (REPO / "tests/faults/bases/fma_custom/fma_custom.cpp").read_text()  # the correct_tbuf_flags case
B910 = chip_profile("910B2")
P310 = chip_profile("310P3")


def edit(src: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in src, old
        src = src.replace(old, new)
    return src


def line_of(src: str, marker: str) -> int:
    return next(i for i, ln in enumerate(src.splitlines(), 1) if marker in ln)


def apply(src: str, edits: list[Edit]) -> str:
    """Apply edits given in 1-based lines and character columns, last first."""
    lines = src.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(line: int, col: int) -> int:
        return starts[line - 1] + col - 1

    for e in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        src = src[:offset(e.line, e.column)] + e.new_text + src[offset(e.end_line, e.end_column):]
    return src


def only(findings: list[Finding], code: str) -> Finding:
    hits = [f for f in findings if f.code == code]
    assert len(hits) == 1, findings
    return hits[0]



def tiles(kb: int) -> str:
    """add_custom with two of its three double-buffered queues sized by a constant."""
    return edit(ADD, ("constexpr int32_t BUFFER_NUM = 2;",
                      f"constexpr int32_t BUFFER_NUM = 2;\nconstexpr uint32_t TILE_BYTES = {kb} * 1024;"),
                ("InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half))",
                 "InitBuffer(inQueueX, BUFFER_NUM, TILE_BYTES)"),
                ("InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(half))",
                 "InitBuffer(inQueueY, BUFFER_NUM, TILE_BYTES)"))


X_COPY = "xLocal, xGm[progress * tileLength], tileLength)"
Z_COPY = "zGm[progress * tileLength], zLocal, tileLength)"
ADD_CALL = "AscendC::Add(zLocal, xLocal, yLocal, tileLength);"
INCLUDE = '#include "kernel_operator.h"'
SCALAR_LOOP = (ADD_CALL, "for (int32_t i = 0; i < 64; i++) {\n"
                         "            zLocal.SetValue(i, xLocal.GetValue(i) + yLocal.GetValue(i));\n"
                         "        }")
SCALAR_ONCE = (ADD_CALL, "for (int32_t i = 0; i < 4; i++) {\n"
                         "            half v = xLocal.GetValue(0);\n"
                         "            AscendC::Adds(zLocal, yLocal, v, tileLength);\n"
                         "        }")
SHADOW = ((INCLUDE, INCLUDE + "\nconstexpr uint32_t N = 100;"),
          ("AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);",
           "uint32_t N = tileLength;\n        AscendC::DataCopy(xLocal, xGm[progress * tileLength], N);"))

# One scalar per row (each row reduced by vector ops in a method): the loop is not the slow part.
ROW_SUM = """\
#include "kernel_operator.h"
class KernelRowSum {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols)
    {
        this->rows = rows;
        this->cols = cols;
        xGm.SetGlobalBuffer((__gm__ float *)x, rows * cols);
        yGm.SetGlobalBuffer((__gm__ float *)y, rows);
        pipe.InitBuffer(inQueueX, 2, cols * sizeof(float));
        pipe.InitBuffer(outQueueY, 1, 64 * sizeof(float));
        pipe.InitBuffer(workBuf, cols * sizeof(float));
        pipe.InitBuffer(sumBuf, 32);
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        for (uint32_t r = 0; r < rows; r++) {
            yLocal.SetValue(r, RowSum(r));
        }
        outQueueY.EnQue(yLocal);
        yLocal = outQueueY.DeQue<float>();
        AscendC::DataCopy(yGm, yLocal, 64);
        outQueueY.FreeTensor(yLocal);
    }

private:
    __aicore__ inline float RowSum(uint32_t r)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        AscendC::DataCopy(xLocal, xGm[r * cols], cols);
        inQueueX.EnQue(xLocal);
        xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> sum = sumBuf.Get<float>();
        AscendC::ReduceSum(sum, xLocal, workBuf.Get<float>(), cols);
        inQueueX.FreeTensor(xLocal);
        AscendC::SetFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
        return sum.GetValue(0);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, 2> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, 1> outQueueY;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> workBuf, sumBuf;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t rows, cols;
};
"""
GM_SCALAR_LOOP = ("    AscendC::TPipe pipe;",
                  "    __aicore__ inline void Gather()\n    {\n"
                  "        for (uint32_t i = 0; i < rows; i++) {\n"
                  "            yGm.SetValue(i, xGm.GetValue(i * cols));\n        }\n    }\n\n    AscendC::TPipe pipe;")
CALL_SCALAR_LOOP = ("        outQueueY.EnQue(yLocal);",
                    "        for (uint32_t i = 0; i < 64; i++) {\n            yLocal(i) = yLocal(i) * 2;\n        }\n"
                    "        outQueueY.EnQue(yLocal);")

# (id, source, chip, {code: marker on the expected line}) - an empty dict means "no findings".
CASES = [
    ("example is clean", ADD, B910, {}),
    ("ub past 192 KB on 910B", tiles(50), B910, {"ub-overflow": "InitBuffer(inQueueY"}),
    ("ub into the reserved top on 910B", tiles(47), B910, {"ub-overflow": "InitBuffer(inQueueY"}),
    ("ub under 184 KB on 910B", tiles(46), B910, {}),
    ("same buffers fit a 310P", tiles(50), P310, {}),
    ("constant count off 32 bytes", edit(ADD, (X_COPY, X_COPY.replace("tileLength)", "100)"))),
     B910, {"unaligned-copy": "DataCopy(xLocal"}),
    ("#define count off 32 bytes", edit(ADD, (INCLUDE, INCLUDE + "\n#define COUNT (25 * 2)"),
                                        (Z_COPY, Z_COPY.replace("tileLength)", "COUNT)"))),
     B910, {"unaligned-copy": "DataCopy(zGm"}),
    ("aligned constant count", edit(ADD, (X_COPY, X_COPY.replace("tileLength)", "8 * 16)"))), B910, {}),
    ("a local that shadows a constant is not constant", edit(ADD, *SHADOW), B910, {}),
    ("view off a 32-byte boundary", edit(ADD, (ADD_CALL, ADD_CALL.replace("xLocal,", "xLocal[1],"))),
     B910, {"unaligned-copy": "xLocal[1]"}),
    ("view on a block boundary", edit(ADD, (ADD_CALL, ADD_CALL.replace("xLocal,", "xLocal[16],"))), B910, {}),
    ("scalar access indexed by the loop", edit(ADD, SCALAR_LOOP), B910, {"scalar-in-loop": "SetValue(i"}),
    ("scalar read of a reduction result in a loop", edit(ADD, SCALAR_ONCE), B910, {}),
    ("one scalar per row of vector work", ROW_SUM, B910, {}),
    ("scalar GM gather loop", edit(ROW_SUM, GM_SCALAR_LOOP), B910, {"scalar-in-loop": "yGm.SetValue(i"}),
    ("t(i) element loop", edit(ROW_SUM, CALL_SCALAR_LOOP), B910, {"scalar-in-loop": "yLocal(i) = "}),
    ("free missing in the class", edit(ADD, ("        inQueueY.FreeTensor(yLocal);\n", "")),
     B910, {"missing-free": "inQueueY.AllocTensor"}),
    ("single buffer in the tile loop", edit(ADD, ("BUFFER_NUM = 2;", "BUFFER_NUM = 1;")),
     B910, {"single-buffer": "InitBuffer(inQueueX"}),
    ("single buffer outside loops", edit(ADD, ("InitBuffer(inQueueX, BUFFER_NUM,", "InitBuffer(inQueueX, 1,"),
                                         ("for (int32_t i = 0; i < loopCount; i++) {", "{")), B910, {}),
    ("TBuf with flags", TBUF, B910, {}),
    ("TBuf without flags", "\n".join(ln for ln in TBUF.splitlines() if "Flag<" not in ln),
     B910, {"missing-sync": "DataCopy(xLocal"}),
]


def case(name: str) -> str:
    return next(c[1] for c in CASES if c[0] == name)


@pytest.mark.parametrize("name,src,chip,expected", CASES, ids=[c[0] for c in CASES])
def test_rule(name, src, chip, expected):
    found = analyze(src, chip)
    assert {f.code for f in found} == set(expected), [(f.code, f.line, f.message) for f in found]
    for code, marker in expected.items():
        assert only(found, code).line == line_of(src, marker), code
    assert all(f.message.strip() for f in found)


def test_ub_overflow_names_the_chip_and_the_buffers():
    f = only(analyze(tiles(50), B910), "ub-overflow")
    assert f.severity == "error"
    assert "910B2" in f.message and "inQueueX 2 x 51200 B" in f.message and "sized at run time" in f.message
    warn = only(analyze(tiles(47), B910), "ub-overflow")
    assert warn.severity == "warning" and "reserve" in warn.message and "196608" not in warn.message


def test_ub_overflow_offers_single_buffering_only_where_it_is_mechanical():
    literal = tiles(50).replace("InitBuffer(inQueueX, BUFFER_NUM", "InitBuffer(inQueueX, 2") \
                       .replace("InitBuffer(inQueueY, BUFFER_NUM", "InitBuffer(inQueueY, 2")
    f = only(analyze(literal, B910), "ub-overflow")
    assert [x.title.split(" (")[0] for x in f.fixes] == ["Use 1 buffer for inQueueX", "Use 1 buffer for inQueueY"]
    fixed = apply(literal, f.fixes[0].edits)
    assert "InitBuffer(inQueueX, 1, TILE_BYTES)" in fixed
    assert not [x for x in analyze(fixed, B910) if x.code == "ub-overflow" and x.severity == "error"]
    nbuf = "constexpr int32_t BUFFER_NUM = 2;\nconstexpr int NBUF = 2;"
    named = edit(literal, ("constexpr int32_t BUFFER_NUM = 2;", nbuf),
                 ("InitBuffer(inQueueX, 2", "InitBuffer(inQueueX, NBUF"),
                 ("InitBuffer(inQueueY, 2", "InitBuffer(inQueueY, NBUF"))
    g = only(analyze(named, B910), "ub-overflow")
    assert [x.title for x in g.fixes] == ["Set NBUF to 1 (frees 102400 bytes: inQueueX, inQueueY single-buffered)"]
    assert "constexpr int NBUF = 1;" in apply(named, g.fixes[0].edits)
    # BUFFER_NUM also divides the tile (tiling arithmetic), and at 100 KB a tile alone overflows: no fix.
    assert not only(analyze(tiles(50), B910), "ub-overflow").fixes
    assert not only(analyze(literal.replace("50 * 1024", "100 * 1024"), B910), "ub-overflow").fixes


def test_unaligned_read_offers_round_up_and_pad():
    src = case('constant count off 32 bytes')
    f = only(analyze(src, B910), "unaligned-copy")
    assert "100 half elements = 200 bytes" in f.message and "copies only 96" in f.message
    titles = [x.title for x in f.fixes]
    assert len(titles) == 2 and "112" in titles[0] and "DataCopyPad" in titles[1]
    assert "xGm[progress * tileLength], 112);" in apply(src, f.fixes[0].edits)
    padded = apply(src, f.fixes[1].edits)
    assert ("AscendC::DataCopyPad(xLocal, xGm[progress * tileLength], AscendC::DataCopyExtParams{1, 200, 0, 0, 0}, "
            "AscendC::DataCopyPadExtParams<half>{false, 0, 0, 0});") in padded
    assert f.fixes[1].preferred and not f.fixes[0].preferred
    # Applying either fix clears the finding.
    for fix in f.fixes:
        assert [x for x in analyze(apply(src, fix.edits), B910) if x.code == "unaligned-copy"] == []


def test_unaligned_write_is_never_rounded_up():
    src = case('#define count off 32 bytes')
    f = only(analyze(src, B910), "unaligned-copy")
    assert [x.title for x in f.fixes] == ["Use DataCopyPad with a 100-byte length (exactly the data, no tail dropped)"]
    assert "AscendC::DataCopyPad(zGm[progress * tileLength], zLocal, AscendC::DataCopyExtParams{1, 100, 0, 0, 0});" \
        in apply(src, f.fixes[0].edits)
    # 310P has no DataCopyPad to GM: no fix at all rather than one that does not compile.
    assert only(analyze(src, P310), "unaligned-copy").fixes == []


def test_scalar_in_loop_says_where_the_element_lives():
    f = only(analyze(case("scalar GM gather loop"), B910), "scalar-in-loop")
    assert "global memory" in f.message and f.severity == "warning"
    f = only(analyze(case("t(i) element loop"), B910), "scalar-in-loop")
    assert "`yLocal(i)` in the loop" in f.message and "of UB" in f.message


def test_missing_free_fix_restores_the_sample():
    src = case('free missing in the class')
    f = only(analyze(src, B910), "missing-free")
    assert f.severity == "warning" and "inQueueY" in f.message
    (fix,) = f.fixes
    assert fix.title == "Insert inQueueY.FreeTensor(yLocal) at the end of Compute"
    assert apply(src, fix.edits) == ADD


def test_missing_free_offers_no_fix_when_the_tensor_is_queued_again():
    src = edit(ADD, ("        inQueueX.FreeTensor(xLocal);\n", ""),
               ("inQueueX.DeQue<half>();", "inQueueX.DeQue<half>();\n        inQueueX.EnQue(xLocal);"))
    f = only(analyze(src, B910), "missing-free")
    assert f.fixes == []


def test_missing_enque_is_found_at_the_deque_and_fixed_where_the_tensor_is_filled():
    src = edit(ADD, ("        inQueueX.EnQue(xLocal);\n", ""))
    f = only(analyze(src, B910), "queue-deadlock")
    assert f.severity == "warning" and "inQueueX.DeQue" in f.message and "forever" in f.message
    assert src.splitlines()[f.line - 1].strip().startswith("AscendC::LocalTensor<half> xLocal = inQueueX.DeQue")
    (fix,) = f.fixes
    assert fix.title == "Insert inQueueX.EnQue(xLocal) at the end of CopyIn"
    fixed = apply(src, fix.edits)
    assert "        inQueueY.EnQue(yLocal);\n        inQueueX.EnQue(xLocal);\n    }" in fixed
    assert not [x for x in analyze(fixed, B910) if x.code in ("queue-deadlock", "missing-free")]
    assert not [x for x in analyze(ADD, B910) if x.code == "queue-deadlock"]


def test_single_buffer_fix_sets_the_constant_and_names_its_other_uses():
    src = case('single buffer in the tile loop')
    f = only(analyze(src, B910), "single-buffer")
    assert f.severity == "info" and "inQueueX, inQueueY and outQueueZ" in f.message
    (fix,) = f.fixes
    uses = f"lines {line_of(src, 'tileLength = blockLength')}, {line_of(src, 'loopCount = tileNum')}"
    assert "Set BUFFER_NUM to 2" in fix.title and uses in fix.title and not fix.preferred
    assert apply(src, fix.edits) == ADD


def test_single_buffer_literal_fix_and_ub_guard():
    src = edit(ADD, ("InitBuffer(inQueueX, BUFFER_NUM,", "InitBuffer(inQueueX, 1,"))
    f = only(analyze(src, B910), "single-buffer")
    assert f.fixes[0].title == "Use 2 buffers (double buffering)"
    assert "InitBuffer(inQueueX, 2," in apply(src, f.fixes[0].edits)
    # With constant sizes that would not fit twice, no fix is offered.
    big = edit(src, ("InitBuffer(inQueueX, 1, tileLength * sizeof(half))", "InitBuffer(inQueueX, 1, 100000)"))
    assert only(analyze(big, B910), "single-buffer").fixes == []


def test_tbuf_fix_inserts_flags_before_the_vector_op():
    src = case('TBuf without flags')
    f = only(analyze(src, B910), "missing-sync")
    assert "xBuf is a TBuf" in f.message and "MTE2_V" in f.message
    fixed = apply(src, f.fixes[0].edits)
    lines = fixed.splitlines()
    add = line_of(fixed, "AscendC::Add(tmp")
    assert lines[add - 3].strip() == "AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);"
    assert lines[add - 2].strip() == "AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);"
    assert [x for x in analyze(fixed, B910) if x.code == "missing-sync"] == []


def test_fault_kernels_the_rules_can_see(fault_tasks):
    assert {f.code for f in analyze((fault_tasks["queue_deadlock_alloc"] / "add_custom.cpp").read_text(), B910)} \
        == {"missing-free"}
    assert {f.code for f in analyze((fault_tasks["unaligned_ub_address"] / "diff_custom.cpp").read_text(), B910)} \
        == {"unaligned-copy"}
    correct = [k for case, task in fault_tasks.items() if case.startswith("correct_") for k in task.glob("*.cpp")]
    assert len(correct) == 2
    for kernel in correct:
        assert analyze(kernel.read_text(), B910) == [], kernel


# The examples on the cube unit (Fixpipe, Matmul, cross-core flags) are 910B kernels: the 310P has
# no such APIs, so they are checked against the 910B only.
EXAMPLE_KERNELS = sorted((REPO / "examples" / "tasks").glob("*/*.cpp"))
CUBE_KERNELS = {k for k in EXAMPLE_KERNELS if re.search(r"\b(Fixpipe|Mmad|CrossCore\w+)\(|matmul_intf", k.read_text())}
CHIP_KERNELS = [pytest.param(k, chip, id=f"{cid}-{k.parent.name}") for cid, chip in (("910B2", B910), ("310P3", P310))
                for k in EXAMPLE_KERNELS if chip is B910 or k not in CUBE_KERNELS]


def test_the_cube_examples_are_the_matmul_ones():
    names = {k.parent.name for k in CUBE_KERNELS}
    assert names == {"matmul_basic", "matmul_basic_hp", "matmul_adv", "matmul_bias_relu", "matmul_relu_mix",
                     "batch_matmul_adv", "attention_fwd_mix", "quant_grouped_matmul"}


@pytest.mark.parametrize(("kernel", "chip"), CHIP_KERNELS)
def test_examples_have_no_warnings(kernel, chip):
    found = analyze(kernel.read_text(), chip)
    # DataCopyPad is an A2 (910B) API: on a 310P its calls are api-unsupported, and nothing else is wrong.
    lacking = {f.line for f in found if f.code == "api-unsupported"}
    pads = {i for i, t in enumerate(kernel.read_text().splitlines(), 1) if "DataCopyPad(" in t}
    assert lacking == (pads if chip is P310 else set())
    assert [f for f in found if f.severity in ("error", "warning") and f.code != "api-unsupported"] == []
    # The only hint allowed on an example: the deliberately single-buffered first draft.
    hints = {(kernel.parent.name, f.code) for f in found if f.code != "api-unsupported"}
    assert hints <= {("vadd_naive", "single-buffer")}


CONSTANTS = [
    ("100", 100), ("0x20", 32), ("100u", 100), ("64 * sizeof(half)", 128), ("sizeof(float) * 3", 12),
    ("static_cast<uint32_t>(3)", 3), ("uint32_t(5)", 5), ("(uint32_t)7", 7), ("(N + 15) / 16 * 16", 112),
    ("BLOCK_FLOATS", 8), ("-7 / 2", -3), ("-7 % 2", -1), ("1 << 4", 16), ("TWICE", 200), ("AscendC::ONE_BLK_SIZE", 32),
    ("K::M", 4), ("N > 50 ? 1 : 2", 1), ("sizeof(x)", None), ("tileLength", None), ("N / 0", None), ("SHADOWED", None),
    ("CYCLE", None), ("1.5", None),
]
PROBE = """\
constexpr uint32_t N = 100;
constexpr uint32_t BLOCK_FLOATS = 32 / sizeof(float);
#define TWICE (N * 2)
struct K { static constexpr uint32_t M = 4; };
const int SHADOWED = 3;
const int CYCLE = CYCLE2;
const int CYCLE2 = CYCLE;
void f(uint32_t tileLength, float x) {
    int SHADOWED = tileLength;
    auto probe = (EXPR);
}
"""


@pytest.mark.parametrize("expr,value", CONSTANTS, ids=[c[0] for c in CONSTANTS])
def test_constant_evaluation(expr, value):
    m = KernelModel(PROBE.replace("EXPR", expr))
    (probe,) = m.decls["probe"]
    assert m.const_value(probe.value) == value


def test_half_typed_kernels_trip_no_rule(caplog):
    """While typing, the buffer is mostly broken C++: every rule must cope (a rule that raises is
    logged and skipped, which this treats as a failure)."""
    sources = [ADD, TBUF, ROW_SUM, case("single buffer in the tile loop"), case("TBuf without flags")]
    with caplog.at_level("ERROR", logger="sage_npu.server.static"):
        for src in sources:
            for cut in range(0, len(src), 97):
                analyze(src[:cut], B910)
                analyze(src[:cut] + src[cut + 40:], P310)  # a hole in the middle
    assert not caplog.records, caplog.records[0].getMessage()


POOLS = """\
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void pools(GM_ADDR x)
{
    AscendC::TPipe pipe;
    AscendC::TBufPool<AscendC::TPosition::VECCALC> pool;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> q1, q2, q3;
    pipe.InitBufPool(pool, 96 * 1024);
    pool.InitBuffer(q1, 1, 64 * 1024);   // inside the pool: the pool's 96 KB hold them, reused after Reset
    pool.InitBuffer(q2, 1, 64 * 1024);
    pool.InitBuffer(q3, 1, 64 * 1024);
}
"""


def test_buffers_inside_a_tbufpool_count_once_as_the_pool():
    assert not [f for f in analyze(POOLS, B910) if f.code == "ub-overflow"]
    big = edit(POOLS, ("pipe.InitBufPool(pool, 96 * 1024);", "pipe.InitBufPool(pool, 200 * 1024);"))
    f = only(analyze(big, B910), "ub-overflow")
    assert f.line == line_of(big, "InitBufPool") or "pool" in f.message
