"""Custom-operator projects as msopgen lays them out (issue 17): op_host/<op>.cpp's TilingFunc, compiled
against the emulated CANN host headers and run in the sandbox, gives each trial's blockDim, tiling key,
workspace and tiling bytes; no host.py. The bundled example (examples/tasks/axpy_op) is evaluated by
test_examples.py; here its tiling is read back, a MultiKernelBench-style candidate is laid out as that
benchmark's pipeline does and evaluated, and a user's mistakes get one diagnostic at their line."""

from __future__ import annotations

import re
import shutil
import struct
import textwrap
from pathlib import Path

import pytest

from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.launch_plan import LaunchPlan, Output, Signature, TensorArg, TrialPlan
from sage_npu.npu_eval.op_candidate import source_line
from sage_npu.npu_eval.op_project import TILING_CAPACITY, OpFailure, run_op_tiling
from sage_npu.npu_eval.plan import MAX_ATTR_LIST, MAX_ATTR_STRING
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.task import TaskError, load_task

ROOT = Path(__file__).resolve().parents[1]
AXPY = ROOT / "examples" / "tasks" / "axpy_op"
CANDIDATE = Path(__file__).parent / "op_projects" / "leaky_relu_candidate.py"
DRIVER = ROOT / "npu_eval" / "sim" / "include" / "sage_sim" / "op_tiling_main.h"


def _plan(folder: Path, shapes: list[list[int]], n_inputs: int, dtype="float32",
          attrs: dict[str, float] | None = None) -> LaunchPlan:
    """A plan of one trial per shape (run_op_tiling reads the tensors' dtypes and shapes, and the
    values of ValueDepend inputs only: these are empty files)."""
    trials = []
    (folder / "empty.bin").write_bytes(b"")
    for shape in shapes:
        ins = [TensorArg(role="in", path=str(folder / "empty.bin"), dtype=dtype, shape=shape, bytes=0)
               for _ in range(n_inputs)]
        out = TensorArg(role="out", path="unused", dtype=dtype, shape=shape, bytes=0)
        trials.append(TrialPlan(block_dim=1, args=[*ins, out], outputs=[Output(arg=n_inputs, expected="unused",
                      dtype=dtype, shape=shape)], launch_file="reference.py", launch_line=1))
    return LaunchPlan(signature=Signature(kernel="k", kinds=[], defines={}), trials=trials, model_attrs=attrs or {})


def test_the_tiling_buffer_capacity_is_one_number_in_python_and_cpp():
    m = re.search(r"TILING_CAPACITY = (\d+) \* (\d+);", DRIVER.read_text())
    assert m is not None
    assert int(m.group(1)) * int(m.group(2)) == TILING_CAPACITY


def test_the_attribute_limits_are_one_number_in_python_and_cpp():
    text = DRIVER.read_text()
    assert f"MAX_ATTR_STRING = {MAX_ATTR_STRING};" in text and f"MAX_ATTR_LIST = {MAX_ATTR_LIST};" in text


def test_an_op_project_folder_and_its_kernel_file_load_as_the_project(tmp_path):
    task = load_task(AXPY)
    assert task.host is None and task.runnable
    assert task.op_host == AXPY / "op_host" / "axpy_custom.cpp"
    assert task.kernel == AXPY / "op_kernel" / "axpy_custom.cpp"
    assert load_task(AXPY / "op_kernel" / "axpy_custom.cpp") == task
    assert str(AXPY / "op_host" / "axpy_custom_tiling.h") in task.user_files()
    broken = tmp_path / "no_kernel"
    shutil.copytree(AXPY, broken)
    (broken / "op_kernel" / "axpy_custom.cpp").unlink()
    with pytest.raises(TaskError, match=r"op_kernel: expected one kernel file with a __global__ entry \(found none\)"):
        load_task(broken)
    (broken / "op_kernel").rmdir()
    with pytest.raises(TaskError, match=r"op_host/ has no op_kernel/ beside it"):
        load_task(broken)


