"""Suggestions: "Optimize with SAGE" (`sage.optimize`) starts an episode in the agent process and
answers at once; the episode reports through notifications: `$/progress` while it runs (where
the client supports it), and when it ends a `window/showMessage` with the verified gain (or why
there is none) and a `sage/episode` notification (`EpisodeNotice`). Its best correct candidate
becomes a code action titled honestly ("SAGE rewrite: est. 1.8x (CPU model), correct on 5
trials"), a "show the rewrite's diff" action (the diff is written to the task's `.sage/` folder
and shown with `window/showDocument`) and a `sage/suggestion` notification carrying the suggested
files whole (and a diff, for editors that show one).

Applying the rewrite only changes buffers. The person's decision is read from what follows
(`decisions.py`): saving the rewrite logs an acceptance; undoing it, or closing its buffer unsaved,
a rejection; the reject command too. Each decision is logged in the experience memory and sent as
`sage/decision` (`DecisionNotice`). With no decision within `memory.editor_timeout_s`, the episode
is credited as the agent alone would have (the memory's expiry). This feature also keeps the
resident rules hover shows fresh, and answers "Show memory"."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from sage_npu.agent.episode import SUGGESTING, unified_diff
from sage_npu.agent.worker import (
    AgentWorker,
    DecideAnswer,
    DecideRequest,
    ExpireAnswer,
    ExpireRequest,
    OptimizeRequest,
    OptimizeResult,
    Overview,
    OverviewRequest,
    Progress,
    ResidentRule,
    RulesRequest,
    WorkerError,
)
from sage_npu.npu_eval.task import Task, TaskError, load_task
from sage_npu.server.features.base import Feature
from sage_npu.server.features.decisions import Decision, DecisionWatch, WatchedFile, read_disk
from sage_npu.server.features.suggestion_notices import (
    DecisionNotice,
    EpisodeNotice,
    SuggestedFile,
    Suggestion,
    episode_message,
    progress_message,
)
from sage_npu.server.scaffold import scaffold
from sage_npu.server.stores import ResidentRules

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer

log = logging.getLogger("sage_npu.server.suggestions")

SHOW_MEMORY = "sage.showMemory"
OPTIMIZE = "sage.optimize"
ACCEPT = "sage.acceptSuggestion"
REJECT = "sage.rejectSuggestion"
SHOW_DIFF = "sage.showRewriteDiff"   # not sage.showSuggestionDiff: the VS Code client has its own
NOTIFICATION = "sage/suggestion"
EPISODE_NOTIFICATION = "sage/episode"
DECISION_NOTIFICATION = "sage/decision"
DIFF_FILE = Path(".sage") / "suggestion.diff"   # in the task folder, beside the CLI's .sage/suggestion/
RENDERS_NOTICES = "sageNotices"   # experimental client capability: the client renders sage/episode, sage/decision
POLL_S = 2.0   # how often the disk is checked for a saved rewrite the client did not report


@dataclass
class Pending:
    """A suggestion offered and not yet decided: its files watched, its deadline running."""

    suggestion: Suggestion
    uri: str
    watch: DecisionWatch
    timer: asyncio.Task | None = None


class Suggestions(Feature):
    def __init__(self, server: SageServer, worker: AgentWorker, rules: ResidentRules) -> None:
        super().__init__(server)
        self.by_task: dict[Path, Pending] = {}
        self.running: dict[Path, asyncio.Task] = {}
        # episode id -> its decision being logged, or logged: what a late accept command answers
        self.decisions: dict[str, asyncio.Task[DecisionNotice]] = {}
        self._startup: asyncio.Task | None = None
        self.worker = worker   # episodes and the memory live in this process, not the server's
        self.rules = rules     # refreshed here, read by hover

    def commands(self) -> dict[str, Callable[..., Any]]:
        return {OPTIMIZE: self.optimize, ACCEPT: self.accept, REJECT: self.reject, SHOW_DIFF: self.show_diff,
                SHOW_MEMORY: self.memory_overview}

    def shutdown(self) -> None:
        for p in self.by_task.values():
            if p.timer is not None:
                p.timer.cancel()
        self.worker.close()

    # ---- start-up: the agent process, the resident rules, overdue episodes ----

    def initialized(self, params: types.InitializedParams) -> None:
        # Started now, not by the first command: its start-up overlaps the editor's own.
        self.worker.start()
        self._startup = asyncio.get_running_loop().create_task(self._start_up())

    async def _start_up(self) -> None:
        await self.refresh_rules()
        await self._expire()   # episodes an earlier session left undecided past their deadline

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
        pending = self.by_task.get(task.root)
        if pending is not None:
            actions += self._suggestion_actions(uri, pending.suggestion)
        if task.root not in self.running:
            actions.append(types.CodeAction(
                title="Optimize with SAGE", kind=types.CodeActionKind.RefactorRewrite,
                command=types.Command(title="Optimize with SAGE", command=OPTIMIZE, arguments=[uri])))
        return actions

    def _suggestion_actions(self, uri: str, sug: Suggestion) -> list[types.CodeAction]:
        notice = sug.notice(uri)
        decision = [notice.task, notice.episode_id, notice.attempt_id]
        return [
            # No command: applying decides nothing; saving the rewrite is the acceptance.
            types.CodeAction(
                title=sug.title, kind=types.CodeActionKind.RefactorRewrite, is_preferred=True,
                edit=types.WorkspaceEdit(changes=_full_file_edits(self.server, notice.files)),
                data=notice.model_dump(mode="json", by_alias=True)),
            types.CodeAction(
                title="SAGE: show the rewrite's diff", kind=types.CodeActionKind.RefactorRewrite,
                command=types.Command(title="show the diff", command=SHOW_DIFF, arguments=[notice.task])),
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

    # ---- episodes: started at once, reported by notifications ----

    async def optimize(self, uri: str) -> dict:
        """Start an episode and answer at once; how it ends comes as sage/episode and window/showMessage."""
        task = _task_of(uri)
        if task is None or not task.runnable:
            return {"started": False, "reason": "not a kernel task (it needs reference.py and host.py)"}
        if task.root in self.running:
            return {"started": False, "reason": "an episode is already running for this task"}
        self.running[task.root] = asyncio.get_running_loop().create_task(self._episode(task, uri))
        return {"started": True, "task": str(task.root)}

    async def _episode(self, task: Task, uri: str) -> None:
        try:
            result = await self._run_episode(task)
            self._finish(task, uri, result)
        except Exception as e:  # noqa: BLE001 - the person must hear of it: nobody awaits this task
            if not isinstance(e, WorkerError):
                log.exception("the episode for %s failed", task.root)
            self._notify_episode(EpisodeNotice(uri=uri, task=str(task.root), status="failed", error=str(e),
                                               message=f"SAGE: the episode for {task.kernel.name} failed: {e}"),
                                 types.MessageType.Error)
            return
        finally:
            self.running.pop(task.root, None)
        await self.refresh_rules()

    def _finish(self, task: Task, uri: str, result: OptimizeResult) -> None:
        sug = Suggestion.of(task.root, result) if result.status in SUGGESTING else None
        if sug is not None and not sug.files:
            sug = None
        if sug is not None:
            self._offer(uri, sug)
        notice = EpisodeNotice(
            uri=uri, task=str(task.root), status=result.status, episode_id=result.episode_id,
            message=episode_message(task.kernel.name, result, sug), speedup=sug.result.speedup if sug else None,
            estimated=result.best.backend != "ascend", title=sug.title if sug else None, turns=result.turns,
            model=result.model, error=result.error or None)
        stopped = result.error and result.error != "cancelled"
        self._notify_episode(notice, types.MessageType.Warning if stopped else types.MessageType.Info)

    def _renders_notices(self) -> bool:
        """The client shows sage/episode and sage/decision itself (it says so in its experimental
        capabilities, as the VS Code client does): no window/showMessage to say it twice."""
        caps = self.server.client_capabilities
        experimental = caps.experimental if caps else None
        return isinstance(experimental, dict) and experimental.get(RENDERS_NOTICES) is True

    def _notify_episode(self, notice: EpisodeNotice, kind: types.MessageType) -> None:
        if not self._renders_notices():
            self.server.window_show_message(types.ShowMessageParams(type=kind, message=notice.message))
        self.server.protocol.notify(EPISODE_NOTIFICATION, notice.model_dump(mode="json", by_alias=True))

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
            return await asyncio.wrap_future(pending)
        finally:
            if progress:
                self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))

    # ---- the person's decision: watched, not clicked ----

    def _offer(self, uri: str, sug: Suggestion) -> None:
        old = self.by_task.pop(sug.task_root, None)
        if old is not None and old.timer is not None:
            old.timer.cancel()   # its episode stays open in the memory until its own deadline
        watched = [WatchedFile(path=Path(f.path), name=f.name, suggested=f.text, original=self._current(Path(f.path)))
                   for f in sug.files]
        pending = Pending(sug, uri, DecisionWatch(watched))
        self.by_task[sug.task_root] = pending
        pending.timer = asyncio.get_running_loop().create_task(self._watch(pending))
        self.server.protocol.notify(NOTIFICATION, sug.notice(uri).model_dump(mode="json", by_alias=True))

    def _current(self, path: Path) -> str | None:
        """The file's text as the person sees it: its open buffer, else the disk."""
        doc = self.server.workspace.text_documents.get(path.resolve().as_uri())
        return doc.source if doc is not None else read_disk(path)

    async def _watch(self, pending: Pending) -> None:
        """Check the disk now and then (a client may not report every file it saves); past the
        deadline, credit the episode as the agent's."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.server.settings.memory.editor_timeout_s
        while loop.time() < deadline:
            await asyncio.sleep(min(POLL_S, max(0.0, deadline - loop.time())))
            decision = pending.watch.saved()
            if decision is not None:
                self._decide_later(pending, decision)
                return
        if self._take(pending):
            await self._timed_out(pending)

    async def _timed_out(self, pending: Pending) -> None:
        sug = pending.suggestion
        episode = sug.result.episode_id
        for _ in range(5):   # the memory's deadline was set when the episode was recorded, just before ours
            answer = await self._expire()
            if answer is not None and episode in answer.episode_ids:
                break
            await asyncio.sleep(1.0)
        else:
            return
        timeout = self.server.settings.memory.editor_timeout_s
        self._notify_decision(DecisionNotice(
            task=str(sug.task_root), episode_id=episode, decision="timeout", logged=True,
            reason=f"no decision within {timeout:g} s: credited as the agent's alone"))

    async def _expire(self) -> ExpireAnswer | None:
        try:
            return await asyncio.wrap_future(self.worker.call(ExpireRequest(memory=self.server.settings.memory)))
        except WorkerError as e:
            log.error("crediting the undecided episodes failed: %s", e)
            return None

    def _pending_of(self, uri: str) -> list[tuple[Pending, Path]]:
        path = Path(to_fs_path(uri) or "").resolve()
        return [(p, path) for root, p in list(self.by_task.items()) if path.is_relative_to(root.resolve())]

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._buffer_changed(params.text_document.uri)

    def document_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._buffer_changed(params.text_document.uri)

    def _buffer_changed(self, uri: str) -> None:
        for pending, path in self._pending_of(uri):
            decision = pending.watch.changed(path, self.server.workspace.get_text_document(uri).source)
            if decision is not None:
                self._decide_later(pending, decision)

    def document_save(self, params: types.DidSaveTextDocumentParams) -> None:
        for pending, _ in self._pending_of(params.text_document.uri):
            decision = pending.watch.saved()
            if decision is not None:
                self._decide_later(pending, decision)

    def document_close(self, params: types.DidCloseTextDocumentParams) -> None:
        for pending, path in self._pending_of(params.text_document.uri):
            decision = pending.watch.closed(path)
            if decision is not None:
                self._decide_later(pending, decision)

    def _take(self, pending: Pending) -> bool:
        """Stop watching the suggestion (its timer too, unless that is the caller); False when it
        was decided or replaced already."""
        root = pending.suggestion.task_root
        if self.by_task.get(root) is not pending:
            return False
        del self.by_task[root]
        if pending.timer is not None and pending.timer is not asyncio.current_task():
            pending.timer.cancel()
        return True

    def _decide_later(self, pending: Pending, decision: Decision) -> asyncio.Task[DecisionNotice] | None:
        if not self._take(pending):
            return None
        task = asyncio.get_running_loop().create_task(self._log_decision(pending.suggestion, decision))
        self.decisions[pending.suggestion.result.episode_id] = task
        return task

    async def _log_decision(self, sug: Suggestion, decision: Decision) -> DecisionNotice:
        r = sug.result
        request = DecideRequest(episode_id=r.episode_id, decision=decision.verdict, attempt_id=r.best_attempt_id,
                                memory=self.server.settings.memory)
        try:
            credit: DecideAnswer = await asyncio.wrap_future(self.worker.call(request))
            notice = DecisionNotice(task=str(sug.task_root), episode_id=r.episode_id, decision=decision.verdict,
                                    reason=decision.reason, logged=True, reward=credit.reward)
        except WorkerError as e:   # the person's edit stands even if the log fails
            log.error("logging the %s of %s failed: %s", decision.verdict, r.episode_id, e)
            notice = DecisionNotice(task=str(sug.task_root), episode_id=r.episode_id, decision=decision.verdict,
                                    reason=f"{decision.reason}; not logged: {e}", logged=False)
        self._notify_decision(notice)
        return notice

    def _notify_decision(self, notice: DecisionNotice) -> None:
        what = {"accept": "accepted", "reject": "rejected", "timeout": "left undecided"}[notice.decision]
        logged = "logged in the experience memory" if notice.logged else "NOT logged"
        if not self._renders_notices():
            self.server.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Info if notice.logged else types.MessageType.Warning,
                message=f"SAGE: rewrite {what} ({notice.reason}): {logged}."))
        self.server.protocol.notify(DECISION_NOTIFICATION, notice.model_dump(mode="json", by_alias=True))

    # ---- commands ----

    async def show_diff(self, task_root: str) -> dict:
        """Write the pending suggestion's diff against the files as they read now to the task's
        .sage/ folder and ask the client to show it; say where it is when the client cannot."""
        pending = self.by_task.get(Path(task_root))
        if pending is None:
            return {"shown": False, "reason": "no suggestion waits for this task"}
        files = pending.suggestion.files
        before = {f.name: self._current(Path(f.path)) or "" for f in files}
        path = (Path(task_root) / DIFF_FILE).resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(unified_diff(before, {f.name: f.text for f in files}))
        shown = False
        try:
            answer = await asyncio.wait_for(self.server.window_show_document_async(
                types.ShowDocumentParams(uri=path.as_uri(), take_focus=True)), timeout=10)
            shown = bool(answer and answer.success)
        except Exception as e:  # noqa: BLE001 - a client without window/showDocument answers with an error
            log.info("the client did not show %s: %s", path, e)
        if not shown:
            self.server.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Info, message=f"SAGE: the rewrite's diff is in {path}"))
        return {"shown": shown, "path": str(path)}

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
        """Logs the acceptance only when the rewrite is saved (else it waits for the save)."""
        pending = self.by_task.get(Path(task_root))
        if pending is None or pending.suggestion.result.episode_id != episode_id:
            earlier = self.decisions.get(episode_id)
            if earlier is not None:
                return _answer(await earlier)
            return {"logged": False, "reason": "no suggestion of this episode waits for a decision"}
        decision = pending.watch.saved()
        task = self._decide_later(pending, decision) if decision is not None else None
        if task is None:
            return {"logged": False, "decision": None,
                    "reason": "not saved yet: the acceptance is logged when the rewritten files are saved"}
        return _answer(await task)

    async def reject(self, task_root: str, episode_id: str, attempt_id: str) -> dict:
        pending = self.by_task.get(Path(task_root))
        if pending is not None and pending.suggestion.result.episode_id == episode_id:
            task = self._decide_later(pending, Decision("reject", "rejected by command"))
            if task is not None:
                return _answer(await task)
        request = DecideRequest(episode_id=episode_id, decision="reject", attempt_id=attempt_id,
                                memory=self.server.settings.memory)
        try:   # an episode this session does not hold (a client that outlived a server restart)
            credit: DecideAnswer = await asyncio.wrap_future(self.worker.call(request))
        except WorkerError as e:
            return {"logged": False, "reason": str(e)}
        if not credit.credited:
            return {"logged": False, "reason": "the episode was credited already (decided, or past its deadline)"}
        return {"logged": True, "decision": "reject", "reward": credit.reward, "had_suggestion": False}


def _answer(notice: DecisionNotice) -> dict:
    """A decision as the accept/reject commands answer it."""
    return {"logged": notice.logged, "decision": notice.decision, "reward": notice.reward, "reason": notice.reason,
            "had_suggestion": True}


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
