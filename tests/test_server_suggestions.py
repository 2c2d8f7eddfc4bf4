"""Suggestions in the editor, over LSP: "Optimize with SAGE" runs an episode, its verified
rewrite comes back as an honestly titled code action and a sage/suggestion notification, and
applying or rejecting it is logged in the experience memory."""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import typing
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

NAIVE = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "vadd_naive"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]))
async def client(lsp_client: LanguageClient, tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    lsp_client.suggestions = []
    lsp_client.reports = []

    @lsp_client.feature("sage/suggestion")
    def on_suggestion(params):
        lsp_client.suggestions.append(params)

    @lsp_client.feature("sage/report")
    def on_report(params):
        lsp_client.reports.append(params)

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(params):
        return None

    # lsprotocol 2025 decodes any code action that carries a command as a Command, dropping its
    # edit: an object whose "command" is itself an object is a CodeAction.
    conv = lsp_client.protocol._converter

    def action_or_command(obj, _):
        is_action = isinstance(obj.get("command"), dict) or "edit" in obj or "kind" in obj
        return conv.structure(obj, types.CodeAction if is_action else types.Command)

    conv.register_structure_hook(typing.Union[types.Command, types.CodeAction], action_or_command)  # noqa: UP007 - the key lsprotocol uses
    lsp_client.db = base / "suggestion-memory"
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"sage": {
            "eval": {"trials": 2, "cacheDir": str(base / "suggestion-cache")},
            "agent": {"turns": 4},
            "memory": {"db": str(lsp_client.db), "embedder": "hashing"},
        }}))
    yield
    await lsp_client.shutdown_session()


async def actions(client: LanguageClient, uri: str) -> list:
    got = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=[])))
    return got or []


def title(a) -> str:
    return a.title


@pytest.mark.asyncio
async def test_optimize_then_accept_the_verified_rewrite(client: LanguageClient, tmp_path):
    task = tmp_path / "vadd_naive"
    shutil.copytree(NAIVE, task)
    kernel = task / "vadd_naive.cpp"
    uri = kernel.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=kernel.read_text())))

    start = next(a for a in await actions(client, uri) if title(a) == "Optimize with SAGE")
    assert isinstance(start, types.CodeAction)
    command = start.command
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command.command, arguments=command.arguments))
    assert result.get("status") == "improved", result
    assert client.suggestions, "no sage/suggestion notification"
    note = client.suggestions[-1]
    assert note.diff.startswith("--- a/") and note.speedup > 1 and note.estimated
    # The files come whole, so a client shows and applies them without patching.
    suggested = {Path(f.path).name: f.text for f in note.files}
    assert suggested and set(suggested) <= {"vadd_naive.cpp", "host.py"}
    assert all(text != (task / name).read_text() for name, text in suggested.items())

    rewrite = next(a for a in await actions(client, uri) if title(a).startswith("SAGE rewrite:"))
    # vadd_naive has three shape groups: every one is a trial, above the two asked for
    assert re.fullmatch(r"SAGE rewrite: est\. \d+\.\d\dx \(CPU model\), correct on 3 trials", rewrite.title)
    assert isinstance(rewrite, types.CodeAction) and rewrite.edit is not None
    edits = rewrite.edit.changes
    assert set(edits) <= {kernel.as_uri(), (task / "host.py").as_uri()} and edits
    assert {Path(f["path"]).as_uri(): f["text"] for f in rewrite.data["files"]} == {
        uri: changes[0].new_text for uri, changes in edits.items()}
    # The editor applies the edit, then runs the action's command: the acceptance is logged.
    for file_uri, changes in edits.items():
        Path(types.TextDocumentIdentifier(file_uri).uri.removeprefix("file://")).write_text(changes[0].new_text)
    logged = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=rewrite.command.command, arguments=rewrite.command.arguments))
    assert logged["logged"] and logged["decision"] == "accept" and logged["reward"] > 0
    assert not any(title(a).startswith("SAGE rewrite:") for a in await actions(client, uri))

    from sage_npu.memory.experience_memory import ExperienceMemory
    from sage_npu.memory.settings import MemorySettings

    memory = ExperienceMemory.open(MemorySettings(db=client.db, embedder="hashing"), create=False)
    stats = memory.stats()
    assert stats.episodes >= 1 and stats.open_episodes == 0


@pytest.mark.asyncio
async def test_reject_logs_the_rejection_and_drops_the_rewrite(client: LanguageClient, tmp_path):
    task = tmp_path / "vadd_naive"
    shutil.copytree(NAIVE, task)
    kernel = task / "vadd_naive.cpp"
    uri = kernel.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=kernel.read_text())))
    start = next(a for a in await actions(client, uri) if title(a) == "Optimize with SAGE")
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=start.command.command, arguments=start.command.arguments))
    reject = next(a for a in await actions(client, uri) if title(a) == "SAGE: reject this rewrite")
    logged = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=reject.command.command, arguments=reject.command.arguments))
    assert logged["logged"] and logged["decision"] == "reject"
    assert not any(title(a).startswith("SAGE rewrite:") for a in await actions(client, uri))
    assert kernel.read_text() == (NAIVE / "vadd_naive.cpp").read_text()  # nothing was applied


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]))
async def client_with_rules(lsp_client: LanguageClient, tmp_path_factory):
    from sage_npu.memory.experience_memory import ExperienceMemory
    from sage_npu.memory.settings import MemorySettings

    db = tmp_path_factory.mktemp("rules-memory") / "mem"
    memory = ExperienceMemory.open(MemorySettings(db=db, embedder="hashing"), load_starter=False)
    [item_id] = memory.add_experiences([_rule_text()])
    item = memory.store.item(item_id, with_vector=True)
    with memory.store.lock():
        memory.store.upsert("items", [item.model_copy(update={"kind": "rule", "status": "resident"})])
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("neovim"),
        initialization_options={"sage": {"memory": {"db": str(db), "embedder": "hashing"}}}))
    yield
    await lsp_client.shutdown_session()


