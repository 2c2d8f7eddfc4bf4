"""Debug a block from the editor (server/features/debugging.py), over stdio with pytest-lsp and the
recorded capabilities of VS Code (with the experimental capability the VS Code client adds) and
Neovim: the "Debug block N" lens on the kernel entry, and `sage.debugBlock`'s answer, the debug
command line, the gdb command, the stop and the VS Code launch configuration."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from sage_npu.npu_eval.report import Report, diagnostic
from sage_npu.server.features.debugging import DEBUG_BLOCK, block_worth_a_look

ADD = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "add_custom"
GDB = shutil.which("gdb")


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]),
)
async def client(request, lsp_client: LanguageClient, tmp_path_factory):
    caps = client_capabilities(request.param)

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params):  # VS Code's capabilities ask for it after a verdict: answer as it does
        return None

    lsp_client.starts_debugger = request.param == "visual-studio-code"
    if lsp_client.starts_debugger:  # as the VS Code client says it starts the debug session itself
        caps.experimental = {"sageDebugLaunch": True}
    cache = tmp_path_factory.getbasetemp() / "server-build-cache"
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=caps, initialization_options={"sage": {"eval": {"trials": 1, "cacheDir": str(cache)},
                                                            "server": {"debounceS": 0.05}}}))
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, path: Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python" if path.suffix == ".py" else "cpp", version=1, text=path.read_text())))
    return uri


async def _lenses(client: LanguageClient, uri: str) -> list[types.CodeLens]:
    params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri))
    return await client.text_document_code_lens_async(params)


def _line_of(path: Path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


@pytest.mark.asyncio
async def test_the_debug_lens_sits_on_the_entry_of_a_runnable_task(client: LanguageClient, tmp_path):
    task = tmp_path / "add"
    shutil.copytree(ADD, task)
    uri = _open(client, task / "add_custom.cpp")
    [lens] = [x for x in await _lenses(client, uri) if x.command and x.command.command == DEBUG_BLOCK]
    assert lens.command.title == "Debug block 0" and list(lens.command.arguments or []) == [uri, 0]
    assert lens.range.start.line == _line_of(task / "add_custom.cpp", "void add_custom(") - 1

    # A kernel without its task (no host.py/reference.py) cannot run, so there is nothing to debug.
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(ADD / "add_custom.cpp", alone)
    alone_uri = _open(client, alone / "add_custom.cpp")
    assert not [x for x in await _lenses(client, alone_uri) if x.command and x.command.command == DEBUG_BLOCK]


@pytest.mark.skipif(GDB is None, reason="gdb is not installed (apt-get install gdb, as .ci/run does)")
@pytest.mark.asyncio
async def test_debug_block_answers_the_debug_command_line_and_a_launch_configuration(client: LanguageClient,
                                                                                      tmp_path):
    task = tmp_path / "add"
    shutil.copytree(ADD, task)
    kernel = task / "add_custom.cpp"
    uri = _open(client, kernel)
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=DEBUG_BLOCK, arguments=[uri, 2]))
    assert answer["ready"] is True, answer
    assert answer["commandLine"] == ["sage-npu", "eval", str(task), "--debug", "--block", "2", "--chip", "910B2"]
    entry_body = _line_of(kernel, "KernelAdd op;")
    assert answer["stop"] == {"file": str(kernel), "line": entry_body, "condition": "::block_idx == 2"}
    assert (answer["entry"], answer["block"], answer["blockDim"]) == ("add_custom", 2, 8)
    gdb = answer["gdb"]
    assert gdb[0] == GDB and f'break "{kernel}":{entry_body} if ::block_idx == 2' in gdb and "run" in gdb
    assert shlex.split(answer["terminalLine"]) == gdb
    launch = answer["launch"]
    assert (launch["type"], launch["request"], launch["MIMode"], launch["miDebuggerPath"]) == (
        "cppdbg", "launch", "gdb", GDB)
    assert launch["program"] == gdb[gdb.index("--args") + 1] and Path(launch["program"]).is_file()
    assert launch["args"] == gdb[gdb.index("--args") + 2:] and launch["cwd"] == str(task / ".sage" / "debug")
    assert any(c["text"].startswith("source ") for c in launch["setupCommands"])
    shown = [m.message for m in client.messages if "built for gdb" in m.message]
    if client.starts_debugger:
        assert not shown, shown   # VS Code starts the session; no message says it twice
    else:
        assert shown and "sage-npu eval" in shown[0] and "if ::block_idx == 2" in shown[0], client.messages


@pytest.mark.skipif(GDB is None, reason="gdb is not installed (apt-get install gdb, as .ci/run does)")
@pytest.mark.asyncio
async def test_a_block_that_does_not_run_or_a_bad_argument_is_answered(client: LanguageClient, tmp_path):
    task = tmp_path / "add"
    shutil.copytree(ADD, task)
    uri = _open(client, task / "add_custom.cpp")
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=DEBUG_BLOCK, arguments=[uri, 8]))
    assert answer["ready"] is False and "no block 8" in answer["reason"] and "host.py" in answer["reason"]
    assert answer["commandLine"][-4:] == ["--block", "8", "--chip", "910B2"]
    for bad in ([uri, "two"], [uri, -1], [7, 0], []):
        with pytest.raises(JsonRpcInvalidParams):
            await client.workspace_execute_command_async(types.ExecuteCommandParams(
                command=DEBUG_BLOCK, arguments=bad))
    not_a_task = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=DEBUG_BLOCK, arguments=[(task / "notes.txt").as_uri(), 0]))
    assert not_a_task["ready"] is False and not_a_task["reason"] == "not an Ascend C kernel task"


def _report(*diags) -> Report:
    return Report(task="t", kernel="k.cpp", status="runtime_error", diagnostics=list(diags))


@pytest.mark.parametrize(("report", "offered"), [
    (None, (0, None)),
    (_report(), (0, None)),
    (_report(diagnostic("k.cpp", 3, "warning", "unaligned-copy", "w", block=5)), (0, None)),
    (_report(diagnostic("k.cpp", 3, "error", "compile-error", "e")), (0, None)),
    (_report(diagnostic("k.cpp", 3, "error", "gm-out-of-bounds", "e", block=7),
             diagnostic("k.cpp", 9, "error", "mismatch", "e", block=2)), (7, "gm-out-of-bounds")),
])
def test_the_lens_offers_the_block_of_the_first_error(report, offered):
    assert block_worth_a_look(report) == offered
