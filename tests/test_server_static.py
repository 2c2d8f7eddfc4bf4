"""The server's edit-time features over stdio (pytest-lsp), with the recorded capabilities of
VS Code and Neovim: static findings on open and change, quick fixes whose edits (applied here
as the editor would, in the negotiated position encoding) give the intended text, and the
`.clangd` it writes into workspace folders that hold Ascend C (never over an existing one)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
import yaml
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from sage_npu.npu_eval.build import SIM_INCLUDE
from sage_npu.server.features.clangd import clangd_config, holds_ascendc, write_clangd

REPO = Path(__file__).resolve().parents[1]
ADD = REPO / "examples" / "tasks" / "add_custom"
MINE = "# my own clangd setup\nCompileFlags:\n  Add: [-DMINE]\n"


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]),
)
async def client(request, lsp_client: LanguageClient, tmp_path_factory):
    # Three workspace folders: a task with no clangd config, a task with the user's own, and
    # a folder with no Ascend C at all.
    ws = tmp_path_factory.mktemp("ws")
    shutil.copytree(ADD, ws / "fresh")
    shutil.copytree(ADD, ws / "configured")
    (ws / "configured" / ".clangd").write_text(MINE)
    (ws / "docs").mkdir()
    (ws / "docs" / "notes.cpp").write_text("int main() { return 0; }\n")
    folders = [types.WorkspaceFolder(uri=(ws / n).as_uri(), name=n) for n in ("fresh", "configured", "docs")]
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(request.param), workspace_folders=folders, root_uri=ws.as_uri(),
        initialization_options={"sage": {"eval": {"chip": "910B2"}}}))
    lsp_client.position_encoding = result.capabilities.position_encoding or "utf-16"
    lsp_client.workspace_root = ws
    lsp_client.capabilities_result = result.capabilities
    yield
    await lsp_client.shutdown_session()


_CODEC = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def offset(text: str, pos: types.Position, encoding: str) -> int:
    """The string index of an LSP position counted in the client's encoding."""
    codec, unit = _CODEC[encoding]
    lines = text.splitlines(keepends=True)
    start = sum(len(ln) for ln in lines[:pos.line])
    line = lines[pos.line] if pos.line < len(lines) else ""
    units = 0
    for i, ch in enumerate(line):
        if units >= pos.character:
            return start + i
        units += len(ch.encode(codec)) // unit
    return start + len(line.rstrip("\r\n")) if units < pos.character else start + len(line)


def apply_edit(text: str, edit: types.WorkspaceEdit, uri: str, encoding: str) -> str:
    edits = edit.changes[uri]
    spans = sorted(((offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text)
                    for e in edits), reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    return text


async def open_text(client: LanguageClient, path: Path, text: str) -> str:
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=text)))
    return uri


async def diagnostics_until(client: LanguageClient, uri: str, want) -> list[types.Diagnostic]:
    for _ in range(20):
        if want(client.diagnostics.get(uri, [])):
            return list(client.diagnostics[uri])
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
    raise AssertionError(f"diagnostics never matched: {client.diagnostics.get(uri)}")


async def quick_fixes(client: LanguageClient, uri: str, diag: types.Diagnostic) -> list[types.CodeAction]:
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag], only=[types.CodeActionKind.QuickFix])))
    return actions or []


@pytest.mark.asyncio
async def test_findings_on_open_go_away_after_the_change(client: LanguageClient):
    kernel = client.workspace_root / "fresh" / "add_custom.cpp"
    good = kernel.read_text()
    bad = good.replace("        inQueueY.FreeTensor(yLocal);\n", "")
    uri = await open_text(client, kernel, bad)
    diags = await diagnostics_until(client, uri, lambda ds: any(d.code == "missing-free" for d in ds))
    d = next(d for d in diags if d.code == "missing-free")
    assert d.source == "sage" and d.severity == types.DiagnosticSeverity.Warning
    assert d.range.start.line == next(i for i, ln in enumerate(bad.splitlines()) if "inQueueY.AllocTensor" in ln)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=good)]))
    await diagnostics_until(client, uri, lambda ds: not ds)


