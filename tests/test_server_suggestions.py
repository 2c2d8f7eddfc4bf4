"""Suggestions in the editor, over LSP: "Optimize with SAGE" starts an episode and answers at
once; its end comes as a message and sage/episode, its verified rewrite as an honestly titled
code action (with its diff shown on request) and a sage/suggestion notification. Saving the
applied rewrite logs the acceptance, undoing it a rejection, and no decision in time credits the
episode as the agent's."""

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

from sage_npu.server.features.decisions import Decision, DecisionWatch, WatchedFile
from sage_npu.server.features.suggestions import POLL_S

NAIVE = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "vadd_naive"


async def _start(lsp_client: LanguageClient, tmp_path_factory, memory: dict | None = None,
                 renders_notices: bool = False) -> None:
    base = tmp_path_factory.getbasetemp()
    lsp_client.suggestions = []
    lsp_client.episodes = []
    lsp_client.decisions = []
    lsp_client.reports = []

    @lsp_client.feature("sage/suggestion")
    def on_suggestion(params):
        lsp_client.suggestions.append(params)

    @lsp_client.feature("sage/episode")
    def on_episode(params):
        lsp_client.episodes.append(params)

    @lsp_client.feature("sage/decision")
    def on_decision(params):
        lsp_client.decisions.append(params)

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
    lsp_client.db = tmp_path_factory.mktemp("suggestion-memory") / "mem"
    capabilities = client_capabilities("visual-studio-code")
    if renders_notices:   # as the VS Code client says it shows sage/episode and sage/decision itself
        capabilities.experimental = {"sageNotices": True}
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities,
        initialization_options={"sage": {
            "eval": {"trials": 2, "cacheDir": str(base / "suggestion-cache")},
            "agent": {"turns": 4},
            "memory": {"db": str(lsp_client.db), "embedder": "hashing", **(memory or {})},
        }}))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]))
async def client(lsp_client: LanguageClient, tmp_path_factory):
    await _start(lsp_client, tmp_path_factory)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]))
async def impatient_client(lsp_client: LanguageClient, tmp_path_factory):
    """A client whose suggestions are credited as the agent's after 3 s without a decision, and
    that renders sage/episode and sage/decision itself."""
    await _start(lsp_client, tmp_path_factory, memory={"editorTimeoutS": 3}, renders_notices=True)
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


async def wait_for(what: str, pred, timeout_s: float = 300):
    """Poll until pred() is truthy (its value) or fail saying what did not come."""
    for _ in range(int(timeout_s / 0.1)):
        got = pred()
        if got:
            return got
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what} did not come within {timeout_s} s")


async def open_task(client: LanguageClient, tmp_path: Path) -> tuple[Path, str]:
    task = tmp_path / "vadd_naive"
    shutil.copytree(NAIVE, task)
    kernel = task / "vadd_naive.cpp"
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=kernel.as_uri(), language_id="cpp", version=1, text=kernel.read_text())))
    return task, kernel.as_uri()


async def run_episode(client: LanguageClient, uri: str):
    """Start "Optimize with SAGE" from its code action: the command answers at once; the
    episode's end comes as sage/episode."""
    start = next(a for a in await actions(client, uri) if title(a) == "Optimize with SAGE")
    assert isinstance(start, types.CodeAction)
    seen = len(client.episodes)
    started = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=start.command.command, arguments=start.command.arguments)), timeout=10)
    assert started["started"] is True, started
    return await wait_for("sage/episode", lambda: client.episodes[seen:] and client.episodes[-1])


