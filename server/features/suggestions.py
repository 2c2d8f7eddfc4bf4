"""Suggestions (DESIGN section 7, second half): "Optimize with SAGE" runs an episode in the
background; its best correct candidate becomes a code action titled honestly ("SAGE rewrite:
est. 1.8x (CPU model), correct on 5 trials") and a `sage/suggestion` notification carrying the
diff. Applying it applies the edit and logs a person's acceptance; the reject command logs a
rejection. The episode stays open in the memory until then (no decision: the memory's editor
timeout credits it as the agent alone would)."""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from sage_npu.agent.episode import OptimizeResult
from sage_npu.agent.worker import AgentWorker, WorkerError
from sage_npu.npu_eval.report import labelled
from sage_npu.npu_eval.task import TaskError, load_task
from sage_npu.server.features.base import Feature
from sage_npu.server.scaffold import scaffold

log = logging.getLogger("sage_npu.server.suggestions")

EVALUATE = "sage.evaluate"
SHOW_MEMORY = "sage.showMemory"
OPTIMIZE = "sage.optimize"
ACCEPT = "sage.acceptSuggestion"
REJECT = "sage.rejectSuggestion"
NOTIFICATION = "sage/suggestion"


@dataclass
class Suggestion:
    task_root: Path
    result: OptimizeResult

    @property
    def title(self) -> str:
        c = self.result.best.correctness
        t = self.result.best.timing
        estimated = t is None or t.estimated
        if self.result.status == "fixed" and t is not None:
            return f"SAGE fix: correct on {c.passed} trials ({labelled(f'{t.estimated_us:.2f} us', estimated)})"
        return f"SAGE rewrite: {labelled(f'{self.result.speedup:.2f}x', estimated)}, correct on {c.passed} trials"


