"""The agent process beside the server: episodes and the memory run there, progress comes back
while they run, and its death fails the pending request with a reason instead of taking the
server down; the next request starts a new process."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from sage_npu.agent.settings import AgentSettings
from sage_npu.agent.worker import (
    AgentWorker,
    AttemptProgress,
    CalibrateRequest,
    Calibration,
    DecideRequest,
    ExpireAnswer,
    ExpireRequest,
    MemorySettings,
    OptimizeRequest,
    Overview,
    OverviewRequest,
    RulesRequest,
    WorkerError,
)
from sage_npu.npu_eval.settings import EvalSettings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"


@pytest.fixture
def worker():
    w = AgentWorker()
    yield w
    w.close()


def memory(tmp_path: Path) -> MemorySettings:
    return MemorySettings(db=tmp_path / "mem", embedder="hashing")


def request(tmp_path: Path, turns: int) -> OptimizeRequest:
    task = tmp_path / "vadd_naive"
    if not task.exists():
        shutil.copytree(EXAMPLES / "vadd_naive", task)
    return OptimizeRequest(task=str(task), eval=EvalSettings(trials=2, cache_dir=tmp_path / "cache"),
                           agent=AgentSettings(turns=turns), memory=memory(tmp_path))


def test_an_episode_runs_in_the_worker_with_progress_and_an_open_episode(worker, tmp_path):
    seen = []
    result = worker.call(request(tmp_path, 3), seen.append).result(timeout=300)
    assert result.status == "improved" and result.turns == 3
    # offline: no token stream, one progress per candidate
    assert [p.attempt.turn for p in seen if isinstance(p, AttemptProgress)] == [1, 2, 3] and len(seen) == 3
    assert result.memory is None          # held open for the person's decision
    credit = worker.call(DecideRequest(episode_id=result.episode_id, decision="accept",
                                       attempt_id=result.best_attempt_id, memory=memory(tmp_path))).result(timeout=60)
    assert credit.credited and credit.reward > 0
    overview = worker.call(OverviewRequest(memory=memory(tmp_path))).result(timeout=60)
    assert isinstance(overview, Overview) and overview.stats is not None and overview.stats.episodes == 1


def test_an_episode_left_undecided_past_its_deadline_is_credited_as_the_agents(worker, tmp_path):
    worker.start()   # as the server does at initialize: the process is up before the first request
    patient = request(tmp_path, 2)
    result = worker.call(patient).result(timeout=300)
    assert result.status == "improved" and result.memory is None      # held open
    early = worker.call(ExpireRequest(memory=patient.memory)).result(timeout=60)
    assert early == ExpireAnswer()                                     # an hour to decide by default
    impatient = patient.memory.model_copy(update={"editor_timeout_s": 0.01})
    result = worker.call(patient.model_copy(update={"memory": impatient})).result(timeout=300)
    expired = worker.call(ExpireRequest(memory=impatient)).result(timeout=60)
    assert expired.episode_ids == [result.episode_id]
    late = worker.call(DecideRequest(episode_id=result.episode_id, decision="accept",
                                     attempt_id=result.best_attempt_id, memory=impatient)).result(timeout=60)
    assert not late.credited                                           # nothing is counted twice


def test_reading_a_memory_that_does_not_exist_creates_none(worker, tmp_path):
    assert worker.call(ExpireRequest(memory=memory(tmp_path))).result(timeout=60) == ExpireAnswer()
    assert worker.call(RulesRequest(memory=memory(tmp_path))).result(timeout=60) == []
    overview = worker.call(OverviewRequest(memory=memory(tmp_path))).result(timeout=60)
    assert overview.stats is None and "no memory yet" in overview.reason and overview.path == str(tmp_path / "mem")
    assert not (tmp_path / "mem").exists()


def test_calibration_goes_into_an_existing_memory_and_never_creates_one(worker, tmp_path):
    rec = Calibration(code="perf-few-cores", change="MAX_CORES 2 -> 48", estimated_us=3.0, delivered_us=2.9,
                      verified_by="editor")
    mem = memory(tmp_path)
    assert worker.call(CalibrateRequest(records=[rec], memory=mem)).result(timeout=60) == 0
    assert not (tmp_path / "mem").exists()
    from sage_npu.memory.experience_memory import ExperienceMemory

    ExperienceMemory.open(mem.model_copy(update={"load_starter": False}))  # the first episode would
    assert worker.call(CalibrateRequest(records=[rec], memory=mem)).result(timeout=60) == 1
    stats = worker.call(OverviewRequest(memory=mem)).result(timeout=60).stats
    assert [(k.code, k.n, k.within) for k in stats.calibration] == [("perf-few-cores", 1, 1.0)]


def test_a_dead_worker_fails_the_pending_request_and_the_next_one_restarts_it(worker, tmp_path):
    first_turn = threading.Event()
    pending = worker.call(request(tmp_path, 30), lambda p: first_turn.set())
    assert first_turn.wait(timeout=120)
    worker.kill()                        # as a crash inside LanceDB or the model client would
    with pytest.raises(WorkerError, match="ended unexpectedly"):
        pending.result(timeout=30)
    rules = worker.call(RulesRequest(memory=memory(tmp_path))).result(timeout=60)
    assert rules == []                    # a new process answered


def test_a_request_that_raises_comes_back_as_its_error(worker, tmp_path):
    bad = request(tmp_path, 1).model_copy(update={"task": str(tmp_path / "nowhere")})
    with pytest.raises(WorkerError, match="no such file or folder"):
        worker.call(bad).result(timeout=120)
