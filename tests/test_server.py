"""The language server over stdio, as an editor drives it (pytest-lsp), with the recorded
capabilities of VS Code and Neovim: static findings on open, evaluation on save with
diagnostics on their lines and a summary code lens, bad settings answered with a message."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ADD = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "add_custom"


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]),
)
async def client(request, lsp_client: LanguageClient, tmp_path_factory):
    cache = tmp_path_factory.getbasetemp() / "server-build-cache"
    refreshes = []

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params):  # the editor would re-request lenses now
        refreshes.append(params)

    lsp_client.code_lens_refreshes = refreshes
    caps = client_capabilities(request.param)
    lsp_client.wants_lens_refresh = bool(caps.workspace and caps.workspace.code_lens
                                         and caps.workspace.code_lens.refresh_support)
    params = types.InitializeParams(
        capabilities=client_capabilities(request.param),
        # check false (estimate-only) must not reach the editor's loop: every save below is still
        # checked (EvalSettings.verifying), as "SAGE: correct 2/2" shows
        initialization_options={"sage": {"eval": {"trials": 2, "cacheDir": str(cache), "check": False},
                                         "server": {"debounceS": 0.05}}},
    )
    result = await lsp_client.initialize_session(params)
    lsp_client.position_encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


def copy_task(tmp_path: Path) -> Path:
    d = tmp_path / "add"
    shutil.copytree(ADD, d)
    return d


async def open_doc(client: LanguageClient, path: Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=path.read_text())))
    return uri


async def save_and_wait(client: LanguageClient, uri: str, want) -> list[types.Diagnostic]:
    """Save, then wait until the published diagnostics for `uri` satisfy `want`."""
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    for _ in range(40):
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if want(client.diagnostics.get(uri, [])):
            return list(client.diagnostics[uri])
    raise AssertionError(f"diagnostics never matched: {client.diagnostics.get(uri)}")


@pytest.mark.asyncio
async def test_save_of_a_correct_kernel_shows_a_summary_lens(client: LanguageClient, tmp_path):
    task = copy_task(tmp_path)
    uri = await open_doc(client, task / "add_custom.cpp")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    title = ""
    for _ in range(60):
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri)))
        title = next((lens.command.title for lens in lenses if lens.command.title.startswith("SAGE: ")), "")
        if title:
            break
    assert title.startswith("SAGE: correct 2/2") and "est." in title and "(CPU model)" in title
    # The server asks an editor that supports it to redraw its lenses.
    assert bool(client.code_lens_refreshes) == client.wants_lens_refresh
    # Its log reaches the editor's log at its own level: the INFO line is Info, not an error.
    logged = [m for m in client.log_messages if "evaluated add_custom.cpp" in m.message]
    assert logged and all(m.type == types.MessageType.Info for m in logged), client.log_messages
    assert [d for d in client.diagnostics.get(uri, []) if d.severity == types.DiagnosticSeverity.Error] == []
    # The advisor's top finding is in the summary, and each finding is on the line to change:
    # add_custom's eight tiles per block are too short (host.py's tileNum), with its saving.
    assert "top finding: tileNum 8 -> 1" in title, title
    host = client.diagnostics.get((task / "host.py").as_uri(), [])
    tiles = [d for d in host if d.code == "perf-small-tiles"]
    assert len(tiles) == 1 and tiles[0].severity == types.DiagnosticSeverity.Information, host
    assert tiles[0].range.start.line == 10 and "(CPU model)" in tiles[0].message
    hints = [d for d in host if d.code == "perf-few-cores"]
    assert hints and hints[0].severity == types.DiagnosticSeverity.Hint  # under a tenth of the estimate
    # In the background the finding's transform is applied to a copy and evaluated; only then is the
    # edit offered, titled with the verified gain.
    host_uri = await open_doc(client, task / "host.py")
    action = None
    for _ in range(120):
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(host_uri), range=tiles[0].range,
            context=types.CodeActionContext(diagnostics=tiles)))
        action = next((a for a in actions or [] if a.title.startswith("SAGE: tileNum 8 -> 1")), None)
        if action is not None:
            break
        await asyncio.sleep(0.5)
    assert action is not None and "verified est." in action.title and "correct on 2/2 trials" in action.title
    [edit] = action.edit.changes[host_uri]
    assert "tileNum=1)" in edit.new_text and "tileNum=8" not in edit.new_text


async def open_deadlocking_kernel(client: LanguageClient, tmp_path) -> tuple[Path, str, str, str, list]:
    """The add example without one FreeTensor (the next AllocTensor deadlocks), opened and saved
    until its evaluated diagnostics arrive: (kernel, good text, bad text, uri, diagnostics)."""
    kernel = copy_task(tmp_path) / "add_custom.cpp"
    good = kernel.read_text()
    bad = good.replace("inQueueX.FreeTensor(xLocal);", "")
    kernel.write_text(bad)
    uri = await open_doc(client, kernel)
    diags = await save_and_wait(client, uri, lambda ds: any(d.code == "queue-deadlock" for d in ds))
    return kernel, good, bad, uri, diags


@pytest.mark.asyncio
async def test_fault_is_shown_on_its_line_and_cleared_after_the_fix(client: LanguageClient, tmp_path):
    kernel, good, bad, uri, diags = await open_deadlocking_kernel(client, tmp_path)
    d = next(d for d in diags if d.code == "queue-deadlock")
    alloc_line = next(i for i, ln in enumerate(bad.splitlines()) if "inQueueX.AllocTensor" in ln)
    assert d.range.start.line == alloc_line and d.source == "sage"
    assert d.severity == types.DiagnosticSeverity.Error
    kernel.write_text(good)
    await save_and_wait(client, uri, lambda ds: not any(d.code == "queue-deadlock" for d in ds))


@pytest.mark.asyncio
async def test_compile_error_lands_in_host_py_when_host_names_a_wrong_field(client: LanguageClient, tmp_path):
    task = copy_task(tmp_path)
    host = task / "host.py"
    host.write_text(host.read_text().replace("tileNum=8", "tileCount=8"))
    uri = await open_doc(client, host)
    diags = await save_and_wait(client, uri, lambda ds: any(d.code == "compile-error" for d in ds))
    line = next(i for i, ln in enumerate(host.read_text().splitlines()) if "tileCount" in ln)
    assert any(d.range.start.line == line and "tileCount" in d.message for d in diags)


@pytest.mark.asyncio
async def test_static_finding_on_open_counts_utf16_columns(client: LanguageClient, tmp_path):
    task = copy_task(tmp_path)
    kernel = task / "add_custom.cpp"
    src = kernel.read_text().replace(
        "    op.Process();", "    /* 检查 */ half v = ((__gm__ half*)z)[0]; op.Process();")
    kernel.write_text(src)
    uri = await open_doc(client, kernel)
    for _ in range(10):
        if any(d.code == "raw-gm-access" for d in client.diagnostics.get(uri, [])):
            break
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    d = next(d for d in client.diagnostics[uri] if d.code == "raw-gm-access")
    line = src.splitlines()[d.range.start.line]
    # Two CJK characters before the finding: 6 bytes in UTF-8, 2 units in UTF-16.
    prefix = line[: line.index("((__gm__ half*)z)[0]")]
    codec = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[client.position_encoding]
    unit = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[client.position_encoding]
    assert d.range.start.character == len(prefix.encode(codec)) // unit


@pytest.mark.asyncio
async def test_bad_setting_gets_a_message_and_the_default(client: LanguageClient):
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"sage": {"eval": {"chip": "H100", "trials": 3}}}))
    msg = await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    assert "sage.eval.chip" in msg.message and "keeping" in msg.message


@pytest.mark.asyncio
async def test_settings_that_are_not_an_object_get_a_message_not_a_crash(client: LanguageClient):
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"sage": "nope"}))
    msg = await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    assert msg.type == types.MessageType.Warning and "must be an object" in msg.message, msg
    assert "AttributeError" not in msg.message
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"sage": {"eval": {"trials": "five"}}}))
    msg = await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    assert msg.message == 'sage.eval.trials must be an integer, got "five"; keeping 5'


def test_nested_settings_merge_leaf_by_leaf():
    from sage_npu.agent.llm_settings import LLMSettings
    from sage_npu.agent.settings import AgentSettings
    from sage_npu.server.setup import create_server
    from sage_npu.settings import Settings

    server = create_server(Settings(agent=AgentSettings(llm=LLMSettings(model="from-config", timeout_s=30))), "test",
                           features=lambda s: [])
    server.apply_settings({"sage": {"agent": {"llm": {"baseUrl": "http://127.0.0.1:8000/v1"}, "turns": 7}}})
    llm = server.settings.agent.llm
    assert (llm.base_url, llm.model, llm.timeout_s) == ("http://127.0.0.1:8000/v1", "from-config", 30)
    assert server.settings.agent.turns == 7


def test_short_spellings_of_llm_and_memory_settings():
    from sage_npu.server.setup import create_server
    from sage_npu.settings import Settings

    server = create_server(Settings(), "test", features=lambda s: [])
    server.apply_settings({"sage": {"llm": {"baseUrl": "http://127.0.0.1:11434/v1", "model": "qwen"},
                                    "memory": {"path": "/tmp/sage-mem"}}})
    assert (server.settings.agent.llm.base_url, server.settings.agent.llm.model) == ("http://127.0.0.1:11434/v1",
                                                                                      "qwen")
    assert str(server.settings.memory.db) == "/tmp/sage-mem"


REPORT = "sage/report"
UNALIGNED = "AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);"


async def wait_for_report(client: LanguageClient, timeout_s: float = 120) -> None:
    await asyncio.wait_for(client.wait_for_notification(REPORT), timeout_s)


@pytest.mark.asyncio
async def test_open_evaluates_and_a_confirmed_static_finding_is_shown_once(client: LanguageClient, tmp_path):
    """A verdict on open (no save); where the run confirms a static finding (same code, same
    line; the run says "float16" where the source says "half"), one diagnostic, in the static
    wording, marked confirmed."""
    task = copy_task(tmp_path)
    kernel = task / "add_custom.cpp"
    src = kernel.read_text()
    assert UNALIGNED in src
    kernel.write_text(src.replace(UNALIGNED, UNALIGNED.replace("tileLength);", "62);")))
    report = asyncio.ensure_future(wait_for_report(client))
    uri = await open_doc(client, kernel)
    await report
    line = next(i for i, ln in enumerate(kernel.read_text().splitlines()) if "xGm[progress * tileLength], 62)" in ln)
    await asyncio.sleep(0.2)
    on_line = [d for d in client.diagnostics[uri] if d.code == "unaligned-copy" and d.range.start.line == line]
    assert len(on_line) == 1, on_line
    assert "62 half elements" in on_line[0].message and "(confirmed by the evaluation)" in on_line[0].message


@pytest.mark.asyncio
async def test_an_edit_withdraws_the_evaluated_diagnostics_on_its_lines(client: LanguageClient, tmp_path):
    _, _, _, uri, diags = await open_deadlocking_kernel(client, tmp_path)
    d = next(d for d in diags if d.code == "queue-deadlock")
    others = [o for o in diags if o.source == "sage" and o.range.start.line > d.range.end.line]
    # One line inserted above the fault's line: the fault moves down with its line.
    above = types.Position(line=d.range.start.line - 1, character=0)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start=above, end=above),
                                                                 text="        // a note\n")]))
    for _ in range(5):   # the static checks publish too, before or after
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        moved = [x for x in client.diagnostics[uri] if x.code == "queue-deadlock"]
        if [x.range.start.line for x in moved] == [d.range.start.line + 1]:
            break
    assert [x.range.start.line for x in moved] == [d.range.start.line + 1], moved
    # An edit on the fault's line withdraws it until the next verdict; diagnostics elsewhere stay.
    at = types.Position(line=d.range.start.line + 1, character=0)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
        content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text="  ")]))
    for _ in range(5):
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if not any(x.code == "queue-deadlock" for x in client.diagnostics[uri]):
            break
    assert not any(x.code == "queue-deadlock" for x in client.diagnostics[uri]), client.diagnostics[uri]
    for o in others:
        assert any(x.code == o.code and x.range.start.line == o.range.start.line + 1 for x in client.diagnostics[uri])


@pytest.mark.asyncio
async def test_quick_saves_replace_the_queued_evaluation(client: LanguageClient, tmp_path):
    """Ten saves while a run goes on: the run is cancelled and one more evaluates the latest
    content; before, each save queued a run of its own."""
    task = copy_task(tmp_path)
    uri = await open_doc(client, task / "add_custom.cpp")   # the evaluation on open starts
    for _ in range(200):
        if client.progress_reports:
            break
        await asyncio.sleep(0.05)
    for _ in range(10):
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
        await asyncio.sleep(0.15)   # longer than the debounce: each save is due on its own
    await wait_for_report(client)
    await asyncio.sleep(1.0)
    begun = [values[0] for values in client.progress_reports.values() if values]
    runs = [b for b in begun if isinstance(b, types.WorkDoneProgressBegin) and "evaluating" in (b.message or "")]
    # Without superseding, the open and each save would run: 11. A run that finishes between two
    # saves is a run of its own (with the prebuilt emulator one takes about 0.6 s), so a few remain.
    assert 1 <= len(runs) <= 5, f"{len(runs)} evaluations for one open and ten saves"


def _diag(line: int, code: str = "x", message: str = "m", source: str = "sage") -> types.Diagnostic:
    return types.Diagnostic(range=types.Range(start=types.Position(line=line, character=2),
                                              end=types.Position(line=line, character=9)),
                            message=message, code=code, source=source)


def test_diagnostics_of_an_older_text_move_with_their_lines_or_go():
    from sage_npu.server.features.evaluation import moved_with_their_lines, stale_withdrawn

    before, after = "a\nb\nc\nd\ne", "new\na\nb\nC\nd\ne"
    got = moved_with_their_lines([_diag(0), _diag(2), _diag(4)], before, after)
    assert [d.range.start.line for d in got] == [1, 5]   # c was changed: its diagnostic goes
    here = types.Position(line=1, character=0)
    cases = [  # (change, lines kept after it)
        (types.TextDocumentContentChangePartial(range=types.Range(start=here, end=here), text="x\ny\n"), [0, 4, 6]),
        (types.TextDocumentContentChangePartial(range=types.Range(start=here, end=here), text="z"), [0, 2, 4]),
        (types.TextDocumentContentChangeWholeDocument(text="all new"), []),
    ]
    for change, want in cases:
        got = stale_withdrawn([_diag(0), _diag(1), _diag(2), _diag(4)], change)
        assert [d.range.start.line for d in got] == want, change


def test_one_diagnostic_per_problem():
    from sage_npu.server.server import EVALUATED, STATIC, one_per_problem

    static = [_diag(3, "unaligned-copy", "62 half elements"), _diag(7, "raw-gm-access", "raw")]
    run = [_diag(3, "unaligned-copy", "62 float16 elements, in block 0"), _diag(7, "raw-gm-access", "raw"),
           _diag(9, "mismatch", "wrong")]
    got = one_per_problem({STATIC: static, EVALUATED: run})
    assert [(d.code, d.range.start.line, d.message) for d in got] == [
        ("unaligned-copy", 3, "62 half elements (confirmed by the evaluation)"),  # the run confirmed it
        ("raw-gm-access", 7, "raw"),    # the report's copy of the static finding: not shown twice
        ("mismatch", 9, "wrong")]
