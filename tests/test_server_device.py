"""The language server's on-save path on the fake device (tests/fake_cann.py): with CANN and an
NPU found, `auto` evaluates on the device and the editor's summary lens says "measured"."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.fake_cann import make_fake_cann

ADD = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "add_custom"
_ROOT = Path(tempfile.mkdtemp(prefix="sage-fake-cann-"))
atexit.register(shutil.rmtree, _ROOT, True)
FAKE = make_fake_cann(_ROOT / "cann", profile={"duration_us": 7.5, "block_dim": 8})
ENV = {k: v for k, v in os.environ.items() if k not in ("ASCEND_TOOLKIT_HOME", "ASCEND_CANN_PACKAGE_PATH")}
ENV.update(FAKE.env())


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"],
                                              server_env=ENV))
async def client(lsp_client: LanguageClient, tmp_path_factory):
    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params):  # the editor would re-request lenses now
        return None

    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"sage": {"eval": {"trials": 2, "cacheDir": str(tmp_path_factory.mktemp("cache"))},
                                         "server": {"debounceS": 0.05}}},
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_save_on_the_device_shows_a_measured_summary(client: LanguageClient, tmp_path):
    task = tmp_path / "add"
    shutil.copytree(ADD, task)
    kernel = task / "add_custom.cpp"
    uri = kernel.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=kernel.read_text())))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    title = ""
    for _ in range(60):
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri)))
        title = next((lens.command.title for lens in lenses if lens.command.title.startswith("SAGE: ")), "")
        if title:
            break
    # the device's own figures are measured; only the advisor's top finding is a CPU-model estimate
    timing, _, finding = title.partition(" | top finding: ")
    assert timing.startswith("SAGE: correct 2/2") and "measured" in timing and "CPU model" not in timing, title
    assert not finding or finding.endswith("(CPU model)"), title
    assert "7.50" in title or "7.5" in title, title
