"""`sage-npu bench --ray [ADDRESS]`: each task's episode is a Ray task (docs/bench.md, Ray).

- The task folder travels with the task, packed into its arguments (the object store): a worker
  unpacks it into a temporary folder of its own, so nothing assumes a shared filesystem.
- Retrieval is served by one actor on the driver's node (where the memory is), reading the memory
  as the bench's one writer last committed it; workers never write it: they return the episode's
  log and lessons, and the driver credits them in suite order when the wave ends.
- At most as many tasks are in flight as the cluster has CPUs, so a task's time runs from its start:
  past `agent.bench.task_timeout_s` it is cancelled (its worker killed) and recorded as a timeout.
  A task whose worker dies is run again by Ray (`agent.bench.max_retries`).
- Each worker process keeps one Evaluator per settings (its build cache warm across tasks).

Workers need sage-npu (with the same version) and g++; Ray is the `ray` extra (pip install 'sage-npu[ray]').
"""

from __future__ import annotations

import atexit
import io
import tarfile
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sage_npu.agent.bench import BenchError, Runner, TaskOutcome, TaskSpec, failed_outcome, open_memory, run_task
from sage_npu.agent.settings import AgentSettings
from sage_npu.memory.retrieval import Retrieval
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.settings import EvalSettings

RAY_MISSING = "sage-npu bench --ray needs Ray on this machine and on every worker: pip install 'sage-npu[ray]'"
NOT_SHIPPED = {".sage", "build", "__pycache__"}   # a task's suggestions and build outputs stay home
POLL_S = 1.0

_evaluators: dict[str, Any] = {}    # in a worker process: one Evaluator per settings, kept across tasks


def pack(folder: Path) -> bytes:
    """The task folder as a gzipped tar (what travels with the task)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname=folder.name,
                filter=lambda info: None if NOT_SHIPPED & set(Path(info.name).parts[1:]) else info)
    return buf.getvalue()


def unpack(data: bytes, dest: Path) -> Path:
    """Unpack a packed task folder under `dest`; the folder."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        names = tar.getnames()
        tar.extractall(dest, filter="data")
    return dest / Path(names[0]).parts[0]


def evaluator_for(settings: EvalSettings):
    from sage_npu.npu_eval.evaluate import Evaluator

    settings = settings.verifying()  # a benchmark's verdicts are checked ones
    key = settings.model_dump_json()
    ev = _evaluators.get(key)
    if ev is None:
        ev = _evaluators[key] = Evaluator(settings)
        atexit.register(ev.close)
    return ev


class RetrievalServer:
    """The memory's reads for the workers (a Ray actor on the driver's node)."""

    def __init__(self, settings: MemorySettings) -> None:
        memory = open_memory(settings, read_only=True)
        assert memory is not None
        self.memory = memory

    def retrieve_for(self, operator: str, kernel: str = "", diagnostics: Sequence[str] = ()) -> Retrieval:
        return self.memory.retrieve_for(operator, kernel, list(diagnostics))


class ActorRetriever:
    """A worker's `Retriever`: asks the retrieval actor."""

    def __init__(self, actor) -> None:
        self.actor = actor

    def retrieve_for(self, operator: str, kernel: str = "", diagnostics: Sequence[str] = ()) -> Retrieval:
        import ray

        return ray.get(self.actor.retrieve_for.remote(operator, kernel, list(diagnostics)))


def episode_task(spec: TaskSpec, bundle: bytes, eval_settings: EvalSettings, agent: AgentSettings,
                 retrieval) -> TaskOutcome:
    """The Ray task: one episode on the unpacked task folder; the row names the driver's folder."""
    with tempfile.TemporaryDirectory(prefix="sage-bench-") as tmp:
        path = unpack(bundle, Path(tmp))
        retriever = ActorRetriever(retrieval) if retrieval is not None else None
        out = run_task(spec, path, evaluator_for(eval_settings), agent, retriever)
    out.row.path = spec.path
    return out


class RayRunner:
    name: Runner = "ray"

    def __init__(self, eval_settings: EvalSettings, agent: AgentSettings,
                 memory_settings: MemorySettings | None) -> None:
        try:
            import ray
            from ray.exceptions import RayError
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        except ImportError as e:
            raise BenchError(RAY_MISSING) from e
        self.ray, self.ray_error = ray, RayError
        self.started = not ray.is_initialized()
        if self.started:
            # Workers' output stays in Ray's logs (`ray logs`): --json output must stay clean.
            ray.init(address=agent.bench.ray_address, include_dashboard=False, log_to_driver=False)
        self.timeout, self.retries = agent.bench.task_timeout_s, agent.bench.max_retries
        self.episode = ray.remote(num_cpus=1, max_retries=self.retries)(episode_task)
        self.args = (ray.put(eval_settings), ray.put(agent))
        self.retrieval: Any = None
        if memory_settings is not None:
            here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
            self.retrieval = (ray.remote(num_cpus=0)(RetrievalServer).options(scheduling_strategy=here)
                              .remote(memory_settings))
        self.slots = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def run(self, specs: list[TaskSpec], done: Callable[[TaskOutcome], None]) -> None:
        todo = deque(specs)
        running: dict[Any, tuple[TaskSpec, float]] = {}
        try:
            while todo or running:
                while todo and len(running) < self.slots:
                    s = todo.popleft()
                    ref = self.episode.remote(s, pack(Path(s.path)), *self.args, self.retrieval)
                    running[ref] = (s, time.monotonic())
                ready, _ = self.ray.wait(list(running), num_returns=1, timeout=POLL_S)
                for ref in ready:
                    s, t0 = running.pop(ref)
                    done(self._result(ref, s, t0))
                for ref, (s, t0) in list(running.items()):
                    if time.monotonic() - t0 > self.timeout:
                        self.ray.cancel(ref, force=True)
                        del running[ref]
                        done(failed_outcome(s, "timeout", f"ended after {self.timeout:g} s "
                                            "(agent.bench.task_timeout_s)", time.monotonic() - t0))
        finally:
            for ref in running:   # interrupted: nothing of this run may go on on the cluster
                self.ray.cancel(ref, force=True)

    def _result(self, ref, spec: TaskSpec, t0: float) -> TaskOutcome:
        try:
            return self.ray.get(ref)
        except self.ray_error as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            return failed_outcome(spec, "error", f"the Ray task failed ({type(e).__name__}, after up to "
                                  f"{self.retries} retries): {first}", time.monotonic() - t0)

    def close(self) -> None:
        if self.retrieval is not None:
            self.ray.kill(self.retrieval)
            self.retrieval = None
        if self.started:
            self.ray.shutdown()
