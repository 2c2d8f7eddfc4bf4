"""The agent process beside the server: episodes and the memory run there, progress comes back
while they run, and its death fails the pending request with a reason instead of taking the
server down; the next request starts a new process."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from sage_npu.agent.settings import AgentSettings
from sage_npu.agent.worker import AgentWorker, WorkerError
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.settings import EvalSettings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"


@pytest.fixture
def worker():
    w = AgentWorker()
    yield w
    w.close()


def request(tmp_path: Path, turns: int) -> dict:
    task = tmp_path / "vadd_naive"
    if not task.exists():
        shutil.copytree(EXAMPLES / "vadd_naive", task)
    return {"task": str(task),
            "eval": EvalSettings(trials=2, cache_dir=tmp_path / "cache").model_dump(mode="json"),
            "agent": AgentSettings(turns=turns).model_dump(mode="json"),
            "memory": MemorySettings(db=tmp_path / "mem", embedder="hashing").model_dump(mode="json")}


def test_an_episode_runs_in_the_worker_with_progress_and_an_open_episode(worker, tmp_path):
    seen = []
    result = worker.call("optimize", request(tmp_path, 3), seen.append).result(timeout=300)
    assert result.status == "improved" and result.turns == 3
    assert [a["turn"] for a in seen if a["kind"] == "attempt"] == [1, 2, 3]   # offline: no token stream
    assert result.memory is None          # held open for the person's decision
    credit = worker.call("decide", {"episode_id": result.episode_id, "decision": "accept",
                                    "attempt_id": result.best_attempt_id,
                                    "memory": request(tmp_path, 3)["memory"]}).result(timeout=60)
    assert credit.credited and credit.reward > 0


def test_a_dead_worker_fails_the_pending_request_and_the_next_one_restarts_it(worker, tmp_path):
    first_turn = threading.Event()
    pending = worker.call("optimize", request(tmp_path, 30), lambda a: first_turn.set())
    assert first_turn.wait(timeout=120)
    worker._proc.kill()                  # as a crash inside LanceDB or the model client would
    with pytest.raises(WorkerError, match="ended unexpectedly"):
        pending.result(timeout=30)
    rules = worker.call("rules", {"memory": request(tmp_path, 1)["memory"]}).result(timeout=60)
    assert rules == []                    # a new process answered


def test_a_request_that_raises_comes_back_as_its_error(worker, tmp_path):
    bad = request(tmp_path, 1) | {"task": str(tmp_path / "nowhere")}
    with pytest.raises(WorkerError, match="no such file or folder"):
        worker.call("optimize", bad).result(timeout=120)
