"""Suggestions: "Optimize with SAGE" runs an episode in the agent process; its best correct
candidate becomes a code action titled honestly ("SAGE rewrite: est. 1.8x (CPU model), correct
on 5 trials") and a `sage/suggestion` notification carrying the suggested files whole (and a
diff, for editors that show one). Applying it replaces those files and logs a person's
acceptance; the reject command logs a rejection. The episode stays open in the memory until
then (no decision: the memory's editor timeout credits it as the agent alone would). This
feature also keeps the resident rules hover shows fresh, and answers "Show memory"."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from pygls.uris import to_fs_path

from sage_npu.agent.worker import (
    AgentWorker,
    DecideAnswer,
    DecideRequest,
    OptimizeRequest,
    OptimizeResult,
    Overview,
    OverviewRequest,
    Progress,
    ResidentRule,
    RulesRequest,
    TokensProgress,
    WorkerError,
)
from sage_npu.npu_eval.report import labelled
from sage_npu.npu_eval.task import Task, TaskError, load_task
from sage_npu.server.features.base import Feature
from sage_npu.server.scaffold import scaffold
from sage_npu.server.stores import ResidentRules

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer

log = logging.getLogger("sage_npu.server.suggestions")

SHOW_MEMORY = "sage.showMemory"
OPTIMIZE = "sage.optimize"
ACCEPT = "sage.acceptSuggestion"
REJECT = "sage.rejectSuggestion"
NOTIFICATION = "sage/suggestion"


class SuggestedFile(BaseModel):
    """One file of a suggestion: where it is and its whole suggested text."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    path: str   # absolute
    name: str   # relative to the task folder, as the diff names it
    text: str


class SuggestionNotice(BaseModel):
    """The `sage/suggestion` notification's parameters (camelCase on the wire); the apply code
    action carries the same as its `data`."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    uri: str
    task: str
    title: str
    episode_id: str
    attempt_id: str
    speedup: float | None
    estimated: bool   # the speedup comes from the CPU cost model
    files: list[SuggestedFile]
    diff: str         # unified diff of the same change, a/<name> to b/<name>


@dataclass
class Suggestion:
    task_root: Path
    result: OptimizeResult

    @property
    def title(self) -> str:
        c = self.result.best.correctness
        t = self.result.best.timing
        passed = c.passed if c is not None else 0
        estimated = t is None or t.estimated
        if self.result.status == "fixed" and t is not None:
            return f"SAGE fix: correct on {passed} trials ({labelled(f'{t.estimated_us:.2f} us', estimated)})"
        return f"SAGE rewrite: {labelled(f'{self.result.speedup:.2f}x', estimated)}, correct on {passed} trials"

    def files(self) -> list[SuggestedFile]:
        """The files the suggestion changes (against their text on disk now), whole."""
        out = []
        for name, text in self.result.best_files.items():
            path = self.task_root / name
            try:
                if path.read_text() == text:
                    continue
            except OSError:
                pass   # a file the suggestion creates
            out.append(SuggestedFile(path=str(path.resolve()), name=name, text=text))
        return out

    def notice(self, uri: str) -> SuggestionNotice:
        r = self.result
        return SuggestionNotice(uri=uri, task=str(self.task_root), title=self.title, episode_id=r.episode_id,
                                attempt_id=r.best_attempt_id, speedup=r.speedup, estimated=r.best.backend != "ascend",
                                files=self.files(), diff=r.diff)


def progress_message(p: Progress) -> str:
    """One line for the client's progress display."""
    if isinstance(p, TokensProgress):
        return f"the model is answering ({p.chars} characters)"
    a = p.attempt
    est = f"{a.estimated_us:.2f} us" if a.estimated_us is not None else a.status
    return f"turn {a.turn}: {a.transform} -> {est}"