def test_the_example_tiling_func_sets_blocks_keys_and_bytes_per_shape(tmp_path):
    settings = EvalSettings(cache_dir=tmp_path / "cache")
    task = load_task(AXPY)
    assert task.op_host is not None
    # The reference Model's `alpha` (self.alpha = 2.0) is the OpDef attribute's value, not its default 0.5.
    plan = _plan(tmp_path, [[16, 1024], [7, 333]], 2, attrs={"alpha": 2.0})
    ran = run_op_tiling(task.op_host, task.user_files(), plan, settings, chip_profile(settings.chip), tmp_path / "work",
                        "axpy_custom")
    assert isinstance(ran, tuple), ran
    definition, (aligned, tail) = ran
    assert definition.op == "AxpyCustom"
    assert [p.name for p in definition.inputs] == ["x", "y"] and [p.name for p in definition.outputs] == ["z"]
    assert definition.socs == ["ascend910b"] and definition.tiling
    assert [(c.op, c.type, c.bytes) for c in definition.classes] == [("AxpyCustom", "optiling::AxpyCustomTilingData",
                                                                      16)]
    assert (aligned.block_dim, aligned.key, aligned.status) == (16, 1, 0)
    assert struct.unpack("<IIIf", bytes.fromhex(aligned.bytes)) == (16384, 1024, 1024, 2.0)
    # 2331 floats over 3 blocks: 777 each, rounded up to whole 32-byte blocks.
    assert (tail.block_dim, tail.key, tail.data_size, tail.workspaces) == (3, 2, 16, [0])
    assert struct.unpack("<IIIf", bytes.fromhex(tail.bytes)) == (2331, 784, 1024, 2.0)


LEAKY_REFERENCE = """\
import torch


class Model(torch.nn.Module):  # MultiKernelBench's slope, not the candidate OpDef's default 0.1
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, self.negative_slope)


def get_input_groups():
    return [[torch.randn(8, 1024, dtype=torch.float16)], [torch.randn(8, 1000, dtype=torch.float16)]]


def get_init_inputs():
    return []
"""


def test_a_multikernelbench_candidate_is_laid_out_as_its_pipeline_writes_it(tmp_path):
    shutil.copy(CANDIDATE, tmp_path / "candidate.py")
    (tmp_path / "reference.py").write_text(LEAKY_REFERENCE)
    task = load_task(tmp_path)
    project = tmp_path / ".sage" / "msop" / "candidate"
    assert (task.root, task.reference, task.host) == (tmp_path, tmp_path / "reference.py", None)
    assert (task.op_host, task.kernel) == (project / "op_host" / "leaky_relu_custom.cpp",
                                           project / "op_kernel" / "leaky_relu_custom.cpp")
    # Each file starts with a #line directive: its lines are the candidate's.
    header = (project / "op_host" / "leaky_relu_custom_tiling.h").read_text().splitlines()
    string_line = CANDIDATE.read_text().splitlines().index('host_tiling_src = """') + 1
    assert header[0] == f'#line {string_line} "{tmp_path / "candidate.py"}"'
    assert header[2] == '#include "register/tilingdata_base.h"'
    assert source_line(project / "op_host" / "leaky_relu_custom_tiling.h", 3) == (str(tmp_path / "candidate.py"),
                                                                                  string_line + 1)
    assert load_task(tmp_path / "candidate.py") == task
    # Strings the pipeline would compute are not read (the candidate is never run): one line says so.
    text = CANDIDATE.read_text().replace('kernel_src = """', 'kernel_src = "" + """', 1)
    (tmp_path / "candidate.py").write_text(text)
    with pytest.raises(TaskError, match=r"candidate.py: kernel_src must be a string literal holding the file$"):
        load_task(tmp_path)