def _rule_text():
    from sage_npu.memory.experience_memory import NewExperience

    return NewExperience(title="Pad DataCopy tails to 32 bytes", text="Every DataCopy moves whole 32-byte blocks; use "
                         "DataCopyPad for the ragged tail.", tags=["DataCopy"])


@pytest.mark.asyncio
async def test_hover_shows_the_resident_rules_that_mention_the_api(client_with_rules: LanguageClient, tmp_path):
    client = client_with_rules
    kernel = tmp_path / "k.cpp"
    shutil.copy(NAIVE / "vadd_naive.cpp", kernel)
    text = kernel.read_text()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=kernel.as_uri(), language_id="cpp", version=1, text=text)))
    line = next(i for i, ln in enumerate(text.splitlines()) if "AscendC::DataCopy(" in ln)
    col = text.splitlines()[line].index("DataCopy(") + 2
    value = ""
    for _ in range(50):  # the rules load in the background after initialize
        hover = await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(kernel.as_uri()), types.Position(line=line, character=col)))
        value = hover.contents.value if hover else ""
        if "Resident rules" in value:
            break
        await asyncio.sleep(0.1)
    assert "Pad DataCopy tails to 32 bytes" in value


@pytest.mark.asyncio
async def test_a_bare_kernel_is_offered_a_scaffold_that_evaluates_to_a_clear_todo(client: LanguageClient, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    kernel = bare / "add_custom.cpp"
    shutil.copy(NAIVE.parent / "add_custom" / "add_custom.cpp", kernel)
    uri = kernel.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=kernel.read_text())))
    got = [a for a in await actions(client, uri) if title(a).startswith("SAGE: create host.py")]
    assert len(got) == 1 and got[0].kind == types.CodeActionKind.Source
    created = {}
    for change in got[0].edit.document_changes:
        if isinstance(change, types.TextDocumentEdit):
            created[Path(change.text_document.uri.removeprefix("file://")).name] = change.edits[0].new_text
    assert set(created) == {"host.py", "reference.py"}
    assert 'kernel="add_custom"' in created["host.py"] and "Tiling(totalLength=0, tileNum=0)" in created["host.py"]
    assert "outputs=[z]" in created["host.py"] and "def launch(x, y):" in created["host.py"]
    for name, text in created.items():
        (bare / name).write_text(text)
    from sage_npu.npu_eval.evaluate import evaluate

    r = evaluate(bare)
    assert r.status == "harness_error"
    msg = next(d.message for d in r.diagnostics if d.code == "reference-error")
    assert "write the PyTorch computation add_custom must match" in msg


@pytest.mark.asyncio
async def test_evaluate_command_reports_and_show_memory_lists_it(client: LanguageClient, tmp_path):
    task = tmp_path / "vadd_naive"
    shutil.copytree(NAIVE, task)
    uri = (task / "vadd_naive.cpp").as_uri()
    started = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sage.evaluate", arguments=[uri]))
    assert started == {"started": True}
    for _ in range(600):
        if any(r.task == str(task) for r in client.reports):
            break
        await asyncio.sleep(0.1)
    report = next(r for r in client.reports if r.task == str(task))
    assert report.status == "correct" and report.passed == report.trials == 3 and report.estimatedUs > 0
    assert report.chip == "910B2" and report.backend == "sim" and report.estimated and report.errors == 0
    not_a_task = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sage.evaluate", arguments=[(tmp_path / "notes.txt").as_uri()]))
    assert not_a_task["started"] is False and "not an Ascend C" in not_a_task["reason"]

    overview = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sage.showMemory", arguments=[]))
    if overview["exists"]:   # an earlier test of this module made it
        assert overview["items"] >= 26 and isinstance(overview["rules"], list)
    else:
        assert "no memory yet" in overview["reason"]


@pytest.mark.asyncio
async def test_cancelling_the_progress_stops_the_episode_early(client: LanguageClient, tmp_path):
    task = tmp_path / "vadd_naive"
    shutil.copytree(NAIVE, task)
    run = asyncio.ensure_future(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sage.optimize", arguments=[(task / "vadd_naive.cpp").as_uri()])))
    token = None
    for _ in range(1200):
        token = next((t for t, reports in client.progress_reports.items()
                      if any(str(getattr(r, "message", "")).startswith("turn 1:") for r in reports)
                      and any(str(getattr(r, "message", "")).startswith("optimizing") for r in reports)), None)
        if token is not None:
            break
        await asyncio.sleep(0.05)
    assert token is not None, client.progress_reports
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await run
    assert result["started"] and result["turns"] < 4, result    # the fixture allows 4 turns
    assert result["error"] == "cancelled"