def change_buffer(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


async def open_episodes(client: LanguageClient) -> int:
    overview = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sage.showMemory", arguments=[]))
    return overview["open_episodes"] if overview["exists"] else 0


# ---- the decision, from document events (no server) ----


def _watch(tmp_path: Path, suggested="new\n", original="old\n", disk=None):
    f = tmp_path / "k.cpp"
    f.write_text(original if disk is None else disk)
    return f, DecisionWatch([WatchedFile(path=f, name="k.cpp", suggested=suggested, original=original)])


def test_applying_decides_nothing_and_saving_the_rewrite_accepts(tmp_path):
    f, watch = _watch(tmp_path)
    assert watch.changed(f, "new") is None          # applied in the buffer (its last newline dropped)
    assert watch.saved() is None                     # the disk still holds the original
    f.write_text("new\r\n")
    assert watch.saved() == Decision("accept", "the rewrite was saved")


def test_undoing_the_applied_rewrite_or_closing_it_unsaved_rejects(tmp_path):
    f, watch = _watch(tmp_path)
    assert watch.changed(f, "old\n") is None        # not applied yet: nothing to undo
    watch.changed(f, "new\n")
    assert watch.changed(f, "new and more\n") is None   # edited further: no decision
    assert watch.changed(f, "old\n") == Decision("reject", "the rewrite was undone in k.cpp")
    f, watch = _watch(tmp_path)
    assert watch.closed(f) is None                   # never applied
    watch.changed(f, "new\n")
    assert watch.closed(f) == Decision("reject", "k.cpp was closed without saving the rewrite")


def test_closing_a_saved_rewrite_accepts_it(tmp_path):
    f, watch = _watch(tmp_path)
    watch.changed(f, "new\n")
    f.write_text("new\n")
    assert watch.closed(f) == Decision("accept", "the rewrite was saved")


# ---- over LSP ----


@pytest.mark.asyncio
async def test_optimize_answers_at_once_and_acceptance_waits_for_the_save(client: LanguageClient, tmp_path):
    task, uri = await open_task(client, tmp_path)
    kernel = task / "vadd_naive.cpp"
    episode = await run_episode(client, uri)
    assert episode.status == "improved" and episode.speedup > 1 and episode.model == "offline", episode
    # Every client sees the end: a message with the verified gain, and sage/episode.
    shown = [m.message for m in client.messages]
    assert episode.message in shown and "verified rewrite, est. " in episode.message, shown
    assert "x (CPU model) faster, correct on every trial" in episode.message and "offline optimizer" in episode.message
    note = await wait_for("sage/suggestion", lambda: client.suggestions and client.suggestions[-1])
    assert note.diff.startswith("--- a/") and note.speedup > 1 and note.estimated
    assert note.episodeId == episode.episodeId and note.title == episode.title
    # The files come whole, so a client shows and applies them without patching.
    suggested = {Path(f.path).name: f.text for f in note.files}
    assert suggested and set(suggested) <= {"vadd_naive.cpp", "host.py"}
    assert all(text != (task / name).read_text() for name, text in suggested.items())

    got = await actions(client, uri)
    rewrite = next(a for a in got if title(a).startswith("SAGE rewrite:"))
    # vadd_naive has three shape groups: every one is a trial, above the two asked for
    assert re.fullmatch(r"SAGE rewrite: est\. \d+\.\d\dx \(CPU model\), correct on 3 trials", rewrite.title)
    assert isinstance(rewrite, types.CodeAction) and rewrite.edit is not None and rewrite.command is None
    edits = rewrite.edit.changes
    assert set(edits) <= {kernel.as_uri(), (task / "host.py").as_uri()} and edits
    assert {Path(f["path"]).as_uri(): f["text"] for f in rewrite.data["files"]} == {
        u: changes[0].new_text for u, changes in edits.items()}

    # The diff, computed by the server from the suggested files, is written and shown.
    diff = next(a for a in got if title(a) == "SAGE: show the rewrite's diff")
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=diff.command.command, arguments=diff.command.arguments))
    assert answer["shown"] is True and client.shown_documents[-1].uri == Path(answer["path"]).as_uri()
    text = Path(answer["path"]).read_text()
    assert Path(answer["path"]).parent == task / ".sage" and text.startswith("--- a/")
    assert all(f"+++ b/{name}" in text for name in suggested)

    # Applied in the buffer: nothing is decided, the episode stays open in the memory.
    if uri in edits:
        change_buffer(client, uri, 2, edits[uri][0].new_text)
    await asyncio.sleep(POLL_S + 0.5)
    assert client.decisions == [] and await open_episodes(client) == 1
    # Saved: the acceptance is logged, with the reward.
    for file_uri, changes in edits.items():
        Path(types.TextDocumentIdentifier(file_uri).uri.removeprefix("file://")).write_text(changes[0].new_text)
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    decision = await wait_for("sage/decision", lambda: client.decisions and client.decisions[-1], 30)
    assert decision.decision == "accept" and decision.logged and decision.reward > 0, decision
    assert decision.reason == "the rewrite was saved"
    assert any(m.message.startswith("SAGE: rewrite accepted (the rewrite was saved)") for m in client.messages)
    assert not any(title(a).startswith("SAGE rewrite:") for a in await actions(client, uri))
    assert await open_episodes(client) == 0
    # The accept command after the save answers with the decision already logged.
    late = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sage.acceptSuggestion", arguments=[str(task), episode.episodeId, note.attemptId]))
    assert late["logged"] and late["decision"] == "accept"


