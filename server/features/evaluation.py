"""Evaluate on save: the kernel's task is compiled, run against its reference and estimated in
the background (debounced; a newer save supersedes an older run), with $/progress, and every
report diagnostic is published on its file and line."""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from sage_npu.npu_eval.evaluate import Cancelled, Evaluator
from sage_npu.npu_eval.report import Diagnostic, Report
from sage_npu.npu_eval.task import KERNEL_SUFFIXES, Task, TaskError, load_task
from sage_npu.server.debounce import Debouncer
from sage_npu.server.features.base import Feature
from sage_npu.server.stores import ReportStore

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer
    from sage_npu.server.settings import ComposedSettings

log = logging.getLogger("sage_npu.server.evaluation")

# After each evaluation, for a client's status display: what the code lens shows, as data.
REPORT_NOTIFICATION = "sage/report"
EVALUATE = "sage.evaluate"


def summary(task: Task, report: Report) -> dict:
    c, t = report.correctness, report.timing
    return {"task": str(task.root), "kernel": str(task.kernel), "status": report.status, "chip": report.chip,
            "backend": report.backend, "passed": c.passed if c else None, "trials": c.trials if c else None,
            "estimatedUs": t.estimated_us if t else None, "bottleneck": t.bottleneck if t else None,
            "estimated": report.backend != "ascend",
            "errors": sum(d.severity == "error" for d in report.diagnostics)}


class Evaluation(Feature):
    SOURCE = "eval"

    def __init__(self, server: SageServer, reports: ReportStore) -> None:
        super().__init__(server)
        self.reports = reports                          # written here, read by the code lenses
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sage-eval")
        self._evaluator: Evaluator | None = None
        self._lock = threading.Lock()
        self._debouncer: Debouncer | None = None
        self._generation: dict[Path, int] = {}
        self._published: dict[Path, set[str]] = {}     # task root -> uris we put diagnostics on
        self._running: Path | None = None               # the task being evaluated now

    # The Evaluator (and its plan worker process) is created on first use and rebuilt when
    # the evaluation settings change.
    def settings_changed(self, settings: ComposedSettings) -> None:
        with self._lock:
            if self._evaluator is not None and self._evaluator.settings != settings.eval:
                self._evaluator.close()
                self._evaluator = None

    def _get_evaluator(self) -> Evaluator:
        with self._lock:
            if self._evaluator is None:
                self._evaluator = Evaluator(self.server.settings.eval)
            return self._evaluator

    def shutdown(self) -> None:
        with self._lock:
            if self._evaluator is not None:
                self._evaluator.close()
                self._evaluator = None
        self._executor.shutdown(wait=False, cancel_futures=True)

    def task_for(self, uri: str) -> Task | None:
        path = Path(to_fs_path(uri) or "")
        try:
            if path.suffix in KERNEL_SUFFIXES:
                if not self.server.is_ascendc(uri):
                    return None
                return load_task(path)
            if path.name in ("host.py", "reference.py"):
                return load_task(path.parent)
        except TaskError:
            return None
        return None

    def commands(self) -> dict[str, Callable[..., Any]]:
        return {EVALUATE: self.evaluate_command}

    def evaluate_command(self, uri: str) -> dict:
        started = self.request(uri)
        return {"started": started} | ({} if started else {"reason": "not an Ascend C kernel task"})

    def document_save(self, params: types.DidSaveTextDocumentParams) -> None:
        self.request(params.text_document.uri)

    def request(self, uri: str) -> bool:
        """Evaluate the task of `uri` soon (debounced, superseding an older run); False if it has none."""
        task = self.task_for(uri)
        if task is None:
            return False
        if self._debouncer is None:
            self._debouncer = Debouncer(self.server.settings.server.debounce_s)
        self._debouncer.delay_s = self.server.settings.server.debounce_s
        gen = self._generation.get(task.root, 0) + 1
        self._generation[task.root] = gen
        if self._running == task.root and self._evaluator is not None:
            self._evaluator.cancel()  # the run in progress is for an older save of this task
        self._debouncer.schedule(task.root, lambda: self._evaluate(task, gen))
        return True

    async def _evaluate(self, task: Task, gen: int) -> None:
        token = str(uuid.uuid4())
        progress = self.server.supports_progress()
        if progress:
            try:
                await self.server.work_done_progress.create_async(token)
                self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                    title="SAGE", message=f"evaluating {task.kernel.name}", cancellable=False))
            except Exception:  # noqa: BLE001 - a client that refuses progress still gets results
                progress = False
        try:
            loop = asyncio.get_running_loop()
            report = await loop.run_in_executor(self._executor, self._run, task)
        finally:
            if progress:
                self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
        if report is None or self._generation.get(task.root) != gen:
            return  # a newer save superseded this run
        self.reports.put(task.root, report)
        self.publish(task, report)
        self.server.refresh_code_lenses()
        self.server.protocol.notify(REPORT_NOTIFICATION, summary(task, report))

    def _run(self, task: Task) -> Report | None:
        self._running = task.root
        try:
            return self._get_evaluator().evaluate(task).report
        except Cancelled:
            return None
        except Exception as e:  # noqa: BLE001 - the server never dies of a user's file
            log.exception("evaluation of %s failed", task.root)
            return _task_error(task, f"sage-npu could not evaluate this task: {e}")
        finally:
            self._running = None

    def publish(self, task: Task, report: Report) -> None:
        by_uri: dict[str, list[types.Diagnostic]] = {}
        for d in report.diagnostics:
            uri = Path(d.file).resolve().as_uri()
            lines = self.server.lines_of(d.file)
            named = d.block is None or f"block {d.block}" in d.message
            msg = d.message if named else f"{d.message} (block {d.block})"
            by_uri.setdefault(uri, []).append(self.server.lsp_diagnostic(
                lines, d.line, d.column, d.end_line, d.end_column, d.severity, d.code, msg))
        # Files of the task always get a publish, so fixed problems disappear.
        uris = set(by_uri) | self._published.get(task.root, set())
        uris |= {p.resolve().as_uri() for p in (task.kernel, task.host, task.reference) if p is not None}
        for uri in uris:
            self.server.set_diagnostics(uri, self.SOURCE, by_uri.get(uri, []))
        self._published[task.root] = set(by_uri)


def _task_error(task: Task, message: str) -> Report:
    """A report that says why the task could not be evaluated, on the kernel's first line."""
    where = Diagnostic(file=str(task.kernel), line=1, column=1, end_line=1, end_column=1, severity="error",
                       code="task-error", message=message)
    return Report(task=str(task.root), kernel=str(task.kernel), status="harness_error", diagnostics=[where])
