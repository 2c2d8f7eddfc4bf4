"""The evaluation pipeline end to end on variations of the add example: the task format's
rules (DESIGN section 3), host.py and reference.py errors at their lines, compile errors
condensed at the user's line, and tiling passed by value or through GM."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"

ADD = EXAMPLES / "add_custom"


def make_task(tmp_path: Path, name: str = "t", *, kernel: str | None = None, host: str | None = None,
              reference: str | None = None) -> Path:
    d = tmp_path / name
    shutil.copytree(ADD, d)
    if kernel is not None:
        (d / "add_custom.cpp").write_text(textwrap.dedent(kernel))
    if host is not None:
        (d / "host.py").write_text(textwrap.dedent(host))
    if reference is not None:
        (d / "reference.py").write_text(textwrap.dedent(reference))
    return d


def line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")


def diag(report, code):
    found = [d for d in report.diagnostics if d.code == code]
    assert found, f"no {code} diagnostic in {report.diagnostics}"
    return found[0]


def test_add_example_is_correct(evaluator):
    r = evaluator.evaluate(ADD).report
    assert r.status == "correct", r.diagnostics
    assert r.correctness.trials == 3 and r.correctness.passed == 3
    assert r.backend == "sim" and r.chip == "910B2"


def test_host_that_precomputes_the_answer_is_rejected(evaluator, tmp_path):
    d = make_task(tmp_path, host="""\
        import torch
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x, y):
            z = x + y  # the answer, computed on the host
            return Launch(kernel="add_custom", block_dim=8,
                          args=[x, y, z, Tiling(totalLength=x.numel(), tileNum=8)], outputs=[z])
        """)
    r = evaluator.evaluate(d).report
    assert r.status == "harness_error"
    d0 = diag(r, "host-error")
    assert "computed" in d0.message
    assert d0.file == str(d / "host.py") and d0.line == line_of(d / "host.py", "return Launch")


def test_filled_in_fresh_buffer_is_rejected(evaluator, tmp_path):
    d = make_task(tmp_path, host="""\
        import torch
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x, y):
            z = torch.empty_like(x)
            z.copy_(x + y)  # a fresh buffer, then filled with the answer
            return Launch(kernel="add_custom", block_dim=8,
                          args=[x, y, z, Tiling(totalLength=x.numel(), tileNum=8)], outputs=[z])
        """)
    assert diag(evaluator.evaluate(d).report, "host-error")


def test_kernel_that_skips_part_of_its_output_fails(evaluator, tmp_path):
    # Only 7 of 8 blocks run: torch.empty outputs are poisoned, so the gap cannot pass by luck.
    d = make_task(tmp_path, host="""\
        import torch
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x, y):
            z = torch.empty_like(x)
            return Launch(kernel="add_custom", block_dim=7,
                          args=[x, y, z, Tiling(totalLength=x.numel() // 8 * 7, tileNum=8)], outputs=[z])
        """)
    r = evaluator.evaluate(d).report
    assert r.status == "mismatch"
    mm = r.correctness.first_mismatch
    assert mm is not None and mm.line is None  # nothing wrote the element
    assert "no kernel instruction wrote" in diag(r, "mismatch").message


def test_wrong_tiling_field_is_reported_at_its_host_line(evaluator, tmp_path):
    d = make_task(tmp_path, host="""\
        import torch
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x, y):
            z = torch.empty_like(x)
            t = Tiling(totalLen=x.numel(), tileNum=8)
            return Launch(kernel="add_custom", block_dim=8, args=[x, y, z, t], outputs=[z])
        """)
    r = evaluator.evaluate(d).report
    assert r.status == "compile_error"
    d0 = diag(r, "compile-error")
    assert d0.file == str(d / "host.py") and d0.line == line_of(d / "host.py", "Tiling(totalLen")
    assert "totalLen" in d0.message


def test_wrong_argument_count_names_the_entry_signature(evaluator, tmp_path):
    d = make_task(tmp_path, host="""\
        import torch
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x, y):
            z = torch.empty_like(x)
            return Launch(kernel="add_custom", block_dim=8, args=[x, y, z], outputs=[z])
        """)
    r = evaluator.evaluate(d).report
    d0 = diag(r, "host-error")
    assert "takes 4" in d0.message and "AddTiling tiling" in d0.message


def test_unknown_kernel_name_lists_the_entries(evaluator, tmp_path):
    d = make_task(tmp_path, host="""\
        import torch
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x, y):
            z = torch.empty_like(x)
            return Launch(kernel="add", block_dim=8, args=[x, y, z, Tiling(totalLength=1, tileNum=1)],
                          outputs=[z])
        """)
    assert "entries: add_custom" in diag(evaluator.evaluate(d).report, "host-error").message


def test_host_exception_points_at_the_raising_line(evaluator, tmp_path):
    d = make_task(tmp_path, host="""\
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x, y):
            tiles = x.numel() // 0
            return None
        """)
    r = evaluator.evaluate(d).report
    d0 = diag(r, "host-error")
    assert "ZeroDivisionError" in d0.message and d0.line == 4


def test_reference_exception_is_a_reference_error(evaluator, tmp_path):
    d = make_task(tmp_path, reference="""\
        import torch

        class Model(torch.nn.Module):
            def forward(self, x, y):
                return x @ y.T.T.T.unsqueeze(5)

        def get_inputs():
            return [torch.randn(64, dtype=torch.float16), torch.randn(64, dtype=torch.float16)]

        def get_init_inputs():
            return []
        """)
    r = evaluator.evaluate(d).report
    d0 = diag(r, "reference-error")
    assert d0.file == str(d / "reference.py") and d0.line == 5


def test_input_groups_give_one_trial_per_shape_at_least(evaluator, tmp_path):
    d = make_task(tmp_path, reference="""\
        import torch

        class Model(torch.nn.Module):
            def forward(self, x, y):
                return x + y

        def get_input_groups():
            return [[torch.randn(n, dtype=torch.float16), torch.randn(n, dtype=torch.float16)]
                    for n in (8 * 2048, 8 * 4096, 8 * 1024, 8 * 512)]

        def get_init_inputs():
            return []
        """)
    r = evaluator.evaluate(d).report
    assert r.status == "correct", r.diagnostics
    assert r.correctness.trials == 4  # four groups outnumber the three default trials


def test_syntax_error_is_reported_at_its_line(evaluator, tmp_path):
    src = (ADD / "add_custom.cpp").read_text().replace("AscendC::Add(zLocal, xLocal, yLocal, tileLength);",
                                                        "AscendC::Add(zLocal, xLocal, yLocal, tileLength)")
    d = make_task(tmp_path, kernel=src)
    r = evaluator.evaluate(d).report
    assert r.status == "compile_error"
    d0 = r.diagnostics[0]
    assert d0.file == str(d / "add_custom.cpp")
    assert d0.line in (line_of(d / "add_custom.cpp", "AscendC::Add("), line_of(d / "add_custom.cpp", "outQueueZ.EnQue"))


def test_error_inside_an_api_template_lands_on_the_user_call(evaluator, tmp_path):
    # Adding a float tensor to half tensors: the mismatch is found inside the emulator's
    # template, and must be reported on the user's Add line, as one line.
    src = (ADD / "add_custom.cpp").read_text().replace(
        "AscendC::Add(zLocal, xLocal, yLocal, tileLength);",
        "AscendC::Add(zLocal, xLocal, yLocal.ReinterpretCast<float>(), tileLength);")
    d = make_task(tmp_path, kernel=src)
    r = evaluator.evaluate(d).report
    assert r.status == "compile_error"
    errs = [x for x in r.diagnostics if x.severity == "error"]
    assert errs[0].file == str(d / "add_custom.cpp")
    assert errs[0].line == line_of(d / "add_custom.cpp", "ReinterpretCast<float>")
    assert "\n" not in errs[0].message and len(errs[0].message) <= 240


def test_kernel_without_host_and_reference_says_what_to_add(evaluator, tmp_path):
    d = tmp_path / "bare"
    d.mkdir()
    shutil.copy(ADD / "add_custom.cpp", d)
    r = evaluator.evaluate(d / "add_custom.cpp").report
    assert r.status == "compiled" and not r.errors()
    assert "reference.py and host.py" in diag(r, "task-error").message
    assert "docs/task-format.md" in diag(r, "task-error").message
    # ... and is still compiled: an error shows at its line.
    k = d / "add_custom.cpp"
    k.write_text(k.read_text().replace("AscendC::Add(zLocal, xLocal, yLocal, tileLength);",
                                       "AscendC::Add(zLocal, xLocal, yLocal, tileLength, 7, 8);"))
    r = evaluator.evaluate(k).report
    assert r.status == "compile_error"
    assert diag(r, "compile-error").line == line_of(k, "AscendC::Add(")


def test_missing_path_is_a_clear_error(evaluator, tmp_path):
    r = evaluator.evaluate(tmp_path / "nope").report
    assert r.status == "harness_error" and "no such file" in diag(r, "task-error").message


GM_TILING_KERNEL = """\
#include "kernel_operator.h"