class Suggestions(Feature):
    def __init__(self, server) -> None:
        super().__init__(server)
        self.by_task: dict[Path, Suggestion] = {}
        self.running: set[Path] = set()
        self.worker = AgentWorker()   # episodes and the memory live in this process, not the server's
        self._rules: list[tuple[str, str, str]] = []  # resident rules (id, title, text), for hover

    def _settings(self, *parts: str) -> dict:
        return {p: getattr(self.server.settings, p).model_dump(mode="json") for p in parts}

    def close(self) -> None:
        self.worker.close()

    # ---- resident rules, for hover ----

    def initialized(self, params: types.InitializedParams) -> None:
        self._refresh = asyncio.get_running_loop().create_task(self.refresh_rules())

    async def refresh_rules(self) -> None:
        """Reload the resident rules from the agent process (hover answers from this copy)."""
        try:
            self._rules = [tuple(r) for r in await asyncio.wrap_future(
                self.worker.call("rules", self._settings("memory")))]
        except Exception:  # noqa: BLE001 - hover works without rules
            log.exception("cannot read the resident rules")

    def rules_for(self, api: str) -> list[str]:
        """Resident rules that mention the API, one Markdown line each (answered from memory)."""
        word = re.compile(rf"\b{re.escape(api)}\b")
        return [f"`{rid}` {title}" for rid, title, text in self._rules if word.search(f"{title} {text}")]

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
            edit = types.WorkspaceEdit(changes=_full_file_edits(self.server, task.root, sug.result.best_files))
            actions.append(types.CodeAction(
                title=sug.title, kind=types.CodeActionKind.RefactorRewrite, edit=edit, is_preferred=True,
                command=types.Command(title="log the acceptance", command=ACCEPT,
                                      arguments=[str(task.root), sug.result.episode_id, sug.result.best_attempt_id])))
            actions.append(types.CodeAction(
                title="SAGE: reject this rewrite", kind=types.CodeActionKind.RefactorRewrite,
                command=types.Command(title="reject", command=REJECT,
                                      arguments=[str(task.root), sug.result.episode_id, sug.result.best_attempt_id])))
        if task.root not in self.running:
            actions.append(types.CodeAction(
                title="Optimize with SAGE", kind=types.CodeActionKind.RefactorRewrite,
                command=types.Command(title="Optimize with SAGE", command=OPTIMIZE, arguments=[uri])))
        return actions

    def _scaffold_action(self, task) -> list[types.CodeAction]:
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
        token = str(uuid.uuid4())
        progress = self.server.evaluation.supports_progress()
        try:
            if progress:
                await self.server.work_done_progress.create_async(token)
                self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                    title="SAGE", message=f"optimizing {task.kernel.name}", cancellable=True))

            loop = asyncio.get_running_loop()

            def report(a: dict) -> None:   # on the worker's reader thread
                if not progress:
                    return
                if a["kind"] == "tokens":
                    message = f"the model is answering ({a['chars']} characters)"
                else:
                    est = f"{a['estimated_us']:.2f} us" if a["estimated_us"] is not None else a["status"]
                    message = f"turn {a['turn']}: {a['transform']} -> {est}"
                loop.call_soon_threadsafe(self.server.work_done_progress.report, token,
                                          types.WorkDoneProgressReport(message=message))

            request = {"task": str(task.root), **self._settings("eval", "agent", "memory")}
            pending = self.worker.call("optimize", request, report)
            if progress:
                # The client's cancel button: the episode stops before its next candidate and answers
                # with what it found.
                self.server.work_done_progress.tokens[token].add_done_callback(
                    lambda f: self.worker.cancel(pending) if f.cancelled() else None)
            try:
                result: OptimizeResult = await asyncio.wrap_future(pending)
            except WorkerError as e:
                self.server.window_show_message(types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"SAGE: the episode failed: {e}"))
                return {"started": True, "status": "error", "reason": str(e)}
            await self.refresh_rules()
        finally:
            self.running.discard(task.root)
            if progress:
                self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
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
        self.server.protocol.notify(NOTIFICATION, {
            "uri": uri, "task": str(task.root), "title": sug.title, "episodeId": result.episode_id,
            "attemptId": result.best_attempt_id, "speedup": result.speedup, "diff": result.diff,
            "estimated": result.best.backend != "ascend"})
        return {"started": True, "status": result.status, "title": sug.title, "turns": result.turns,
                "error": result.error}

    async def memory_overview(self) -> dict:
        """The memory's counts and its resident rules, for a client's "Show memory" view."""
        try:
            return await asyncio.wrap_future(self.worker.call("overview", self._settings("memory")))
        except WorkerError as e:
            return {"exists": False, "reason": str(e)}

    async def decide(self, task_root: str, episode_id: str, attempt_id: str, decision: str) -> dict:
        sug = self.by_task.pop(Path(task_root), None)
        request = {"episode_id": episode_id, "decision": decision, "attempt_id": attempt_id,
                   **self._settings("memory")}
        try:
            credit = await asyncio.wrap_future(self.worker.call("decide", request))
        except WorkerError as e:   # the person's edit stands even if the log fails
            log.error("logging the %s of %s failed: %s", decision, episode_id, e)
            return {"logged": False, "reason": str(e)}
        return {"logged": True, "decision": decision, "reward": credit.reward, "had_suggestion": sug is not None}


def _task_of(uri: str):
    try:
        return load_task(Path(to_fs_path(uri) or ""))
    except TaskError:
        return None


def _full_file_edits(server, root: Path, files: dict[str, str]) -> dict[str, list[types.TextEdit]]:
    """Replace each changed file whole (kernel and host.py), from its current text."""
    out = {}
    for name, text in files.items():
        path = root / name
        current = "\n".join(server.lines_of(str(path)))
        try:
            on_disk = path.read_text()
        except OSError:
            on_disk = current
        if on_disk == text:
            continue
        lines = on_disk.splitlines()
        end = types.Position(line=len(lines), character=0)
        out[path.resolve().as_uri()] = [types.TextEdit(range=types.Range(start=types.Position(line=0, character=0),
                                                                         end=end), new_text=text)]
    return out
