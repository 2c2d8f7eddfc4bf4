"""The performance advisor (docs/advisor.md): its counterfactual rewrites of a trace, its JSON
contract, and the planted faulty-performance tasks (tests/perf_tasks.py), where the top finding must
name the planted cause at its line with a saving within 25% of the one re-estimated after applying
the change and rebuilding."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import get_args

import pytest

from sage_npu.agent.transforms import Sources, for_finding
from sage_npu.npu_eval.advisor import (
    double_buffered,
    merged,
    single_buffered_queues,
    split_loop,
    uniform,
    vectorised,
)
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.codes import DiagnosticCode
from sage_npu.npu_eval.report import Advice, AdviceCode, AdviceFinding, Report, advice_json_schema
from sage_npu.npu_eval.trace import Rec
from tests.perf_tasks import HAND_FIXES, TASKS, hand_fix, materialise

GOLDEN = Path(__file__).parent / "golden" / "advice.schema.json"
SHIPPED = Path(__file__).resolve().parents[1] / "npu_eval" / "schema" / "advice.schema.json"
CHIP = chip_profile("910B2")
WITHIN = 0.25  # the bar: estimated saving within 25% of the rebuilt one


def rec(kind: str, pipe: str, api: str, loc: int, elems: int = 0, nbytes: int = 0, a: int = 0, b: int = 0) -> Rec:
    return Rec(kind, pipe, api, "float16", elems, nbytes, loc, a, b, (0, nbytes), (0, 0), (0, 0))


def tile_iteration(queue_slot: int = 0, n: int = 128) -> list[Rec]:
    """One single-queue tile: alloc, load, enque, deque, compute, free."""
    return [rec("alloc", "MTE2", "AllocTensor", 1, a=0, b=queue_slot), rec("I", "MTE2", "DataCopy", 2, n, 2 * n, b=1),
            rec("enque", "MTE2", "EnQue", 3, a=0, b=queue_slot), rec("deque", "V", "DeQue", 4, a=0, b=queue_slot),
            rec("I", "V", "Abs", 5, n, 2 * n), rec("free", "V", "FreeTensor", 6, a=0, b=queue_slot)]


def test_split_loop_finds_the_head_and_each_iteration():
    head = [rec("I", "S", "GlobalTensor::GetValue", 9)]
    recs = [*head, *tile_iteration(), *tile_iteration(), *tile_iteration(), rec("barrier", "S", "PipeBarrier", 10)]
    loop = split_loop(recs)
    assert loop.head == head
    assert [len(it) for it in loop.iterations] == [6, 6, 7]  # the last keeps what follows the loop
    assert uniform(loop) and loop.records() == recs


def test_double_buffered_alternates_the_slots_and_halves_split_tiles():
    recs = [r for _ in range(4) for r in tile_iteration()]
    assert single_buffered_queues(recs) == {0}
    two = double_buffered(recs, {0}, split=False)
    assert [r.b for r in two if r.kind == "alloc"] == [0, 1, 0, 1]
    assert [r.b for r in two if r.kind == "free"] == [0, 1, 0, 1]
    halves = double_buffered(recs, {0}, split=True)
    loads = [r for r in halves if r.kind == "I" and r.pipe == "MTE2"]
    assert len(loads) == 8 and {r.bytes for r in loads} == {128}
    assert single_buffered_queues(two) == set()


def test_merged_makes_fewer_longer_tiles():
    recs = [r for _ in range(8) for r in tile_iteration()]
    four = merged(recs, 4)
    loads = [r for r in four if r.kind == "I" and r.pipe == "MTE2"]
    assert [r.bytes for r in loads] == [1024, 1024] and [r.elems for r in loads] == [512, 512]
    assert len(split_loop(four).iterations) == 2
    assert merged(recs, 16) == recs  # not more than the loop has


def test_vectorised_replaces_each_scalar_run_by_one_vector_instruction():
    scalar = [rec("I", "S", "LocalTensor::GetValue", 7), rec("I", "S", "LocalTensor::SetValue", 8)] * 64
    recs = [*tile_iteration()[:3], *scalar, *tile_iteration()[3:]]
    out, per_loc = vectorised(recs)
    vec = [r for r in out if r.kind == "I" and r.api == "Muls"]
    assert len(vec) == 1 and vec[0].elems == 64 and vec[0].pipe == "V"
    assert per_loc == {7: 64, 8: 64}
    assert not any(r.pipe == "S" and r.kind == "I" for r in out)


def test_advice_schema_matches_golden_and_shipped_files():
    assert advice_json_schema() == json.loads(GOLDEN.read_text())
    assert json.loads(SHIPPED.read_text()) == advice_json_schema()


def test_advice_codes_are_registered_diagnostic_codes():
    assert set(get_args(AdviceCode)) <= set(get_args(DiagnosticCode))


def test_finding_severity_is_a_hint_under_a_tenth():
    f = AdviceFinding(code="perf-few-cores", message="m", file="host.py", line=3, saving_us=0.5, before_us=10.0,
                      after_us=9.5, change="block_dim 8 -> 48")
    assert f.severity == "hint"
    assert f.model_copy(update={"saving_us": 2.0}).severity == "info"
    r = Report(task="t", kernel="k.cpp", status="correct", advice=[f])
    assert Advice.of(Report.model_validate_json(r.model_dump_json())).findings == [f]


# ---- the planted faulty-performance tasks ----

def _apply_transform(task: Path, finding: AdviceFinding, out: Path) -> Path:
    """The planted task with the finding's change made by the offline optimizer's transform, or by
    its hand-written fix (tests/perf_tasks.py HAND_FIXES: no transform makes it)."""
    shutil.copytree(task, out)
    if task.name in HAND_FIXES:
        for name, text in hand_fix(task.name).items():
            (out / name).write_text(text)
        return out
    kernel = next(out.glob("*.cpp"))
    src = Sources(kernel.name, kernel.read_text(), (out / "host.py").read_text())
    candidate = for_finding(finding, src, CHIP)
    assert candidate is not None, finding
    files = candidate.files
    for name, text in files.items():
        (out / name).write_text(text)
    return out


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    ev = Evaluator(EvalSettings(trials=1, cache_dir=tmp_path_factory.getbasetemp() / "build-cache"))
    yield ev
    ev.close()


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"
PLANTED = {  # task -> (top finding's code, file, the planted line's text)
    "perf_single_buffer": ("perf-single-buffer", "perf_single_buffer.cpp", "constexpr int32_t BUFFER_NUM = 1;"),
    "perf_two_cores": ("perf-few-cores", "host.py", "block_dim=2,"),
    "perf_small_tiles": ("perf-small-tiles", "perf_small_tiles.cpp", "constexpr int32_t TILE_LENGTH = 256;"),
    "perf_scalar_loop": ("perf-scalar-loop", "perf_scalar_loop.cpp", "zLocal.SetValue(j,"),
    "perf_misaligned_gm": ("perf-unaligned-gm", "perf_misaligned_gm.cpp", "constexpr int32_t TILE_LENGTH = 12816;"),
    "perf_strong_barrier": ("perf-strong-barrier", "perf_strong_barrier.cpp", "AscendC::PipeBarrier<PIPE_ALL>();"),
    "perf_redundant_copy": ("perf-redundant-copy", "perf_redundant_copy.cpp",
                            "AscendC::DataCopy(xAgain, xGm[progress * TILE_LENGTH], TILE_LENGTH);"),
    # row sums of 256 floats by two WholeReduceSum passes
    "perf_slow_reduction": ("perf-slow-reduction", "perf_slow_reduction.cpp",
                            "AscendC::WholeReduceSum<float>(tmp, xLocal[r * ROW_LENGTH]"),
    # the bundled first draft: one buffer per queue, two cores and 256-element tiles, all planted
    "vadd_naive": ("perf-few-cores", "host.py", "MAX_CORES = 2"),
}
# vadd_naive's other planted causes: each finding's saving holds too, not only the top one's; and
# add_custom's one finding over 10% (eight tiles per block of 256 bytes, through host.py's tileNum)
ALSO = [("vadd_naive", "perf-small-tiles", "TILE_LENGTH = 256"),
        ("vadd_naive", "perf-single-buffer", "constexpr int32_t BUFFER_NUM = 1;"),
        ("add_custom", "perf-small-tiles", "tileNum=8")]


def test_every_planted_task_has_its_cause_and_every_hand_fix_a_task():
    """A task added to tests/perf_tasks.py without a PLANTED row would be written and never checked."""
    assert set(TASKS) <= set(PLANTED) and set(HAND_FIXES) <= set(TASKS)
    with pytest.raises(KeyError, match="for_finding makes its change"):
        hand_fix("perf_strong_barrier")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> dict[str, Path]:
    return {**materialise(tmp_path_factory.mktemp("perf-tasks")), "vadd_naive": EXAMPLES / "vadd_naive",
            "add_custom": EXAMPLES / "add_custom"}


@pytest.fixture(scope="module")
def planted_reports(quick) -> dict[Path, Report]:
    return {}


def _report(quick, cache: dict[Path, Report], task: Path) -> Report:
    if task not in cache:
        cache[task] = quick.evaluate(task).report
    return cache[task]


def _holds_after_rebuilding(quick, report: Report, finding: AdviceFinding, task: Path, out: Path) -> None:
    assert report.timing is not None
    fixed = quick.evaluate(_apply_transform(task, finding, out)).report
    assert fixed.status == "correct" and fixed.timing is not None
    rebuilt = report.timing.estimated_us - fixed.timing.estimated_us
    assert rebuilt > 0
    assert abs(finding.saving_us - rebuilt) <= WITHIN * rebuilt, (finding.saving_us, rebuilt)
    assert finding.code not in {f.code for f in fixed.advice}  # the change removed the cause


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_top_finding_names_the_planted_cause_and_its_saving_holds_after_rebuilding(name, tasks, quick,
                                                                                  planted_reports, tmp_path):
    code, file, text = PLANTED[name]
    task = tasks[name]
    report = _report(quick, planted_reports, task)
    assert report.status == "correct" and report.timing is not None, report.diagnostics
    top = report.advice[0]
    assert (top.code, Path(top.file).name) == (code, file), report.advice
    planted = Path(top.file).read_text().splitlines()[top.line - 1]
    assert text in planted, (top.line, planted)
    assert "(CPU model)" in top.message and top.before_us == pytest.approx(report.timing.estimated_us, rel=1e-3)
    _holds_after_rebuilding(quick, report, top, task, tmp_path / task.name)


@pytest.mark.parametrize(("name", "code", "text"), ALSO)
def test_every_planted_cause_of_the_bundled_examples_is_found_and_holds(name, code, text, tasks, quick, planted_reports,
                                                                   tmp_path):
    task = tasks[name]
    report = _report(quick, planted_reports, task)
    [finding] = [f for f in report.advice if f.code == code]
    assert text in Path(finding.file).read_text().splitlines()[finding.line - 1]
    _holds_after_rebuilding(quick, report, finding, task, tmp_path / task.name)


def test_the_agents_prompt_gets_the_top_findings():
    from sage_npu.agent.prompt import MAX_ADVICE, report_block

    found = [AdviceFinding(code="perf-small-tiles", message=f"finding {i}", file="/t/host.py", line=3 + i,
                           saving_us=5.0 - i, before_us=10.0, after_us=5.0 + i, change="TILE 1 -> 2")
             for i in range(MAX_ADVICE + 1)]
    block = report_block(Report(task="t", kernel="k.cpp", status="correct", advice=found))
    assert "advice [perf-small-tiles] host.py:3: finding 0" in block
    assert f"finding {MAX_ADVICE - 1}" in block and f"finding {MAX_ADVICE}" not in block


def test_bank_conflicts_are_advised_at_the_vector_instruction_only_when_they_collide():
    from sage_npu.npu_eval.advisor import AdviceInput, advise
    from sage_npu.npu_eval.costs import default_costs
    from sage_npu.npu_eval.trace import Trace

    def block(second_source: int) -> list[Rec]:
        add = Rec("I", "V", "Add", "float32", 4096, 16384, 5, 0, 0, (65536, 16384), (0, 16384),
                  (second_source, 16384))
        return [add] * 64  # vector-bound: nothing else runs

    def findings(second_source: int) -> list[AdviceFinding]:
        trace = Trace({0: block(second_source)}, {5: ("/k/kernel.cpp", 12)})
        return advise(AdviceInput(trace, 1, CHIP, default_costs(CHIP.family), Path("/k/kernel.cpp")))

    # two sources 16 KB apart start in the same bank group: every block of both collides
    [f] = [f for f in findings(16384) if f.code == "perf-bank-conflict"]
    assert (f.file, f.line) == ("/k/kernel.cpp", 12) and f.saving_us > 0.3 * f.before_us
    assert "perf-bank-conflict" not in {f.code for f in findings(16384 + 256)}  # 256 bytes off: no conflict


def test_a_finding_maps_to_the_catalogs_candidate_or_to_none():
    kernel = "constexpr int32_t BUFFER_NUM = 1;\n"
    host = "MAX_CORES = 2\nTILE_LENGTH = 256\nx = Tiling(tileNum=8)\n"
    src = Sources("k.cpp", kernel, host)

    def finding(code: AdviceCode, change: str) -> AdviceFinding:
        return AdviceFinding(code=code, message="m", file="host.py", line=1, saving_us=1.0, before_us=2.0,
                             after_us=1.0, change=change)

    assert for_finding(finding("perf-single-buffer", "double buffering (BUFFER_NUM 1 -> 2)"), src,
                       CHIP).files == {"k.cpp": "constexpr int32_t BUFFER_NUM = 2;\n"}
    assert for_finding(finding("perf-few-cores", "MAX_CORES 2 -> 48 (all of 910B2's vector cores)"), src,
                       CHIP).files["host.py"].startswith("MAX_CORES = 48\n")
    # 256 -> 8192 by the transform's own steps (x4, x4, x2); a tile count halves down to 1
    up = for_finding(finding("perf-small-tiles", "TILE_LENGTH 256 -> 8192 (32768 bytes per copy)"), src, CHIP)
    assert "TILE_LENGTH = 8192\n" in up.files["host.py"] and "k.cpp" not in up.files
    down = for_finding(finding("perf-small-tiles", "tileNum 8 -> 1 (2048 bytes per copy)"), src, CHIP)
    assert "Tiling(tileNum=1)" in down.files["host.py"]
    assert for_finding(finding("perf-scalar-loop", "one vector instruction per tile"), src, CHIP) is None
    assert for_finding(finding("perf-small-tiles", "TILE_LENGTH 256 -> 768"), src, CHIP) is None  # not a step
    # the misaligned tile length and the barrier: text edits at the finding's line of the kernel
    k = Sources("k.cpp", "constexpr int32_t TILE_LENGTH = 12816;\n    AscendC::PipeBarrier<PIPE_ALL>();\n", host)
    at = {"file": "k.cpp"}
    tile = finding("perf-unaligned-gm", "TILE_LENGTH 12816 -> 12800 (a multiple of 512 bytes)").model_copy(update=at)
    assert for_finding(tile, k, CHIP).files == {"k.cpp": k.kernel.replace("12816", "12800")}
    bar = finding("perf-strong-barrier", "SetFlag/WaitFlag<HardEvent::MTE2_V>, PipeBarrier<PIPE_V> instead of "
                  "PipeBarrier<PIPE_ALL>").model_copy(update={**at, "line": 2})
    assert for_finding(bar, k, CHIP).files["k.cpp"].splitlines()[1:] == [
        "    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);",
        "    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);", "    AscendC::PipeBarrier<PIPE_V>();"]


def test_fragmented_copies_are_advised_in_vector_kernels_only():
    from sage_npu.npu_eval.advisor import AdviceInput, advise
    from sage_npu.npu_eval.costs import default_costs
    from sage_npu.npu_eval.trace import Trace

    load = Rec("I", "MTE2", "DataCopy", "float16", 8192, 16384, 5, 0, 64, (0, 16384), (0, 0), (0, 0))
    mmad = Rec("I", "M", "Mmad", "float16", 16 * 16 * 16, 0, 6, 0, 0, (0, 0), (0, 0), (0, 0))

    def codes(recs: list[Rec]) -> set[str]:
        trace = Trace({0: recs}, {5: ("/k/kernel.cpp", 7), 6: ("/k/kernel.cpp", 8)})
        return {f.code for f in advise(AdviceInput(trace, 1, CHIP, default_costs(CHIP.family), Path("/k/kernel.cpp")))}

    assert "perf-fragmented-gm" in codes([load] * 8)   # 64 bursts of 256 bytes each
    assert "perf-fragmented-gm" not in codes([load, mmad] * 8)


def test_a_full_barrier_narrows_to_flag_pairs_or_one_pipe_and_stays_when_nothing_depends():
    from sage_npu.npu_eval.advisor import narrowed_barriers
    from sage_npu.npu_eval.protocol import EVENT_PIPES, PIPE_ALL

    def i(pipe: str, w: tuple[int, int], r: tuple[int, int], loc: int) -> Rec:
        return Rec("I", pipe, "X", "float16", 64, 128, loc, 0, 0, w, r, (0, 0))

    bar = Rec("barrier", "ALL", "PipeBarrier", "", 0, 0, 9, PIPE_ALL, 0, (0, 0), (0, 0), (0, 0))
    load, add = i("MTE2", (0, 128), (0, 0), 1), i("V", (256, 128), (0, 128), 2)
    out, per_loc, used = narrowed_barriers([load, bar, add])
    assert [r.kind for r in out] == ["I", "setflag", "waitflag", "I"] and EVENT_PIPES[out[1].a] == ("MTE2", "V")
    assert per_loc == {9: 1} and used[0][1].describe() == "SetFlag/WaitFlag<HardEvent::MTE2_V>"
    # two vector instructions: a barrier on the vector pipe
    out, _, used = narrowed_barriers([add, bar, i("V", (512, 128), (256, 128), 3)])
    assert [(r.kind, r.pipe) for r in out][1] == ("barrier", "V") and used[0][1].describe() == "PipeBarrier<PIPE_V>"
    # nothing in UB depends across it (it may order GM): it stays
    assert narrowed_barriers([load, bar, i("V", (4096, 128), (2048, 128), 3)])[0][1] == bar


# ---- redundant copies ----

def _load(ub: int, gm: int, loc: int, nbytes: int = 1024, bursts: int = 1, gap: int = 0) -> Rec:
    from sage_npu.npu_eval.trace import GmSpan

    burst = nbytes // bursts
    return Rec("I", "MTE2", "DataCopy", "float16", nbytes // 2, nbytes, loc, 0, bursts,
               (ub, nbytes + (bursts - 1) * gap), (0, 0), (0, 0), GmSpan(gm, burst, bursts, gap))


def test_a_load_of_gm_bytes_the_ub_still_holds_is_redundant_and_nothing_else_is():
    from sage_npu.npu_eval.advisor import redundant_loads
    from sage_npu.npu_eval.protocol import PIPE_ALL
    from sage_npu.npu_eval.trace import GmSpan

    ub = CHIP.ub_bytes
    first, again = _load(0, 1 << 20, 1), _load(4096, 1 << 20, 2)
    [(at, held)] = redundant_loads([first, again], ub)
    assert at == 1 and held.loc == 1
    # a contiguous part of a contiguous load is served by it; a strided load only by the same span
    assert redundant_loads([first, _load(8192, (1 << 20) + 256, 2, 512)], ub)
    rows = _load(0, 1 << 20, 1, 1024, bursts=4, gap=256)
    assert redundant_loads([rows, _load(8192, 1 << 20, 2, 1024, bursts=4, gap=256)], ub)
    assert not redundant_loads([rows, _load(8192, 1 << 20, 2, 256)], ub)  # laid out apart in UB
    # other GM bytes (another buffer), or bytes the first load does not hold whole
    assert not redundant_loads([first, _load(4096, 1 << 21, 2)], ub)
    assert not redundant_loads([first, _load(4096, (1 << 20) + 512, 2)], ub)
    # the UB copy overwritten by a vector instruction, or freed with its queue buffer
    vec = Rec("I", "V", "Muls", "float16", 512, 1024, 3, 0, 0, (0, 1024), (0, 1024), (0, 0))
    assert not redundant_loads([first, vec, again], ub)
    alloc = Rec("alloc", "MTE2", "AllocTensor", "", 0, 0, 4, 0, 0, (0, 1024), (0, 0), (0, 0))
    free = Rec("free", "V", "FreeTensor", "", 0, 0, 5, 0, 0, (0, 0), (0, 0), (0, 0))
    assert redundant_loads([alloc, first, again], ub) and not redundant_loads([alloc, first, free, again], ub)
    # the GM bytes written by the block, by a write the trace gives no bytes for, or by other cores
    store = Rec("I", "MTE3", "DataCopy", "float16", 256, 512, 6, 0, 1, (0, 0), (8192, 512), (0, 0),
                GmSpan((1 << 20) + 512, 512, 1))
    assert not redundant_loads([first, store, again], ub)
    assert redundant_loads([first, replace(store, gm=GmSpan(1 << 21, 512, 1)), again], ub)
    assert not redundant_loads([first, replace(store, gm=None), again], ub)
    scalar = Rec("I", "S", "GlobalTensor::SetValue", "float16", 1, 2, 7, 0, 0, (0, 0), (0, 0), (0, 0))
    sync = Rec("barrier", "ALL", "SyncAll", "", 0, 0, 8, PIPE_ALL, 0, (0, 0), (0, 0), (0, 0))
    assert not redundant_loads([first, scalar, again], ub) and not redundant_loads([first, sync, again], ub)
    assert redundant_loads([first, replace(sync, api="PipeBarrier"), again], ub)
    # a load into L1 (a cube kernel's) is not the UB's
    assert not redundant_loads([_load(ub, 1 << 20, 1), _load(ub + 4096, 1 << 20, 2)], ub)
# ---- reductions done the slow way (perf-slow-reduction) ----

def _reduce(api: str, elems: int, repeats: int, w: tuple[int, int], r0: tuple[int, int], loc: int) -> Rec:
    return Rec("I", "V", api, "float32", elems, repeats * 256, loc, 0, 0, w, r0, (0, 0))


def test_two_whole_reduces_become_block_then_whole_and_are_advised_at_the_first():
    from sage_npu.npu_eval.advisor import AdviceInput, advise, block_then_whole
    from sage_npu.npu_eval.costs import default_costs
    from sage_npu.npu_eval.trace import Trace

    # 256 floats (four repeats) to four repeat sums at 8192, then those to one value at 64
    first = _reduce("WholeReduceSum", 256, 4, (8192, 16), (0, 1024), 5)
    second = _reduce("WholeReduceSum", 4, 1, (64, 4), (8192, 16), 6)
    out, per_loc = block_then_whole([first, second] * 50)
    assert per_loc == {5: 50} and [r.api for r in out[:2]] == ["BlockReduceSum", "WholeReduceSum"]
    # the block sums (8 per repeat) lie where the repeat sums were, and the second pass reads all 32
    assert out[0].w == (8192, 128) and (out[1].elems, out[1].r0) == (32, (8192, 128))
    # 4096 floats (64 repeats): too many block sums for one repeat; the two passes are the fast form
    big = _reduce("WholeReduceSum", 4096, 64, (8192, 256), (0, 16384), 5)
    assert block_then_whole([big, _reduce("WholeReduceSum", 64, 1, (64, 4), (8192, 256), 6)])[1] == {}
    # a second pass that does not read the first's sums is another reduction
    assert block_then_whole([first, replace(second, r0=(20000, 16))])[1] == {}
    costs = default_costs(CHIP.family)
    trace = Trace({0: [first, second] * 50}, {5: ("/k/kernel.cpp", 20), 6: ("/k/kernel.cpp", 21)})
    [f] = [f for f in advise(AdviceInput(trace, 1, CHIP, costs, Path("/k/kernel.cpp")))
           if f.code == "perf-slow-reduction"]
    assert (f.file, f.line) == ("/k/kernel.cpp", 20)
    # the saving is the cost model's own per-instruction difference: BlockReduceSum for WholeReduceSum
    # over 256 floats, the second pass over 32 sums costing what it did over 4 (both span one repeat)
    per_row = costs.vec_cost("WholeReduceSum", "float32").k * 256 - costs.vec_cost("BlockReduceSum", "float32").k * 256
    per_row += costs.vec_cost("WholeReduceSum", "float32").b - costs.vec_cost("BlockReduceSum", "float32").b
    assert f.saving_us == pytest.approx(50 * per_row / (CHIP.clock_ghz * 1000), rel=0.05)


def test_the_slow_reduction_transform_swaps_in_block_reduce_with_the_documented_arguments():
    from tests.perf_tasks import slow_reduction_files

    name = "perf_slow_reduction"
    kernel = slow_reduction_files(name)[f"{name}.cpp"]
    line = next(i for i, t in enumerate(kernel.splitlines(), 1) if "WholeReduceSum<float>(tmp" in t)
    f = AdviceFinding(code="perf-slow-reduction", message="m", file=f"/t/{name}.cpp", line=line, saving_us=1.0,
                      before_us=2.0, after_us=1.0, change="BlockReduceSum then one WholeReduceSum")
    src = Sources(f"{name}.cpp", kernel, "")
    new = for_finding(f, src, CHIP).files[f"{name}.cpp"].splitlines()
    # BlockReduceSum takes the repeat before the mask; its eight sums per repeat lie side by side
    # (dstRepStride 1), and the second pass sums all 4 x 8 of them contiguously
    assert new[line - 1].strip() == ("AscendC::BlockReduceSum<float>(tmp, xLocal[r * ROW_LENGTH], ROW_LENGTH / 64, "
                                     "64, 1, 1, 8);")
    assert new[line + 1].strip() == "AscendC::WholeReduceSum<float>(yLocal[r], tmp, 32, 1, 1, 1, 8);"
    assert for_finding(f.model_copy(update={"line": line + 2}), src, CHIP) is None  # not the first pass
    # refused: a second pass that reads another buffer, a partial mask, too many repeats for one
    # second pass (4096 floats: two WholeReduceSum passes are the fast form)
    for old, bad in (("(yLocal[r], tmp,", "(yLocal[r], xLocal,"), (", 64, ROW_LENGTH / 64,", ", 60, ROW_LENGTH / 64,"),
                     ("ROW_LENGTH = 256;", "ROW_LENGTH = 4096;")):
        assert old in kernel
        assert for_finding(f, Sources(src.kernel_name, kernel.replace(old, bad), ""), CHIP) is None, bad


# ---- the element loop as its vector instruction (perf-scalar-loop) ----

SCALAR_LOOP = """\
    __aicore__ inline void Compute(AscendC::LocalTensor<half> xLocal, AscendC::LocalTensor<half> yLocal,
                                   AscendC::LocalTensor<half> zLocal)
    {
        HEAD
            zLocal.SetValue(j, static_cast<half>(EXPR));
        }
    }