def test_a_candidates_mistakes_are_at_the_candidates_lines(evaluator, tmp_path):
    lines = CANDIDATE.read_text().splitlines()

    def first_error(text: str, reference: str):
        task = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
        task.mkdir()
        (task / "cand.py").write_text(text)
        (task / "reference.py").write_text(reference)
        report = evaluator.evaluate(task).report
        errors = [d for d in report.diagnostics if d.severity == "error"]
        assert errors, report.status
        assert errors[0].file == str(task / "cand.py"), errors[0]
        return report.status, lines[errors[0].line - 1].strip(), errors[0].message

    # A dtype the OpDef does not take: at the candidate's Input line (in host_operator_src).
    status, line, message = first_error(CANDIDATE.read_text(), LEAKY_REFERENCE.replace("float16", "float32"))
    assert (status, line) == ("harness_error", 'this->Input("x")'), message
    # A compile error in kernel_src: at its line of the candidate.
    wrong = "AscendC::LeakyRelu(yLocal, xLocal, this->negativeSlope, n);"
    status, line, message = first_error(CANDIDATE.read_text().replace(wrong, wrong.replace("Slope", "Slop")),
                                        LEAKY_REFERENCE)
    assert (status, line) == ("compile_error", wrong) and "negativeSlop" in message, message


def test_a_multikernelbench_candidate_evaluates_as_its_op_project(evaluator, tmp_path):
    task = tmp_path / "leaky"
    task.mkdir()
    shutil.copy(CANDIDATE, task / "leaky_relu_candidate.py")
    (task / "reference.py").write_text(LEAKY_REFERENCE)
    report = evaluator.evaluate(task).report
    summary = "\n".join(f"{d.file}:{d.line}: [{d.code}] {d.message}" for d in report.diagnostics)
    assert report.status == "correct", summary
    assert report.correctness is not None and report.correctness.passed == report.correctness.trials == 3


# The example's op_host with a TilingFunc whose mistakes depend on the first input's leading dim, so
# one build serves every case.
FAULTY_FUNC = """\
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    AxpyCustomTilingData tiling;
    int64_t rows = context->GetInputShape(0)->GetOriginShape().GetDim(0);
    if (rows == 1) {
        return ge::GRAPH_FAILED;
    }
    if (rows != 2) {
        context->SetBlockDim(1);
    }
    tiling.set_totalLength(context->GetInputShape(0)->GetOriginShape().GetShapeSize());
    tiling.set_blockLength(tiling.get_totalLength());
    tiling.set_tileLength(1024);
    tiling.set_alpha(0.5f);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(),
                        rows == 3 ? 8 : context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(rows == 4 ? 4 : tiling.GetDataSize());
    context->GetWorkspaceSizes(1)[0] = 0;
    return ge::GRAPH_SUCCESS;
}
"""
# Its infer-shape function gives a 5-row input a 1-row output.
FAULTY_INFER = """\
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    if (context->GetInputShape(0)->GetDim(0) == 5) context->GetOutputShape(0)->SetDim(0, 1);
"""
FAULTY_HOST = re.sub(r"static ge::graphStatus TilingFunc.*?\n}\n", lambda m: FAULTY_FUNC,
                     (AXPY / "op_host" / "axpy_custom.cpp").read_text(), count=1, flags=re.S).replace(
    "    *context->GetOutputShape(0) = *context->GetInputShape(0);\n", FAULTY_INFER)
TILING_FUNC_LINE = FAULTY_HOST.splitlines().index(FAULTY_FUNC.splitlines()[0]) + 1
INFER_SHAPE_LINE = FAULTY_HOST.splitlines().index("static ge::graphStatus InferShape(gert::InferShapeContext* context)"
                                                  ) + 1


def _faulty(tmp_path: Path, rows: int, inputs: int = 2, host: str = FAULTY_HOST) -> Path:
    task = tmp_path / f"faulty_{rows}_{inputs}"
    shutil.copytree(AXPY, task)
    (task / "op_host" / "axpy_custom.cpp").write_text(host)
    args = ", ".join(f"torch.randn({rows}, 64)" for _ in range(inputs))
    (task / "reference.py").write_text(textwrap.dedent(f"""\
        import torch


        class Model(torch.nn.Module):
            def forward(self, *xs):
                return xs[0] + 0.5 * xs[1]


        def get_inputs():
            return [{args}]
        """))
    return task


