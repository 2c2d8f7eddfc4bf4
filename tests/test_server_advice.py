"""A verified advisor edit over stdio (pytest-lsp), with the recorded capabilities of VS Code and
Neovim: the planted scalar loop (tests/perf_tasks.py) is saved, its perf-scalar-loop finding
arrives as a diagnostic on the loop, and once the background verification has rebuilt and
evaluated the transformed copy the finding's quick fix is offered, titled with the verified gain;
applied as the editor would, its edit gives the vector instruction in place of the loop."""

from __future__ import annotations

import asyncio
import re
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.perf_tasks import materialise
from tests.test_server_static import apply_edit

NAME = "perf_scalar_loop"


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]),
)
async def client(request, lsp_client: LanguageClient, tmp_path_factory):
    cache = tmp_path_factory.getbasetemp() / "server-build-cache"

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params):  # VS Code re-requests its lenses; nothing to do here
        return None

    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(request.param),
        initialization_options={"sage": {"eval": {"trials": 2, "cacheDir": str(cache)},
                                         "server": {"debounceS": 0.05}}}))
    lsp_client.position_encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


async def finding_on_save(client: LanguageClient, uri: str, code: str) -> types.Diagnostic:
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    for _ in range(60):
        found = [d for d in client.diagnostics.get(uri, []) if d.code == code]
        if found:
            return found[0]
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 120)
    raise AssertionError(f"no {code}: {client.diagnostics.get(uri)}")


async def verified_action(client: LanguageClient, uri: str, diag: types.Diagnostic, title: str) -> types.CodeAction:
    """The quick fix titled `title...`, polled until the background verification offers it."""
    for _ in range(240):
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri), range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag])))
        action = next((a for a in actions or [] if a.title.startswith(title)), None)
        if action is not None:
            return action
        await asyncio.sleep(0.5)
    raise AssertionError(f"no verified action {title!r}")


@pytest.mark.asyncio
async def test_a_scalar_loop_finding_gets_its_verified_vector_edit(client: LanguageClient, tmp_path):
    kernel = materialise(tmp_path)[NAME] / f"{NAME}.cpp"
    text = kernel.read_text()
    uri = kernel.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=text)))
    diag = await finding_on_save(client, uri, "perf-scalar-loop")
    assert "zLocal.SetValue(j," in text.splitlines()[diag.range.start.line]
    assert diag.severity == types.DiagnosticSeverity.Information and "(CPU model)" in diag.message
    estimated = float(re.search(r"~([\d.]+) us of", diag.message).group(1))
    action = await verified_action(client, uri, diag, "SAGE: one vector instruction per tile")
    assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred
    m = re.search(r"verified est\. ([\d.]+) us faster \(CPU model\), correct on 2/2 trials \(estimated ([\d.]+)\)",
                  action.title)
    assert m is not None, action.title
    gain = float(m.group(1))
    assert float(m.group(2)) == estimated and abs(estimated - gain) <= 0.25 * gain, action.title
    fixed = apply_edit(text, action.edit, uri, client.position_encoding)
    assert "        AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);" in fixed.splitlines()
    assert ".SetValue(" not in fixed and ".GetValue(" not in fixed
    # the rest of the kernel is as it was
    assert fixed.replace("        AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);\n", "") == \
        re.sub(r"        for \(int32_t j = 0;.*?\n        }\n", "", text, flags=re.S)