struct ScaleTiling {
    uint32_t length;
    float alpha;
};

namespace demo {
template <typename T>
__global__ __aicore__ void scale(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ScaleTiling);
    GET_TILING_DATA(t, tiling);
    uint32_t per = t.length / AscendC::GetBlockNum();
    AscendC::GlobalTensor<T> xg, yg;
    xg.SetGlobalBuffer((__gm__ T*)x + per * AscendC::GetBlockIdx(), per);
    yg.SetGlobalBuffer((__gm__ T*)y + per * AscendC::GetBlockIdx(), per);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, per * sizeof(T));
    AscendC::LocalTensor<T> v = buf.Get<T>();
    AscendC::DataCopy(v, xg, per);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::Add(v, v, v, per);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::DataCopy(yg, v, per);
}
}  // namespace demo
"""


def test_template_namespaced_entry_with_gm_tiling(evaluator, tmp_path):
    d = tmp_path / "scale"
    d.mkdir()
    (d / "scale.cpp").write_text(GM_TILING_KERNEL)
    (d / "reference.py").write_text(textwrap.dedent("""\
        import torch

        class Model(torch.nn.Module):
            def forward(self, x):
                return x + x

        def get_inputs():
            return [torch.randn(4 * 256)]

        def get_init_inputs():
            return []
        """))
    (d / "host.py").write_text(textwrap.dedent("""\
        import torch
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x):
            y = torch.empty_like(x)
            return Launch(kernel="demo::scale<float>", block_dim=4,
                          args=[x, y, Tiling(length=x.numel(), alpha=2.0)], outputs=[y])
        """))
    r = evaluator.evaluate(d).report
    assert r.status == "correct", r.diagnostics


@pytest.mark.parametrize("kernel", ["demo::scale"])
def test_template_entry_without_arguments_asks_for_them(evaluator, tmp_path, kernel):
    d = tmp_path / "scale2"
    d.mkdir()
    (d / "scale.cpp").write_text(GM_TILING_KERNEL)
    (d / "reference.py").write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                                    "        return x + x\ndef get_inputs():\n    return [torch.randn(1024)]\n")
    (d / "host.py").write_text(
        "import torch\nfrom sage_npu.npu_eval import Launch, Tiling\n\ndef launch(x):\n"
        "    y = torch.empty_like(x)\n"
        f"    return Launch(kernel={kernel!r}, block_dim=4, args=[x, y, Tiling(length=1024, alpha=1.0)],"
        " outputs=[y])\n")
    r = evaluator.evaluate(d).report
    assert "template" in diag(r, "host-error").message


def test_kernel_printf_is_captured(evaluator, tmp_path):
    src = (ADD / "add_custom.cpp").read_text().replace(
        "    op.Process();", '    op.Process();\n    AscendC::printf("block %d done\\n", (int)AscendC::GetBlockIdx());')
    d = make_task(tmp_path, kernel=src)
    r = evaluator.evaluate(d).report
    assert r.status == "correct", r.diagnostics
    assert "block 0 done" in r.stdout and "block 7 done" in r.stdout


def test_cancel_stops_an_evaluation_between_stages(evaluator, tmp_path):
    import threading

    from sage_npu.npu_eval.evaluate import Cancelled

    d = make_task(tmp_path, kernel=(ADD / "add_custom.cpp").read_text().replace(
        "    op.Process();", "    op.Process();\n    for (volatile int i = 0; i < 200000000; ++i) {}"))
    timer = threading.Timer(1.0, evaluator.cancel)
    timer.start()
    with pytest.raises(Cancelled):
        evaluator.evaluate(d)
    timer.cancel()
    assert evaluator.evaluate(ADD).report.status == "correct"  # the next evaluation is not affected


def test_ub_top_reserve_is_a_warning_and_past_the_end_an_error(evaluator, tmp_path, vadd_task):
    # 6 buffers of 8000 floats = 192000 bytes: over 184 KB, under 192 KB.
    r = evaluator.evaluate(vadd_task(tmp_path, blocks=1, tiles=1, tile=8000)).report
    assert r.status == "correct"
    w = diag(r, "ub-overflow")
    assert w.severity == "warning" and "reserve" in w.message
    r = evaluator.evaluate(vadd_task(tmp_path, blocks=1, tiles=1, tile=8200)).report
    assert r.status == "runtime_error" and diag(r, "ub-overflow").severity == "error"


def test_reference_that_allocates_too_much_is_a_clear_error(evaluator, tmp_path):
    d = make_task(tmp_path, reference="""\
        import torch

        class Model(torch.nn.Module):
            def forward(self, x, y):
                return x + y

        def get_inputs():
            hog = torch.empty(64 * 1024**3, dtype=torch.uint8)  # 64 GiB: past the worker's limit
            return [hog, hog]

        def get_init_inputs():
            return []
        """)
    r = evaluator.evaluate(d).report
    assert r.status == "harness_error"
    d0 = diag(r, "reference-error")
    assert d0.line == 8 and ("memory" in d0.message.lower() or "alloc" in d0.message.lower())
    assert evaluator.evaluate(ADD).report.status == "correct"  # the worker lives on


def test_plan_worker_has_no_network(evaluator, tmp_path):
    import os

    d = make_task(tmp_path, host="""\
        import socket
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x, y):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(2)
            s.connect(("127.0.0.1", 9))
        """)
    assert "imports socket" in diag(evaluator.evaluate(d).report, "host-error").message   # the allow-list stops it...
    strict = evaluator.settings
    evaluator.settings = strict.model_copy(update={"host_allow_list": False})  # ...and behind it, no network
    try:
        r = evaluator.evaluate(d).report
    finally:
        evaluator.settings = strict
    msg = diag(r, "host-error").message
    if os.geteuid() == 0:  # the seccomp filter refuses sockets; behind it, a network namespace without any
        assert "Operation not permitted" in msg or "Network is unreachable" in msg or "Errno 101" in msg


def test_host_outside_the_allow_list_never_runs(evaluator, tmp_path):
    d = make_task(tmp_path, host="""\
        import torch
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x, y):
            z = torch.empty_like(x)
            z.copy_(torch.add(x, y))  # smuggled: the answer copied into the output buffer
            return Launch(kernel="add_custom", block_dim=8,
                          args=[x, y, z, Tiling(totalLength=x.numel(), tileNum=8)], outputs=[z])
        """)
    r = evaluator.evaluate(d).report
    assert r.status == "harness_error"
    d0 = diag(r, "host-error")
    assert (d0.file, d0.line) == (str(d / "host.py"), 6)
    assert "allow-list" in d0.message or "may only allocate" in d0.message


RAW_ADD = """\
    #include "kernel_operator.h"

    struct AddTiling {
        uint32_t totalLength;
        uint32_t tileNum;
    };

    extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, AddTiling t)
    {
        uint32_t per = t.totalLength / AscendC::GetBlockNum();
        uint32_t start = per * AscendC::GetBlockIdx();
        for (uint32_t i = start; i < start + per; ++i) {
            ((__gm__ half*)z)[i] = ((__gm__ half*)x)[i] + ((__gm__ half*)y)[i];  // no traced copy at all
        }
    }
    """


def test_an_estimate_below_the_output_bytes_is_rejected(evaluator, tmp_path):
    d = make_task(tmp_path, kernel=RAW_ADD)
    r = evaluator.evaluate(d).report
    assert r.correctness is not None and r.correctness.passed == r.correctness.trials  # the values are right...
    assert r.status == "runtime_error"                                                # ...but it cannot count
    assert "beats the time HBM needs" in diag(r, "beyond-roofline").message
    assert diag(r, "raw-gm-access").line == line_of(d / "add_custom.cpp", "no traced copy")


# ---- the pipeline's seams: the typed plan, the Evaluation, the backend ----

def test_evaluation_carries_trial_zero_trace_and_stage_times(evaluator, tmp_path):
    ev = evaluator.evaluate(make_task(tmp_path))  # a new folder: its plan is computed, not kept
    assert ev.report.status == "correct"
    assert ev.trace is not None and ev.trace.block_dim >= 1 and ev.trace.trace.blocks
    assert ev.stages.plan_s > 0 and ev.stages.run_s > 0


def test_a_malformed_plan_worker_answer_is_a_clear_harness_error(evaluator, monkeypatch, tmp_path):
    from sage_npu.npu_eval.plan_client import PlanWorker

    # A plan whose tensor argument lacks its byte size and whose trial has no block_dim.
    bad = '{"ok": {"signature": {"kernel": "add_custom", "kinds": [], "defines": {}}, ' \
          '"trials": [{"args": [{"kind": "tensor", "role": "in", "path": "x", "dtype": "float16", ' \
          '"shape": [8]}], "outputs": [], "launch_file": "host.py", "launch_line": 3}]}}'
    monkeypatch.setattr(PlanWorker, "_exchange", lambda self, request, timeout: bad)
    r = evaluator.evaluate(make_task(tmp_path)).report  # a new folder: no kept plan to reuse
    assert r.status == "harness_error"
    msg = diag(r, "host-error").message
    assert "malformed answer" in msg and "block_dim" in msg and "bug in sage-npu" in msg


def test_plan_answer_needs_exactly_one_of_ok_and_error():
    from sage_npu.npu_eval.plan_client import PlanWorkerError, parse_answer

    with pytest.raises(PlanWorkerError, match="exactly one"):
        parse_answer("{}")
    failure = parse_answer('{"error": {"code": "reference-error", "message": "boom", "line": 4}}')
    assert failure.code == "reference-error" and failure.line == 4


def test_ascend_backend_is_a_harness_error_report_not_an_exception(tmp_path, monkeypatch):
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CANN_PACKAGE_PATH"):
        monkeypatch.delenv(var, raising=False)
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    with Evaluator(EvalSettings(backend="ascend"), scratch_root=tmp_path) as ev:
        evaluation = ev.evaluate(ADD)
    r = evaluation.report
    assert r.status == "harness_error" and r.backend == "ascend" and evaluation.trace is None
    msg = r.errors()[0].message
    assert "cannot run here" in msg and "bisheng" in msg and "NPU" in msg