@pytest.mark.asyncio
async def test_quick_fix_for_an_unaligned_copy_after_a_chinese_comment(client: LanguageClient):
    assert client.capabilities_result.code_action_provider is not None
    kernel = client.workspace_root / "fresh" / "add_custom.cpp"
    text = kernel.read_text().replace(
        "        AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);",
        "        /* 对齐 */ AscendC::DataCopy(xLocal, xGm[progress * tileLength], 100);")
    uri = await open_text(client, kernel, text)
    diags = await diagnostics_until(client, uri, lambda ds: any(d.code == "unaligned-copy" for d in ds))
    d = next(d for d in diags if d.code == "unaligned-copy")
    assert d.severity == types.DiagnosticSeverity.Error
    line = text.splitlines()[d.range.start.line]
    assert offset(text, d.range.start, client.position_encoding) - offset(
        text, types.Position(line=d.range.start.line, character=0), client.position_encoding) \
        == line.index("AscendC::DataCopy")
    actions = await quick_fixes(client, uri, d)
    assert {a.kind for a in actions} == {types.CodeActionKind.QuickFix} and len(actions) == 2
    assert all(a.diagnostics and a.diagnostics[0].code == "unaligned-copy" for a in actions)
    pad = next(a for a in actions if "DataCopyPad" in a.title)
    assert pad.is_preferred
    fixed = apply_edit(text, pad.edit, uri, client.position_encoding)
    assert ("        /* 对齐 */ AscendC::DataCopyPad(xLocal, xGm[progress * tileLength], "
            "AscendC::DataCopyExtParams{1, 200, 0, 0, 0}, AscendC::DataCopyPadExtParams<half>{false, 0, 0, 0});"
            ) in fixed.splitlines()
    rounded = apply_edit(text, next(a for a in actions if "Round" in a.title).edit, uri, client.position_encoding)
    assert "/* 对齐 */ AscendC::DataCopy(xLocal, xGm[progress * tileLength], 112);" in rounded


@pytest.mark.asyncio
async def test_quick_fixes_restore_the_sample(client: LanguageClient):
    kernel = client.workspace_root / "fresh" / "add_custom.cpp"
    good = kernel.read_text()
    cases = [("missing-free", good.replace("        inQueueY.FreeTensor(yLocal);\n", "")),
             ("single-buffer", good.replace("BUFFER_NUM = 2;", "BUFFER_NUM = 1;"))]
    for code, bad in cases:
        uri = await open_text(client, kernel, bad)
        diags = await diagnostics_until(client, uri, lambda ds, c=code: any(d.code == c for d in ds))
        d = next(d for d in diags if d.code == code)
        (action,) = await quick_fixes(client, uri, d)
        assert apply_edit(bad, action.edit, uri, client.position_encoding) == good, code
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))


@pytest.mark.asyncio
async def test_no_code_actions_away_from_findings_or_for_other_kinds(client: LanguageClient):
    kernel = client.workspace_root / "fresh" / "add_custom.cpp"
    text = kernel.read_text().replace("BUFFER_NUM = 2;", "BUFFER_NUM = 1;")
    uri = await open_text(client, kernel, text)
    await diagnostics_until(client, uri, lambda ds: any(d.code == "single-buffer" for d in ds))
    here = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=3))
    nothing = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=here, context=types.CodeActionContext(diagnostics=[])))
    # Away from findings the only action is the optimizer (a refactor, not a quick fix).
    assert [a.title for a in nothing or []] == ["Optimize with SAGE"]
    quick = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=here,
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])))
    assert not quick
    line = next(i for i, ln in enumerate(text.splitlines()) if "InitBuffer(inQueueX" in ln)
    at = types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=80))
    refactors = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=at,
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.Refactor])))
    assert [a.title for a in refactors or []] == ["Optimize with SAGE"]  # no quick fix passes for a refactor


