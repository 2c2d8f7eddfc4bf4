"""The language server: pygls 2, one registration site, features behind it.

The event loop only routes messages: evaluation (plan worker with torch, compiler, sandboxed
kernel runs) happens in worker processes driven from a thread, so hovers and code lenses
answer while a kernel is being evaluated. Each feature hook is contained: a failing feature
is logged and the others, and the server, go on.
"""

from __future__ import annotations

import inspect
import logging
import re
from pathlib import Path
from typing import Any

from lsprotocol import types
from pydantic import BaseModel, Field, ValidationError
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from sage_npu.agent.settings import AgentSettings
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.server.positions import to_range
from sage_npu.server.settings import ServerSettings

log = logging.getLogger("sage_npu.server")

_ASCENDC_MARK = re.compile(r"kernel_operator\.h|__aicore__")  # DESIGN section 7; CUDA has __global__ too
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "info": types.DiagnosticSeverity.Information}


class EditorSettings(BaseModel):
    """What the editor may set under `sage.*` (camelCase accepted on the wire)."""

    eval: EvalSettings = Field(default_factory=EvalSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)


def _aliases(raw: dict) -> dict:
    """The short spellings editors' docs use: `sage.llm.*` is `sage.agent.llm.*`, `sage.memory.path`
    is `sage.memory.db`."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
    if isinstance(out.get("llm"), dict):
        agent = out.setdefault("agent", {})
        if isinstance(agent, dict):
            agent["llm"] = {**out.pop("llm"), **(agent.get("llm") or {})}
    memory = out.get("memory")
    if isinstance(memory, dict) and "path" in memory:
        memory.setdefault("db", memory.pop("path"))
    return out


def _leaves(d: dict, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    out = []
    for k, v in d.items():
        out += _leaves(v, (*prefix, k)) if isinstance(v, dict) and v else [((*prefix, k), v)]
    return out


def _with(base: dict, path: tuple[str, ...], value: Any) -> dict:
    """A copy of `base` with the value at `path` replaced (nested dicts copied along the way)."""
    head, *rest = path
    inner = base.get(head)
    return {**base, head: _with(inner, tuple(rest), value) if rest and isinstance(inner, dict) else value}


def _snake(d: Any) -> Any:
    if isinstance(d, dict):
        return {re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): _snake(v) for k, v in d.items()}
    return d


class SageServer(LanguageServer):
    def __init__(self, settings: EditorSettings | None = None) -> None:
        from sage_npu import __version__

        super().__init__("sage-npu", __version__)
        self.defaults = settings or EditorSettings()
        self.settings = self.defaults
        self._diagnostics: dict[str, dict[str, list[types.Diagnostic]]] = {}
        from sage_npu.server.features.clangd import ClangdConfig
        from sage_npu.server.features.code_actions import QuickFixes
        from sage_npu.server.features.code_lens import CodeLenses
        from sage_npu.server.features.evaluation import Evaluation
        from sage_npu.server.features.hover import Hovers
        from sage_npu.server.features.static_checks import StaticChecks
        from sage_npu.server.features.suggestions import Suggestions

        self.evaluation = Evaluation(self)
        self.static_checks = StaticChecks(self)
        self.hovers = Hovers(self)
        self.suggestions = Suggestions(self)
        self.hovers.rules_for = self.suggestions.rules_for  # resident rules of the experience memory
        self.features = [self.static_checks, self.evaluation, CodeLenses(self), QuickFixes(self), self.hovers,
                         ClangdConfig(self), self.suggestions]

    # ---- settings ----

    def apply_settings(self, raw: Any) -> None:
        """Editor settings over the server's defaults; a bad value gets a message and the default."""
        if not isinstance(raw, dict):
            return
        raw = raw.get("sage", raw)
        merged = self.defaults.model_dump()
        problems = []
        for part, values in _aliases(_snake(raw)).items():
            if part not in merged or not isinstance(values, dict):
                problems.append(f"sage.{part}: unknown setting")
                continue
            # Leaf by leaf, so one bad value falls back alone and a nested block (agent.llm) keeps the
            # fields the editor did not send.
            for path, value in _leaves(values):
                trial = _with(merged[part], path, value)
                try:
                    EditorSettings.model_validate({**merged, part: trial})
                    merged[part] = trial
                except ValidationError as e:
                    name = ".".join((part, *path))
                    problems.append(f"sage.{name}={value!r}: {e.errors()[0]['msg']}; using the default")
        self.settings = EditorSettings.model_validate(merged)
        self.evaluation.settings_changed()
        self.static_checks.settings_changed()
        for p in problems:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=p))

    # ---- documents ----

    def is_ascendc(self, uri: str) -> bool:
        path = to_fs_path(uri) or ""
        if path.endswith(".asc"):
            return True
        if not path.endswith((".cpp", ".h", ".hpp", ".cc", ".cce")):
            return False
        try:
            text = self.workspace.get_text_document(uri).source
        except Exception:  # noqa: BLE001 - a document we cannot read is not ours
            return False
        return bool(_ASCENDC_MARK.search(text))

    def lines_of(self, path: str) -> list[str]:
        uri = Path(path).resolve().as_uri()
        doc = self.workspace.text_documents.get(uri)
        if doc is not None:
            return doc.source.splitlines()
        try:
            return Path(path).read_text(errors="replace").splitlines()
        except OSError:
            return []

    def lsp_diagnostic(self, lines: list[str], line: int, column: int, end_line: int, end_column: int,
                       severity: str, code: str, message: str) -> types.Diagnostic:
        enc = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return types.Diagnostic(range=to_range(lines, line, column, end_line, end_column, enc), message=message,
                                severity=_SEVERITY.get(severity, types.DiagnosticSeverity.Error), code=code,
                                source="sage")

    def set_diagnostics(self, uri: str, source: str, diags: list[types.Diagnostic]) -> None:
        """Diagnostics come from several features (static checks, evaluation); publish their union."""
        per = self._diagnostics.setdefault(uri, {})
        per[source] = diags
        everything = [d for ds in per.values() for d in ds]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=everything))

    def refresh_code_lenses(self) -> None:
        caps = self.client_capabilities
        ws = caps.workspace if caps else None
        if ws and ws.code_lens and ws.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    # ---- fan-out ----

    async def dispatch(self, hook: str, params: Any) -> list:
        results = []
        for f in self.features:
            try:
                out = getattr(f, hook)(params)
                if inspect.isawaitable(out):
                    out = await out
                if out:
                    results.extend(out)
            except Exception:  # noqa: BLE001 - one feature's bug must not take the server down
                log.exception("feature %s failed in %s", type(f).__name__, hook)
        return results