@pytest.mark.parametrize(("rows", "message"), [
    (1, r"TilingFunc returned 0xffffffff \(not ge::GRAPH_SUCCESS\) \(trial 0, inputs \[\[1, 64\], \[1, 64\]\]\)"),
    (2, r"TilingFunc set no blockDim: call context->SetBlockDim\(n\)"),
    (3, r"the tiling struct is 16 bytes, more than the tiling buffer's 8 \(SaveToBuffer did not copy it\)"),
    (4, r"the tiling data size is 4 bytes but the kernel's GET_TILING_DATA reads 16 "
        r"\(optiling::AxpyCustomTilingData\)"),
    (5, r"^the infer-shape function gives output 'z' shape \[1, 64\] but reference.py's is \[5, 64\] \(trial 0, "),
])
def test_a_tiling_func_mistake_is_one_diagnostic_at_the_tiling_func(evaluator, tmp_path, rows, message):
    task = _faulty(tmp_path, rows)
    report = evaluator.evaluate(task).report
    assert report.status == "harness_error"
    [d] = [d for d in report.diagnostics if d.severity == "error"]
    line = INFER_SHAPE_LINE if rows == 5 else TILING_FUNC_LINE
    assert (d.file, d.line, d.code) == (str(task / "op_host" / "axpy_custom.cpp"), line, "host-error")
    assert re.search(message, d.message), d.message
    assert "\n" not in d.message


def test_an_input_count_that_disagrees_with_reference_is_reported_at_the_op_def(evaluator, tmp_path):
    task = _faulty(tmp_path, 8, inputs=3)
    report = evaluator.evaluate(task).report
    assert report.status == "harness_error"
    [d] = [d for d in report.diagnostics if d.severity == "error"]
    host = task / "op_host" / "axpy_custom.cpp"
    assert (d.file, d.code) == (str(host), "host-error")
    assert host.read_text().splitlines()[d.line - 1].strip().startswith('this->Input("x")')
    assert d.message == "AxpyCustom declares 2 inputs (x, y) but reference.py gives 3 tensors"
    # A dynamic input (a list of tensors) is refused at its line.
    dynamic = FAULTY_HOST.replace('Input("y").ParamType(REQUIRED)', 'Input("y").ParamType(DYNAMIC)')
    task = _faulty(tmp_path, 8, host=dynamic)
    [d] = [d for d in evaluator.evaluate(task).report.diagnostics if d.severity == "error"]
    assert FAULTY_HOST.splitlines()[d.line - 1].strip().startswith('this->Input("y")')
    assert d.message.startswith("'y' is ParamType(DYNAMIC), a list of tensors, which is not emulated yet")


def test_an_op_host_compile_error_is_at_its_line(evaluator, tmp_path):
    task = _faulty(tmp_path, 8, host=FAULTY_HOST.replace("tiling.set_tileLength(1024);", "tiling.set_tile(1024);"))
    report = evaluator.evaluate(task).report
    assert report.status == "compile_error"
    errors = [d for d in report.diagnostics if d.severity == "error"]
    assert errors and errors[0].file == str(task / "op_host" / "axpy_custom.cpp")
    assert FAULTY_HOST.splitlines()[errors[0].line - 1].strip() == "tiling.set_tileLength(1024);"
    assert "set_tile" in errors[0].message


WEIGHT_REFERENCE = """\
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.y = torch.nn.Parameter(torch.randn(4, 250))
        self.alpha = 2.0

    def forward(self, x):
        return x + self.alpha * self.y


def get_inputs():
    return [torch.randn(4, 250)]
"""


def test_an_op_input_the_reference_holds_as_a_weight_is_the_models_parameter(evaluator, tmp_path):
    # AxpyCustom takes x and y; this reference gives x and keeps y as its weight (as
    # MultiKernelBench's LayerNorm keeps gamma and beta), and its alpha overrides the OpDef's 0.5.
    task = tmp_path / "weighted"
    shutil.copytree(AXPY, task)
    (task / "reference.py").write_text(WEIGHT_REFERENCE)
    report = evaluator.evaluate(task).report
    summary = "\n".join(f"{d.file}:{d.line}: [{d.code}] {d.message}" for d in report.diagnostics)
    assert report.status == "correct", summary


