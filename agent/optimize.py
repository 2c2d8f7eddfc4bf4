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
from sage_npu.agent.episode import Attempt, OptimizeResult
from sage_npu.agent.episode_memory import EpisodeRecorder
from sage_npu.agent.llm import LLMClient
from sage_npu.agent.llm_loop import ModelSearcher
from sage_npu.agent.offline import CatalogSearcher
from sage_npu.agent.rule_abstraction import consolidate_if_due
from sage_npu.agent.settings import AgentSettings
from sage_npu.npu_eval.evaluate import Evaluator

log = logging.getLogger(__name__)


def optimize(task_path: str | Path, evaluator: Evaluator, settings: AgentSettings, *, memory=None,
             turns: int | None = None, on_attempt: Callable[[Attempt], None] | None = None,
             on_token: Callable[[str], None] | None = None, hold: bool = False,
             cancel: threading.Event | None = None, env: Mapping[str, str] | None = None) -> OptimizeResult:
    """Run one episode on the task; with `memory`, record and credit it (or hold it open with `hold`)."""
    turns = turns if turns is not None else settings.turns
    with LLMClient(settings.llm, env=env) as client:
        model = client.model if client.configured else "offline"
        recorder = (EpisodeRecorder(memory, operator=Path(task_path).resolve().name, model=model or "unnamed")
                    if memory is not None else None)
        searcher: Searcher = ModelSearcher(client, on_token=on_token) if client.configured else CatalogSearcher()
        result = EpisodeDriver(evaluator, searcher, turns=turns, recorder=recorder, hold=hold, cancel=cancel,
                               on_attempt=on_attempt).run(task_path)
        if memory is not None and result.memory is not None:
            try:
                consolidate_if_due(memory, settings.consolidate_every, client)
            except Exception:  # noqa: BLE001 - the episode is recorded; consolidation can run next time
                log.exception("consolidation after episode %s failed", result.episode_id)
    return result