"""


def test_an_element_loop_becomes_its_vector_instruction_only_when_provably_the_same():
    def rewrite(expr: str, head: str = "for (int32_t j = 0; j < TILE_LENGTH; j++) {") -> str | None:
        text = SCALAR_LOOP.replace("EXPR", expr).replace("HEAD", head)
        f = AdviceFinding(code="perf-scalar-loop", message="m", file="/t/k.cpp", line=5, saving_us=1.0,
                          before_us=2.0, after_us=1.0, change="one vector instruction per tile")
        c = for_finding(f, Sources("k.cpp", text, ""), CHIP)
        return None if c is None else c.files["k.cpp"].splitlines()[3].strip()

    x = "static_cast<float>(xLocal.GetValue(j))"
    assert rewrite(f"{x} + static_cast<float>(yLocal.GetValue(j))") == \
        "AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);"
    assert rewrite(f"2.0f * {x}") == "AscendC::Muls(zLocal, xLocal, static_cast<half>(2.0), TILE_LENGTH);"
    # refused: another element, a literal half cannot hold (0.1), a value computed in the loop, a
    # loop from 1 or by 2, and an operation with no one-instruction form
    assert rewrite(f"{x} + static_cast<float>(yLocal.GetValue(j + 1))") is None
    assert rewrite(f"{x} + 0.1f") is None
    assert rewrite(f"{x} + static_cast<float>(j)") is None
    assert rewrite(f"{x} + 1.0f", "for (int32_t j = 1; j < TILE_LENGTH; j++) {") is None
    assert rewrite(f"{x} + 1.0f", "for (int32_t j = 0; j < TILE_LENGTH; j += 2) {") is None
    assert rewrite(f"{x} / static_cast<float>(yLocal.GetValue(j))") is None


@pytest.mark.parametrize("local", ["xLocal", "zLocal"])
def test_an_element_loop_over_a_global_tensor_is_not_vectorised(local):
    """Add, Muls, ... take LocalTensors: a loop reading or writing GM elements is left as it is
    (its rewrite would not compile)."""
    text = SCALAR_LOOP.replace("AscendC::LocalTensor<half> " + local, "AscendC::GlobalTensor<half> " + local)
    text = text.replace("HEAD", "for (int32_t j = 0; j < TILE_LENGTH; j++) {").replace(
        "EXPR", "static_cast<float>(xLocal.GetValue(j)) + static_cast<float>(yLocal.GetValue(j))")
    assert "GlobalTensor" in text
    f = AdviceFinding(code="perf-scalar-loop", message="m", file="/t/k.cpp", line=5, saving_us=1.0, before_us=2.0,
                      after_us=1.0, change="one vector instruction per tile")
    assert for_finding(f, Sources("k.cpp", text, ""), CHIP) is None
    # the tensors from a queue's DeQue (declared `auto`) are local ones: rewritten
    queued = SCALAR_LOOP.replace("HEAD", "auto xq = inQueueX.DeQue<half>();\n        for (int32_t j = 0; j < N; j++) {")
    queued = queued.replace("EXPR", "static_cast<float>(xq.GetValue(j)) * 2.0f")
    c = for_finding(f.model_copy(update={"line": 6}), Sources("k.cpp", queued, ""), CHIP)
    assert c is not None and "AscendC::Muls(zLocal, xq, static_cast<half>(2.0), N);" in c.files["k.cpp"]


def test_more_cores_for_a_cube_kernel_counts_the_ai_cores_not_the_vector_cores(tmp_path):
    """A pure cube kernel's blocks are AI Cores (one cube unit each, 24 on 910B2): the advice never
    asks for the 48 vector cores, and a launch on all 24 gets no few-cores finding."""
    from sage_npu.npu_eval.advisor import AdviceInput, advise
    from sage_npu.npu_eval.costs import default_costs
    from sage_npu.npu_eval.trace import Trace

    kernel, host = tmp_path / "kernel.cpp", tmp_path / "main.cpp"
    kernel.write_text("uint32_t b = AscendC::GetBlockIdx();\n")
    # 192 KB per copy: two blocks of it split evenly over 24 or 48 blocks
    load = Rec("I", "MTE2", "DataCopy", "float16", 98304, 196608, 5, 0, 1, (0, 196608), (0, 0), (0, 0))
    mmad = Rec("I", "M", "Mmad", "float16", 128 * 128 * 128, 0, 6, 0, 0, (0, 0), (0, 0), (0, 0))

    def few_cores(n: int, kind: str) -> list[AdviceFinding]:
        host.write_text(f"    kernel<<<{n}, nullptr, stream>>>(a, b, c);\n")
        trace = Trace({b: [load, mmad] * 4 for b in range(n)}, {5: (str(kernel), 1), 6: (str(kernel), 1)},
                      cores={b: (kind, b) for b in range(n)})
        found = advise(AdviceInput(trace, n, CHIP, default_costs(CHIP.family), kernel, host))
        return [f for f in found if f.code == "perf-few-cores"]

    [f] = few_cores(2, "AIC")
    assert f.change.startswith(f"blockDim 2 -> {CHIP.cube_cores} (") and "AI Cores" in f.change, f.change
    assert f"{CHIP.cube_cores} AI Cores" in f.message
    assert few_cores(CHIP.cube_cores, "AIC") == []
    # the same launch of a vector kernel may still go to the 48 vector cores
    [v] = few_cores(CHIP.cube_cores, "AIV")
    assert f"-> {CHIP.vector_cores} (" in v.change, v.change
