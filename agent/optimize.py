"""One episode, whichever searcher is configured: a model when an endpoint is set, else the
offline catalog (docs/architecture.md, The agent). The CLI, bench and the language server all start episodes
here; the one loop is `agent/driver.py`, so memory recording, crediting and consolidation happen
the same way everywhere."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from sage_npu.agent.driver import EpisodeDriver, Searcher
from sage_npu.agent.episode import Attempt, OptimizeResult, RuleChange
from sage_npu.agent.episode_memory import EpisodeRecorder, Retriever
from sage_npu.agent.llm import LLMClient, RetryNotice
from sage_npu.agent.llm_loop import ModelSearcher
from sage_npu.agent.offline import CatalogSearcher
from sage_npu.agent.rule_abstraction import consolidate_if_due
from sage_npu.agent.settings import AgentSettings
from sage_npu.memory.experience_memory import ExperienceMemory
from sage_npu.memory.ugc import ConsolidationReport
from sage_npu.npu_eval.evaluate import Evaluator

log = logging.getLogger(__name__)


def optimize(task_path: str | Path, evaluator: Evaluator, settings: AgentSettings, *,
             memory: ExperienceMemory | None = None,
             turns: int | None = None, on_attempt: Callable[[Attempt], None] | None = None,
             on_token: Callable[[str], None] | None = None, hold: bool = False,
             cancel: threading.Event | None = None, env: Mapping[str, str] | None = None,
             on_retry: Callable[[RetryNotice], None] | None = None, retriever: Retriever | None = None,
             episode_id: str | None = None) -> OptimizeResult:
    """Run one episode on the task; with `memory`, record and credit it (or hold it open with `hold`).
    With a `retriever` and no memory, the episode is deferred: it retrieves through the retriever and
    leaves its log and lessons in `result.deferred` for the one writer (bench). `on_attempt` hears
    every turn, `on_token` the model's answer as it streams, `on_retry` every request to the
    endpoint that is tried again."""
    turns = turns if turns is not None else settings.turns
    with LLMClient(settings.llm, env=env, on_retry=on_retry) as client:
        model = client.model if client.configured else "offline"
        recorder = None
        if memory is not None or retriever is not None:
            recorder = EpisodeRecorder(memory, operator=Path(task_path).resolve().name, model=model or "unnamed",
                                       retriever=retriever)
            if episode_id is not None:
                recorder.episode_id = episode_id
        searcher: Searcher = ModelSearcher(client, on_token=on_token) if client.configured else CatalogSearcher()
        result = EpisodeDriver(evaluator, searcher, turns=turns, recorder=recorder, hold=hold, cancel=cancel,
                               on_attempt=on_attempt, max_unusable=settings.max_unusable_answers).run(task_path)
        result.retries = client.retries
        if recorder is not None and memory is None:
            result.deferred = recorder.deferred
        if memory is not None and result.memory is not None:
            try:
                report = consolidate_if_due(memory, settings.consolidate_every, client)
            except Exception:  # noqa: BLE001 - the episode is recorded; consolidation can run next time
                log.exception("consolidation after episode %s failed", result.episode_id)
                report = None
            _describe_memory(result, memory, report)
    return result


def _describe_memory(result: OptimizeResult, memory: ExperienceMemory, report: ConsolidationReport | None) -> None:
    """The titles behind the credit's item ids, and the rules consolidation made resident or cold."""
    assert result.memory is not None
    ids = {c.item_id for c in result.memory.changes}
    new_resident = [s.id for s in report.resident if s.id in set(report.new_rules)] if report else []
    to_cold = list(report.to_cold) if report else []
    items = memory.store.items(sorted(ids | set(new_resident) | set(to_cold)))
    result.item_titles = {i: it.title for i, it in items.items() if i in ids}
    result.rules = ([RuleChange(i, items[i].title, "resident") for i in new_resident if i in items]
                    + [RuleChange(i, items[i].title, "cold") for i in to_cold if i in items])
