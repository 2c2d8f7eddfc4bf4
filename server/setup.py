"""The one registration site (as esbonio's `setup.py`): `create_server` builds the features with
their collaborators, registers every LSP handler once, each fanning its event out to the
features (`Feature` hooks, features/base.py), and registers the commands each feature declares.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from sage_npu.agent.worker import AgentWorker
from sage_npu.server.features.base import Feature
from sage_npu.server.server import ClientLog, SageServer
from sage_npu.server.settings import ComposedSettings


def build_features(server: SageServer) -> list[Feature]:
    """Every feature, each given its collaborators: the stores one writes and another reads, the
    static findings the quick fixes serve, the agent process the suggestions talk to."""
    from sage_npu.server.features.advice_actions import AdviceActions
    from sage_npu.server.features.clangd import ClangdConfig
    from sage_npu.server.features.code_actions import QuickFixes
    from sage_npu.server.features.code_lens import CodeLenses
    from sage_npu.server.features.debugging import Debugging
    from sage_npu.server.features.evaluation import Evaluation
    from sage_npu.server.features.hover import Hovers
    from sage_npu.server.features.static_checks import StaticChecks
    from sage_npu.server.features.suggestions import Suggestions
    from sage_npu.server.stores import ReportStore, ResidentRules

    reports, rules, worker = ReportStore(), ResidentRules(), AgentWorker()
    static_checks, evaluation = StaticChecks(server), Evaluation(server, reports, worker)
    return [static_checks, evaluation, CodeLenses(server, reports), Debugging(server, reports),
            QuickFixes(server, static_checks.findings), AdviceActions(server, evaluation.changes),
            Hovers(server, rules), ClangdConfig(server), Suggestions(server, worker, rules)]


def create_server(settings: ComposedSettings, version: str,
                  features: Callable[[SageServer], list[Feature]] = build_features) -> SageServer:
    """The server with its features (built by `features` from the server) and every handler and
    command registered."""
    server = SageServer(settings, version)
    server.features = features(server)
    _register_lsp(server)
    for f in server.features:
        for name, handler in f.commands().items():
            server.command(name)(_command(handler))
    return server


def _command(handler: Callable[..., Any]) -> Callable[..., Any]:
    # pygls tags the function it registers with attributes, which a bound method cannot take;
    # the wrapper keeps the handler's sync/async nature, which pygls dispatches on, and answers
    # arguments that do not fit the handler with InvalidParams rather than an internal error.
    signature = inspect.signature(handler)

    def check(args: tuple) -> None:
        try:
            signature.bind(*args)
        except TypeError as e:
            raise JsonRpcInvalidParams(f"invalid arguments for {handler.__name__}: {e}") from None
        if any(not isinstance(a, str) for a in args if a is not None) and all(
                p.annotation in ("str", str) for p in signature.parameters.values()):
            raise JsonRpcInvalidParams(f"invalid arguments for {handler.__name__}: expected strings")

    if inspect.iscoroutinefunction(handler):
        async def run_async(*args: Any) -> Any:
            check(args)
            return await handler(*args)
        return run_async

    def run(*args: Any) -> Any:
        check(args)
        return handler(*args)
    return run


def _register_lsp(server: SageServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: SageServer, params: types.InitializeParams) -> None:
        ls.connected()
        ls.apply_settings(params.initialization_options or {})

    @server.feature(types.INITIALIZED)
    async def initialized(ls: SageServer, params: types.InitializedParams) -> None:
        await ls.dispatch("initialized", params)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: SageServer, params: types.DidChangeConfigurationParams) -> None:
        ls.apply_settings(params.settings)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: SageServer, params: Any) -> None:
        ls.stop_work()

    @server.feature(types.EXIT)
    def exit_(ls: SageServer, params: Any) -> None:
        ls.end(0 if ls.stopping else 1)   # LSP: exit without shutdown first ends with 1

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


def serve(settings: ComposedSettings, version: str, tcp: tuple[str, int] | None = None) -> None:
    server = create_server(settings, version)
    stderr = logging.StreamHandler()
    stderr.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    to_client = ClientLog(server, stderr)
    to_client.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[to_client])
    logging.getLogger("pygls").setLevel(logging.WARNING)  # its INFO level logs every message
    if tcp:
        server.start_tcp(*tcp)
    else:
        server.start_io()