@pytest.mark.asyncio
async def test_ub_budget_follows_the_chip_setting(client: LanguageClient):
    kernel = client.workspace_root / "fresh" / "add_custom.cpp"
    # Two double-buffered queues of 50 KB: 200 KB, past 910B's 192 KB, within 310P's 248 KB.
    text = kernel.read_text().replace("inQueueX, BUFFER_NUM, tileLength * sizeof(half));", "inQueueX, 2, 50 * 1024);")
    text = text.replace("inQueueY, BUFFER_NUM, tileLength * sizeof(half));", "inQueueY, 2, 50 * 1024);")
    uri = await open_text(client, kernel, text)
    diags = await diagnostics_until(client, uri, lambda ds: any(d.code == "ub-overflow" for d in ds))
    d = next(d for d in diags if d.code == "ub-overflow")
    assert d.severity == types.DiagnosticSeverity.Error and "910B2" in d.message
    assert d.range.start.line == next(i for i, ln in enumerate(text.splitlines()) if "InitBuffer(inQueueY" in ln)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"sage": {"eval": {"chip": "310P3"}}}))
    await diagnostics_until(client, uri, lambda ds: not any(d.code == "ub-overflow" for d in ds))


@pytest.mark.asyncio
async def test_clangd_config_only_where_ascendc_lives_and_none_exists(client: LanguageClient):
    ws = client.workspace_root
    written = ws / "fresh" / ".clangd"
    for _ in range(50):  # written off the event loop after `initialized`
        if written.exists():
            break
        await asyncio.sleep(0.1)
    config = list(yaml.safe_load_all(written.read_text()))
    flags = config[0]["CompileFlags"]["Add"]
    assert "-std=c++17" in flags and f"-I{SIM_INCLUDE}" in flags and '-DSAGE_CHIP_NAME="910B2"' in flags
    assert config[1] == {"If": {"PathMatch": r".*\.asc"}, "CompileFlags": {"Add": ["-xc++"]}}
    assert (ws / "configured" / ".clangd").read_text() == MINE
    assert not (ws / "docs" / ".clangd").exists()


def test_write_clangd_never_overwrites(tmp_path):
    assert write_clangd(tmp_path, "310P3")
    assert "-DSAGE_CHIP_FAMILY=310" in (tmp_path / ".clangd").read_text()
    (tmp_path / ".clangd").write_text(MINE)
    assert not write_clangd(tmp_path, "910B2")
    assert (tmp_path / ".clangd").read_text() == MINE
    assert [p.name for p in tmp_path.iterdir()] == [".clangd"]  # nothing left aside


def test_write_clangd_puts_the_file_in_place_whole(tmp_path, monkeypatch):
    """The file appears by a hard link of one written aside: whenever .clangd exists it is complete
    (a reader once found it empty: the server had created it and not yet written it)."""
    seen: list[str] = []
    real_link = os.link

    def link(src, dst, *args, **kwargs):
        seen.append(Path(src).read_text())  # what the target will hold the moment it appears
        assert not Path(dst).exists()
        return real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", link)
    assert write_clangd(tmp_path, "910B2")
    assert seen == [(tmp_path / ".clangd").read_text()] and "CompileFlags" in seen[0]
    assert [p.name for p in tmp_path.iterdir()] == [".clangd"]


@pytest.mark.parametrize("files,expected", [
    ({"k.asc": "void f() {}"}, True),
    ({"src/op_kernel/add.cpp": '#include "kernel_operator.h"\n'}, True),
    ({"kernel.h": "__aicore__ inline void f() {}"}, True),
    ({"main.cpp": "int main() {}", "README.md": "kernel_operator.h"}, False),
    ({".hidden/k.asc": "", "build/k.asc": ""}, False),
])
def test_holds_ascendc(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert holds_ascendc(tmp_path) is expected


def test_clangd_config_is_valid_yaml_for_every_chip():
    from sage_npu.npu_eval.chips import CHIPS

    for chip in CHIPS:
        docs = list(yaml.safe_load_all(clangd_config(chip)))
        assert f'-DSAGE_CHIP_NAME="{chip}"' in docs[0]["CompileFlags"]["Add"]


def test_write_clangd_without_hard_links_creates_it_in_place(tmp_path, monkeypatch):
    def no_links(src, dst, *args, **kwargs):
        raise PermissionError(1, "hard links not supported")

    monkeypatch.setattr(os, "link", no_links)
    assert write_clangd(tmp_path, "910B2")
    assert "CompileFlags" in (tmp_path / ".clangd").read_text()
    assert not write_clangd(tmp_path, "310P3")  # still never replaces one
    assert [p.name for p in tmp_path.iterdir()] == [".clangd"]
