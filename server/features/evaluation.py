"""Evaluate a task's kernel: on save of any of its files (kernel, host.py, reference.py), and on
opening one when the task has no verdict yet. The task is compiled, run against its reference and
estimated off the event loop, with $/progress, and every report diagnostic is published on its
file and line.

Only the latest content matters: saves are debounced per task, a save cancels the run of an
older version of its task, and a queued evaluation is replaced, not queued again (ten quick
saves give at most the running one, cancelled, and one more). An edit withdraws the evaluated
diagnostics on the lines it touches (and moves those below it) until the next verdict."""

from __future__ import annotations

import asyncio
import difflib
import logging
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from sage_npu.agent.worker import AgentWorker, CalibrateRequest
from sage_npu.npu_eval.evaluate import Cancelled, Evaluator
from sage_npu.npu_eval.report import AdviceFinding, Diagnostic, Report, diagnostic
from sage_npu.npu_eval.task import KERNEL_SUFFIXES, Task, TaskError, load_task
from sage_npu.server.debounce import Debouncer
from sage_npu.server.features.advice_actions import VerifiedChange, calibration, candidate, variant, verified
from sage_npu.server.features.base import Feature
from sage_npu.server.server import EVALUATED
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


def task_of(server: SageServer, uri: str) -> Task | None:
    """The task a document belongs to: an Ascend C kernel's, or host.py's and reference.py's
    folder's; None for any other document."""
    path = Path(to_fs_path(uri) or "")
    try:
        if path.parent.name == "op_host" and (path.parent.parent / "op_kernel").is_dir():
            task = load_task(path.parent.parent)  # an op project's tiling side
            return task if task.op_host == path.resolve() else None
        if path.suffix in KERNEL_SUFFIXES:
            if not server.is_ascendc(uri):
                return None
            return load_task(path)
        if path.name in ("host.py", "reference.py"):
            return load_task(path.parent)
    except TaskError:
        return None
    return None


@dataclass(frozen=True)
class Wanted:
    """The newest version of a task asked for: evaluated when due, unless a newer one replaces it."""

    task: Task
    generation: int