@pytest.mark.asyncio
async def test_undoing_the_applied_rewrite_logs_a_rejection(client: LanguageClient, tmp_path):
    task, uri = await open_task(client, tmp_path)
    episode = await run_episode(client, uri)
    assert episode.status == "improved", episode
    rewrite = next(a for a in await actions(client, uri) if title(a).startswith("SAGE rewrite:"))
    # The first file the rewrite changes (host.py or the kernel), open in the editor.
    file_uri, changes = next(iter(rewrite.edit.changes.items()))
    path = Path(types.TextDocumentIdentifier(file_uri).uri.removeprefix("file://"))
    original = path.read_text()
    if file_uri != uri:
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=file_uri, language_id="python", version=1, text=original)))
    change_buffer(client, file_uri, 2, changes[0].new_text)
    await asyncio.sleep(0.5)
    assert client.decisions == []
    change_buffer(client, file_uri, 3, original)          # undo
    decision = await wait_for("sage/decision", lambda: client.decisions and client.decisions[-1], 30)
    assert decision.decision == "reject" and decision.logged, decision
    assert decision.reason == f"the rewrite was undone in {path.name}"
    assert not any(title(a).startswith("SAGE rewrite:") for a in await actions(client, uri))
    assert await open_episodes(client) == 0
    assert path.read_text() == original   # nothing was written


@pytest.mark.asyncio
async def test_no_decision_within_the_timeout_credits_the_episode_as_the_agents(impatient_client, tmp_path):
    client = impatient_client
    task, uri = await open_task(client, tmp_path)
    episode = await run_episode(client, uri)
    assert episode.status == "improved", episode
    decision = await wait_for("sage/decision", lambda: client.decisions and client.decisions[-1], 30)
    assert decision.decision == "timeout" and decision.logged and "credited as the agent's" in decision.reason
    # The client renders both notices: no window/showMessage says them twice.
    assert not [m.message for m in client.messages if m.message.startswith("SAGE: ")], client.messages
    assert not any(title(a).startswith("SAGE rewrite:") for a in await actions(client, uri))
    assert await open_episodes(client) == 0

    from sage_npu.memory.experience_memory import ExperienceMemory
    from sage_npu.memory.settings import MemorySettings

    memory = ExperienceMemory.open(MemorySettings(db=client.db, embedder="hashing"), create=False)
    [row] = memory.store.fetch("episodes", f"id = '{episode.episodeId}'")
    assert row.state == "credited", row
    # The reject command comes too late: the memory keeps the agent's credit.
    late = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sage.rejectSuggestion", arguments=[str(task), episode.episodeId, "x"]))
    assert late["logged"] is False and "credited already" in late["reason"], late


@pytest.mark.asyncio
async def test_the_reject_command_logs_the_rejection_and_drops_the_rewrite(client: LanguageClient, tmp_path):
    task, uri = await open_task(client, tmp_path)
    await run_episode(client, uri)
    reject = next(a for a in await actions(client, uri) if title(a) == "SAGE: reject this rewrite")
    logged = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=reject.command.command, arguments=reject.command.arguments))
    assert logged["logged"] and logged["decision"] == "reject"
    assert client.decisions[-1].decision == "reject"
    assert not any(title(a).startswith("SAGE rewrite:") for a in await actions(client, uri))
    assert (task / "vadd_naive.cpp").read_text() == (NAIVE / "vadd_naive.cpp").read_text()  # nothing was applied


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
    for _ in range(300):  # the rules load in the background after initialize (slow on a loaded machine)
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
    started = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sage.optimize", arguments=[(task / "vadd_naive.cpp").as_uri()]))
    assert started["started"] is True
    token = None
    for _ in range(1200):
        token = next((t for t, reports in client.progress_reports.items()
                      if any(str(getattr(r, "message", "")).startswith("turn 1 ") for r in reports)
                      and any(str(getattr(r, "message", "")).startswith("optimizing") for r in reports)), None)
        if token is not None:
            break
        await asyncio.sleep(0.05)
    assert token is not None, client.progress_reports
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    episode = await wait_for("sage/episode", lambda: client.episodes and client.episodes[-1])
    assert episode.turns < 4, episode    # the fixture allows 4 turns
    assert episode.error == "cancelled" and "The episode was cancelled." in episode.message


def test_the_editors_progress_line_is_the_clis_turn_line():
    """The editor shows what the CLI prints for a turn: what it was compared with, the best so far,
    and for a wrong kernel the reason and no time."""
    from sage_npu.agent.episode import Attempt
    from sage_npu.agent.worker import AttemptProgress
    from sage_npu.server.features.suggestion_notices import progress_message

    wrong = Attempt(2, "model", "rewrote the kernel", "mismatch", None, False, round=2, base_turn=1, vs_us=5.0,
                    vs_turn=1, best_us=5.0, best_turn=1, reason="wrong at index 3: got 1, expected 2")
    line = progress_message(AttemptProgress(wrong))
    assert "wrong at index 3: got 1, expected 2" in line and "best 5.000 us (turn 1)" in line
    assert " us  " not in line and "  " not in line
    kept = Attempt(3, "double_buffer", "double buffering", "correct", 2.5, True, round=3, base_turn=1, vs_us=5.0,
                   vs_turn=1, best_us=2.5, best_turn=3)
    assert "2.500 us new best: 2.00x faster than 5.000 us (turn 1)" in progress_message(AttemptProgress(kept))