def create_server(settings: EditorSettings | None = None) -> SageServer:
    from sage_npu.server.features.suggestions import ACCEPT, EVALUATE, OPTIMIZE, REJECT, SHOW_MEMORY

    server = SageServer(settings)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: SageServer, params: types.InitializedParams) -> None:
        await ls.dispatch("initialized", params)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: SageServer, params: types.DidOpenTextDocumentParams) -> None:
        await ls.dispatch("document_open", params)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: SageServer, params: types.DidChangeTextDocumentParams) -> None:
        await ls.dispatch("document_change", params)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: SageServer, params: types.DidSaveTextDocumentParams) -> None:
        await ls.dispatch("document_save", params)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: SageServer, params: types.DidCloseTextDocumentParams) -> None:
        await ls.dispatch("document_close", params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(ls: SageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        return await ls.dispatch("code_lens", params)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite,
                           types.CodeActionKind.Source]))
    async def code_action(ls: SageServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        actions = await ls.dispatch("code_action", params)
        only = params.context.only if params.context else None
        if only:  # kinds are hierarchical: "refactor" asks for "refactor.rewrite" too
            actions = [a for a in actions if a.kind and any(a.kind == k or a.kind.startswith(f"{k}.") for k in only)]
        return actions or None

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: SageServer, params: types.HoverParams) -> types.Hover | None:
        hovers = await ls.dispatch("hover", params)
        return hovers[0] if hovers else None

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: SageServer, params: types.DidChangeConfigurationParams) -> None:
        ls.apply_settings(params.settings)

    @server.command(EVALUATE)
    def evaluate(ls: SageServer, uri: str) -> dict:
        started = ls.evaluation.request(uri)
        return {"started": started} | ({} if started else {"reason": "not an Ascend C kernel task"})

    @server.command(SHOW_MEMORY)
    async def show_memory(ls: SageServer) -> dict:
        return await ls.suggestions.memory_overview()

    @server.command(OPTIMIZE)
    async def optimize(ls: SageServer, uri: str) -> dict:  # pygls passes the arguments spread
        return await ls.suggestions.optimize(uri)

    @server.command(ACCEPT)
    async def accept(ls: SageServer, task_root: str, episode_id: str, attempt_id: str) -> dict:
        return await ls.suggestions.decide(task_root, episode_id, attempt_id, "accept")

    @server.command(REJECT)
    async def reject(ls: SageServer, task_root: str, episode_id: str, attempt_id: str) -> dict:
        return await ls.suggestions.decide(task_root, episode_id, attempt_id, "reject")

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: SageServer, params: Any) -> None:
        ls.evaluation.close()
        ls.suggestions.close()

    @server.feature(types.INITIALIZE)
    def initialize(ls: SageServer, params: types.InitializeParams) -> None:
        ls.apply_settings(params.initialization_options or {})

    return server


def serve(settings: EditorSettings | None = None, tcp: tuple[str, int] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)  # its INFO level logs every message
    server = create_server(settings)
    if tcp:
        server.start_tcp(*tcp)
    else:
        server.start_io()


if __name__ == "__main__":
    serve()