class Evaluation(Feature):
    SOURCE = EVALUATED

    def __init__(self, server: SageServer, reports: ReportStore, worker: AgentWorker | None = None) -> None:
        super().__init__(server)
        self.reports = reports                          # written here, read by the code lenses
        self.worker = worker                            # the agent process: verified findings go to its memory
        self.changes: dict[Path, VerifiedChange] = {}   # task root -> verified advice, read by AdviceActions
        self._evaluator: Evaluator | None = None
        self._lock = threading.Lock()                   # the Evaluator: settings vs the evaluation thread
        self._debouncer: Debouncer | None = None
        self._generation: dict[Path, int] = {}
        self._wanted: dict[Path, Wanted] = {}           # task root -> the version to evaluate next
        self._due: list[Path] = []                      # debounced, in the order they became due
        self._drain: asyncio.Task | None = None         # evaluates the due tasks one after another
        self._published: dict[Path, set[str]] = {}     # task root -> uris we put diagnostics on
        self._running: Path | None = None               # the task being evaluated now

    # The Evaluator (and its plan worker process) is created on first use and rebuilt when
    # the evaluation settings change.
    def settings_changed(self, settings: ComposedSettings) -> None:
        with self._lock:
            if self._evaluator is not None and self._evaluator.settings != settings.eval and self._running is None:
                self._evaluator.close()
                self._evaluator = None

    def shutdown(self) -> None:
        """Stop: the run in progress is cancelled and closes its Evaluator itself when it returns
        (closing it under the running thread would pull its plan worker away mid-call)."""
        self._wanted.clear()
        with self._lock:
            if self._evaluator is not None:
                self._evaluator.cancel()
                if self._running is None:
                    self._evaluator.close()
                    self._evaluator = None

    def commands(self) -> dict[str, Callable[..., Any]]:
        return {EVALUATE: self.evaluate_command}

    def evaluate_command(self, uri: str) -> dict:
        started = self.request(uri)
        return {"started": started} | ({} if started else {"reason": "not an Ascend C kernel task"})

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        """A verdict on open: a runnable task with no report yet is evaluated (not only on save)."""
        task = task_of(self.server, params.text_document.uri)
        if task is not None and task.runnable and self.reports.for_kernel(task.kernel) is None \
                and task.root not in self._wanted and self._running != task.root:
            self.request(params.text_document.uri)

    def document_save(self, params: types.DidSaveTextDocumentParams) -> None:
        self.request(params.text_document.uri)

    def document_change(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        shown = self.server.diagnostics_of(uri, self.SOURCE)
        if not shown:
            return
        kept = shown
        for change in params.content_changes:
            kept = stale_withdrawn(kept, change)
        if len(kept) != len(shown) or kept != shown:
            self.server.set_diagnostics(uri, self.SOURCE, kept)

    def request(self, uri: str) -> bool:
        """Evaluate the task of `uri` soon (debounced; replacing a queued version and cancelling a
        running one of the same task); False if it has none."""
        task = task_of(self.server, uri)
        if task is None or self.server.stopping:
            return False
        if self._debouncer is None:
            self._debouncer = Debouncer(self.server.settings.server.debounce_s)
        self._debouncer.delay_s = self.server.settings.server.debounce_s
        gen = self._generation.get(task.root, 0) + 1
        self._generation[task.root] = gen
        self._wanted[task.root] = Wanted(task, gen)
        if self._running == task.root:
            with self._lock:
                if self._evaluator is not None:
                    self._evaluator.cancel()  # the run in progress is for an older version of this task
        self._debouncer.schedule(task.root, lambda: self._became_due(task.root))
        return True

    async def _became_due(self, root: Path) -> None:
        if root not in self._due:
            self._due.append(root)
        if self._drain is None or self._drain.done():
            self._drain = asyncio.get_running_loop().create_task(self._evaluate_due())

    async def _evaluate_due(self) -> None:
        """One evaluation at a time (one Evaluator, two cores), each of the newest version wanted."""
        while self._due and not self.server.stopping:
            wanted = self._wanted.pop(self._due.pop(0), None)
            if wanted is not None:
                await self._evaluate(wanted.task, wanted.generation)

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
        self._running = task.root
        started = time.monotonic()
        evaluated = _texts_on_disk(task)
        try:
            report = await self.server.off_loop(lambda: self._run(task), name="sage-eval")
        finally:
            self._running = None
            if progress and not self.server.stopping:
                self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
        if report is None or self._generation.get(task.root) != gen or self.server.stopping:
            return  # a newer save superseded this run, or the server is ending
        log.info("evaluated %s: %s in %.1f s", task.kernel.name, report.status, time.monotonic() - started)
        self.reports.put(task.root, report)
        self.publish(task, report, evaluated)
        self.server.refresh_code_lenses()
        self.server.protocol.notify(REPORT_NOTIFICATION, summary(task, report))
        await self._verify(task, report, gen)

    async def _verify(self, task: Task, report: Report, gen: int) -> None:
        """The top finding a transform makes, applied to a copy and evaluated (advice_actions.py);
        skipped when a newer save waits, so verification never delays the person's own run."""
        self.changes.pop(task.root, None)
        found = candidate(task, report)
        if found is None or self._due or self.server.stopping:
            return
        finding, cand = found
        with tempfile.TemporaryDirectory(prefix="sage-verify-") as tmp:
            copy = variant(task, cand.files, Path(tmp) / task.root.name)
            after = await self.server.off_loop(lambda: self._run(copy), name="sage-verify") if copy else None
        if self._generation.get(task.root) != gen or self.server.stopping:
            return
        self._calibrate(task, finding, report, after)
        change = verified(task, finding, cand, report, after)
        if change is not None:
            self.changes[task.root] = change
            log.info("verified %s on %s: %s", finding.code, task.kernel.name, change.title)

    def _calibrate(self, task: Task, finding: AdviceFinding, before: Report, after: Report | None) -> None:
        """Record, in the memory (through the agent process), the finding's estimated saving beside
        the one its verified change delivered (faster or not), when the changed copy was correct."""
        record = calibration(task, finding, before, after)
        if record is None or self.worker is None:
            return
        fut = self.worker.call(CalibrateRequest(records=[record], memory=self.server.settings.memory))
        fut.add_done_callback(lambda f: f.exception() and log.warning("calibration not recorded: %s", f.exception()))

    def _run(self, task: Task) -> Report | None:
        """In the evaluation thread."""
        with self._lock:
            if self.server.stopping:
                return None
            wanted = self.server.settings.eval.verifying()  # the editor shows verdicts
            if self._evaluator is None or self._evaluator.settings != wanted:
                if self._evaluator is not None:
                    self._evaluator.close()
                self._evaluator = Evaluator(wanted)
            evaluator = self._evaluator
        try:
            return evaluator.evaluate(task).report
        except Cancelled:
            return None
        except Exception as e:  # noqa: BLE001 - the server never dies of a user's file
            if self.server.stopping:
                return None  # its processes were ended under it
            log.exception("evaluation of %s failed", task.root)
            return _task_error(task, f"sage-npu could not evaluate this task: {e}")
        finally:
            if self.server.stopping:
                with self._lock:
                    evaluator.close()
                    self._evaluator = None

    def publish(self, task: Task, report: Report, evaluated: dict[str, str] | None = None) -> None:
        """The report's diagnostics on their files; `evaluated`: the files' texts the run read
        (uri -> text), so a file edited since gets them on the lines they now are, and not at all
        on lines the edit changed."""
        by_uri: dict[str, list[types.Diagnostic]] = {}
        for d, severity in [*((d, d.severity) for d in report.diagnostics), *advice_diagnostics(report)]:
            uri = Path(d.file).resolve().as_uri()
            lines = self.server.lines_of(d.file)
            named = d.block is None or f"block {d.block}" in d.message
            msg = d.message if named else f"{d.message} (block {d.block})"
            by_uri.setdefault(uri, []).append(self.server.lsp_diagnostic(
                lines, d.line, d.column, d.end_line, d.end_column, severity, d.code, msg))
        # Files of the task always get a publish, so fixed problems disappear.
        uris = set(by_uri) | self._published.get(task.root, set())
        uris |= {p.resolve().as_uri() for p in task.sources}
        for uri in uris:
            diags = by_uri.get(uri, [])
            before = (evaluated or {}).get(uri)
            if diags and before is not None:
                diags = moved_with_their_lines(diags, before, self._text_now(uri))
            self.server.set_diagnostics(uri, self.SOURCE, diags)
        self._published[task.root] = set(by_uri)

    def _text_now(self, uri: str) -> str:
        doc = self.server.workspace.text_documents.get(uri)
        if doc is not None:
            return doc.source
        return "\n".join(self.server.lines_of(to_fs_path(uri) or ""))


def advice_diagnostics(report: Report) -> list[tuple[Diagnostic, str]]:
    """The advisor's findings as diagnostics on the line to change, with their LSP severity:
    information, or a hint when the saving is small (docs/advisor.md)."""
    return [(diagnostic(f.file, f.line, "info", f.code, f.message), f.severity) for f in report.advice]


def stale_withdrawn(diags: list[types.Diagnostic], change: types.TextDocumentContentChangeEvent
                    ) -> list[types.Diagnostic]:
    """The evaluated diagnostics still true to the text after one edit: those on the lines it
    touches are dropped (the verdict was about other code), those below it move with their lines;
    a whole-document change drops them all."""
    if not isinstance(change, types.TextDocumentContentChangePartial):
        return []
    first, last = change.range.start.line, change.range.end.line
    shift = change.text.count("\n") - (last - first)
    out = []
    for d in diags:
        if d.range.end.line < first:
            out.append(d)
        elif d.range.start.line > last:
            out.append(_at_line(d, shift))
    return out


def moved_with_their_lines(diags: list[types.Diagnostic], before: str, after: str) -> list[types.Diagnostic]:
    """Diagnostics about `before` placed on `after`: each on the line its line became, dropped
    where that line was changed or removed (a line-level diff)."""
    if before == after:
        return diags
    old, new = before.splitlines(), after.splitlines()
    where: dict[int, int] = {}
    for tag, i1, i2, j1, _ in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            where.update({i1 + k: j1 + k for k in range(i2 - i1)})
    out = []
    for d in diags:
        start, end = where.get(d.range.start.line), where.get(d.range.end.line)
        if start is None or end is None or end - start != d.range.end.line - d.range.start.line:
            continue
        out.append(_at_line(d, start - d.range.start.line))
    return out


def _at_line(d: types.Diagnostic, shift: int) -> types.Diagnostic:
    if shift == 0:
        return d
    start, end = d.range.start, d.range.end
    moved = types.Range(start=types.Position(line=start.line + shift, character=start.character),
                        end=types.Position(line=end.line + shift, character=end.character))
    return types.Diagnostic(range=moved, message=d.message, severity=d.severity, code=d.code, source=d.source,
                            data=d.data)


def _texts_on_disk(task: Task) -> dict[str, str]:
    """uri -> text of the task's files as an evaluation starting now reads them."""
    out = {}
    for p in task.sources:
        try:
            out[p.resolve().as_uri()] = p.read_text()
        except OSError:
            pass
    return out


def _task_error(task: Task, message: str) -> Report:
    """A report that says why the task could not be evaluated, on the kernel's first line."""
    where = Diagnostic(file=str(task.kernel), line=1, column=1, end_line=1, end_column=1, severity="error",
                       code="task-error", message=message)
    return Report(task=str(task.root), kernel=str(task.kernel), status="harness_error", diagnostics=[where])