SELECT = Path(__file__).parent / "op_projects" / "select_op"


def _select_plan(tmp_path: Path, rows: list[list[int]], attrs: dict | None = None) -> LaunchPlan:
    """SelectCustom's trials: x [6, 8] and the int64 `rows` tensor (ValueDepend: its file is read);
    y [rows[0], 8], as reference.py would give it."""
    trials = []
    for i, r in enumerate(rows):
        x, n = tmp_path / f"x{i}.bin", tmp_path / f"rows{i}.bin"
        x.write_bytes(b"\0" * 6 * 8 * 4)
        n.write_bytes(struct.pack(f"<{len(r)}q", *r))
        args = [TensorArg(role="in", path=str(x), dtype="float32", shape=[6, 8], bytes=192),
                TensorArg(role="in", path=str(n), dtype="int64", shape=[len(r)], bytes=8 * len(r)),
                TensorArg(role="out", path="unused", dtype="float32", shape=[r[0], 8], bytes=0)]
        trials.append(TrialPlan(block_dim=1, args=args, outputs=[Output(arg=2, expected="unused", dtype="float32",
                                shape=[r[0], 8])], launch_file="reference.py", launch_line=1))
    return LaunchPlan(signature=Signature(kernel="k", kinds=[], defines={}), trials=trials, model_attrs=attrs or {})


def test_string_and_list_attributes_value_depend_inputs_and_impl_op_registration_reach_the_tiling(tmp_path):
    project = tmp_path / "select_op"
    shutil.copytree(SELECT, project)
    host = project / "op_host" / "select_custom.cpp"
    settings = EvalSettings(cache_dir=tmp_path / "cache")
    chip = chip_profile(settings.chip)

    def tiling(attrs: dict | None = None):
        ran = run_op_tiling(host, {str(host)}, _select_plan(tmp_path, [[4, 9], [6, 2, 1]], attrs), settings, chip,
                            tmp_path / "work", "select_custom")
        return ran if not isinstance(ran, tuple) else (ran[0], [
            (o.block_dim, struct.unpack("<IIifiiI", bytes.fromhex(o.bytes)), o.infer) for o in ran[1]])

    definition, trials = tiling()
    # IMPL_OP_OPTILING(...).Tiling/.InferShape registered both functions; `rows` is ValueDepend.
    assert definition.tiling and definition.infer_shape
    assert [p.value_depend for p in definition.inputs] == [0, 2]
    # The OpDef's defaults: mode "mean" (2), dims {0, 1}, weights {0.5}; the ValueDepend input's
    # values reach GetData (the plain input's data stays on the device: null).
    assert [t[1] for t in trials] == [(2, 2, 1, 0.5, 4, 9, 0), (2, 2, 1, 0.5, 6, 1, 0)]
    # The infer-shape function ran on the same data: y's rows are rows[0].
    assert [t[2].shapes if t[2] else None for t in trials] == [[[4, 8]], [[6, 8]]]
    # The reference Model's attributes of the same names: a string and two lists.
    _, trials = tiling({"mode": "sum", "dims": [2.0, 0.0, 3.0], "weights": [0.25, 1.5]})
    assert trials[0][1] == (1, 3, 3, 1.75, 4, 9, 0)
    # A Model attribute whose type the OpDef's does not take: one line at that Attr.
    bad = tiling({"mode": 1.0})
    assert isinstance(bad, OpFailure)
    [d] = bad.diagnostics
    assert host.read_text().splitlines()[d.line - 1].strip().startswith('this->Attr("mode")')
    assert d.message == "attribute 'mode' is String in the OpDef but the reference Model's mode is a number"
    # A changed TilingFunc is rebuilt (the build is keyed by op_host's files).
    host.write_text(host.read_text().replace("context->SetBlockDim(1);", "context->SetBlockDim(3);"))
    _, trials = tiling()
    assert [t[0] for t in trials] == [3, 3]
