"""Source-level checks: raw GM pointer accesses are flagged, GlobalTensor use is not."""

from pathlib import Path

from sage_npu.npu_eval.analysis import analyze


def raw_gm_accesses(src: bytes):
    return [f for f in analyze(src) if f.code == "raw-gm-access"]

KERNEL = b"""\
extern "C" __global__ __aicore__ void k(GM_ADDR x, __gm__ float* y, uint32_t n) {
    __gm__ float* p = (__gm__ float*)x;
    float a = p[3];
    y[1] = a;
    float b = ((__gm__ half*)x)[2];
    float local[4];
    local[1] = *y;
    float* q = local;
    q[0] = 1;
    AscendC::GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x + 4, 16);
    float c = g.GetValue(0);
}
"""


def test_raw_gm_accesses_are_flagged_at_their_lines():
    found = {f.line: f for f in raw_gm_accesses(KERNEL)}
    assert set(found) == {3, 4, 5, 7}
    assert all(f.code == "raw-gm-access" and f.severity == "warning" for f in found.values())
    assert found[3].column == 15 and "`p[3]`" in found[3].message
    assert "GlobalTensor" in found[4].message


def test_examples_use_the_api_not_raw_pointers():
    examples = Path(__file__).resolve().parents[1] / "examples" / "tasks"
    for kernel in examples.glob("*/*.cpp"):
        assert raw_gm_accesses(kernel.read_bytes()) == [], kernel


def test_report_carries_raw_access_warning(evaluator, tmp_path):
    src = (Path(__file__).resolve().parents[1] / "examples/tasks/add_custom/add_custom.cpp").read_text()
    raw_read = "    if (((__gm__ half*)z)[0] > half(1e4f)) op.Process();"
    src = src.replace("    op.Process();", "    op.Process();\n" + raw_read)
    d = tmp_path / "t"
    d.mkdir()
    for f in (Path(__file__).resolve().parents[1] / "examples/tasks/add_custom").iterdir():
        (d / f.name).write_text(f.read_text() if f.name != "add_custom.cpp" else src)
    r = evaluator.evaluate(d).report
    assert r.status == "correct"
    raw = [x for x in r.diagnostics if x.code == "raw-gm-access"]
    assert len(raw) == 1 and raw[0].file == str(d / "add_custom.cpp")