class Suggestions(Feature):
    def __init__(self, server: SageServer, worker: AgentWorker, rules: ResidentRules) -> None:
        super().__init__(server)
        self.by_task: dict[Path, Suggestion] = {}
        self.running: set[Path] = set()
        self.worker = worker   # episodes and the memory live in this process, not the server's
        self.rules = rules     # refreshed here, read by hover

    def commands(self) -> dict[str, Callable[..., Any]]:
        return {OPTIMIZE: self.optimize, ACCEPT: self.accept, REJECT: self.reject, SHOW_MEMORY: self.memory_overview}

    def shutdown(self) -> None:
        self.worker.close()

    # ---- resident rules, for hover ----

    def initialized(self, params: types.InitializedParams) -> None:
        self._refresh = asyncio.get_running_loop().create_task(self.refresh_rules())

    async def refresh_rules(self) -> None:
        """Reload the resident rules from the agent process (hover answers from this copy)."""
        try:
            rules: list[ResidentRule] = await asyncio.wrap_future(
                self.worker.call(RulesRequest(memory=self.server.settings.memory)))
            self.rules.replace(rules)
        except Exception:  # noqa: BLE001 - hover works without rules
            log.exception("cannot read the resident rules")

    # ---- code actions ----

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        if not self.server.is_ascendc(uri):
            return []
        task = _task_of(uri)
        if task is None:
            return []
        if not task.runnable:
            return self._scaffold_action(task)
        actions = []
        sug = self.by_task.get(task.root)
        if sug is not None:
            actions += self._suggestion_actions(uri, sug)
        if task.root not in self.running:
            actions.append(types.CodeAction(
                title="Optimize with SAGE", kind=types.CodeActionKind.RefactorRewrite,
                command=types.Command(title="Optimize with SAGE", command=OPTIMIZE, arguments=[uri])))
        return actions

    def _suggestion_actions(self, uri: str, sug: Suggestion) -> list[types.CodeAction]:
        notice = sug.notice(uri)
        decision = [notice.task, notice.episode_id, notice.attempt_id]
        return [
            types.CodeAction(
                title=sug.title, kind=types.CodeActionKind.RefactorRewrite, is_preferred=True,
                edit=types.WorkspaceEdit(changes=_full_file_edits(self.server, notice.files)),
                command=types.Command(title="log the acceptance", command=ACCEPT, arguments=decision),
                data=notice.model_dump(mode="json", by_alias=True)),
            types.CodeAction(
                title="SAGE: reject this rewrite", kind=types.CodeActionKind.RefactorRewrite,
                command=types.Command(title="reject", command=REJECT, arguments=decision)),
        ]

    def _scaffold_action(self, task: Task) -> list[types.CodeAction]:
        files = scaffold(task.kernel)
        if not files:
            return []
        changes: list = []
        for name, text in files.items():
            path = task.root / name
            if path.exists():
                continue
            uri = path.resolve().as_uri()
            changes.append(types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True)))
            changes.append(types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=[types.TextEdit(range=types.Range(start=types.Position(line=0, character=0),
                                                        end=types.Position(line=0, character=0)), new_text=text)]))
        if not changes:
            return []
        return [types.CodeAction(title="SAGE: create host.py and reference.py for this kernel",
                                 kind=types.CodeActionKind.Source,
                                 edit=types.WorkspaceEdit(document_changes=changes))]

    # ---- commands ----

    async def optimize(self, uri: str) -> dict:
        task = _task_of(uri)
        if task is None or not task.runnable:
            return {"started": False, "reason": "not a kernel task (it needs reference.py and host.py)"}
        if task.root in self.running:
            return {"started": False, "reason": "an episode is already running for this task"}
        self.running.add(task.root)
        try:
            result = await self._run_episode(task)
        except WorkerError as e:
            self.server.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error, message=f"SAGE: the episode failed: {e}"))
            return {"started": True, "status": "error", "reason": str(e)}
        finally:
            self.running.discard(task.root)
        if result.error and result.error != "cancelled":
            self.server.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"SAGE: the episode stopped early: {result.error}"))
        if result.status not in ("improved", "fixed"):
            msg = ("no faster correct candidate found" if result.status == "no_improvement"
                   else "the kernel is not correct yet: fix it first")
            self.server.window_show_message(types.ShowMessageParams(type=types.MessageType.Info,
                                                                    message=f"SAGE: {msg}"))
            return {"started": True, "status": result.status, "turns": result.turns, "error": result.error}
        sug = Suggestion(task.root, result)
        self.by_task[task.root] = sug
        self.server.protocol.notify(NOTIFICATION, sug.notice(uri).model_dump(mode="json", by_alias=True))
        return {"started": True, "status": result.status, "title": sug.title, "turns": result.turns,
                "error": result.error}

    async def _run_episode(self, task: Task) -> OptimizeResult:
        """The episode in the agent process, with $/progress (cancellable) when the client supports it."""
        token = str(uuid.uuid4())
        progress = self.server.supports_progress()
        loop = asyncio.get_running_loop()

        def report(p: Progress) -> None:   # on the worker's reader thread
            if progress:
                loop.call_soon_threadsafe(self.server.work_done_progress.report, token,
                                          types.WorkDoneProgressReport(message=progress_message(p)))

        try:
            if progress:
                await self.server.work_done_progress.create_async(token)
                self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                    title="SAGE", message=f"optimizing {task.kernel.name}", cancellable=True))
            s = self.server.settings
            pending = self.worker.call(OptimizeRequest(task=str(task.root), eval=s.eval, agent=s.agent,
                                                       memory=s.memory), report)
            if progress:
                # The client's cancel button: the episode stops before its next candidate and answers
                # with what it found.
                self.server.work_done_progress.tokens[token].add_done_callback(
                    lambda f: self.worker.cancel(pending) if f.cancelled() else None)
            result: OptimizeResult = await asyncio.wrap_future(pending)
            await self.refresh_rules()
            return result
        finally:
            if progress:
                self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))

    async def memory_overview(self) -> dict:
        """The memory's counts and its resident rules, for a client's "Show memory" view."""
        try:
            request = OverviewRequest(memory=self.server.settings.memory)
            o: Overview = await asyncio.wrap_future(self.worker.call(request))
        except WorkerError as e:
            return {"exists": False, "reason": str(e)}
        if o.stats is None:
            return {"exists": False, "path": o.path, "reason": o.reason}
        rules = [r.model_dump(mode="json") for r in o.rules]
        return {"exists": True, **o.stats.model_dump(mode="json"), "rules": rules}

    async def accept(self, task_root: str, episode_id: str, attempt_id: str) -> dict:
        return await self.decide(task_root, episode_id, attempt_id, "accept")

    async def reject(self, task_root: str, episode_id: str, attempt_id: str) -> dict:
        return await self.decide(task_root, episode_id, attempt_id, "reject")

    async def decide(self, task_root: str, episode_id: str, attempt_id: str,
                     decision: Literal["accept", "reject"]) -> dict:
        sug = self.by_task.pop(Path(task_root), None)
        request = DecideRequest(episode_id=episode_id, decision=decision, attempt_id=attempt_id,
                                memory=self.server.settings.memory)
        try:
            credit: DecideAnswer = await asyncio.wrap_future(self.worker.call(request))
        except WorkerError as e:   # the person's edit stands even if the log fails
            log.error("logging the %s of %s failed: %s", decision, episode_id, e)
            return {"logged": False, "reason": str(e)}
        return {"logged": True, "decision": decision, "reward": credit.reward, "had_suggestion": sug is not None}


def _task_of(uri: str) -> Task | None:
    try:
        return load_task(Path(to_fs_path(uri) or ""))
    except TaskError:
        return None


def _full_file_edits(server: SageServer, files: list[SuggestedFile]) -> dict[str, list[types.TextEdit]]:
    """Replace each file whole, from its start to the end of its current text."""
    out = {}
    for f in files:
        path = Path(f.path)
        try:
            current = path.read_text()
        except OSError:
            current = "\n".join(server.lines_of(str(path)))
        end = types.Position(line=len(current.splitlines()), character=0)
        out[path.as_uri()] = [types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=end),
                                             new_text=f.text)]
    return out
