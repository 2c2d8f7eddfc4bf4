"""A verified advisor edit on the device backend over stdio (pytest-lsp, VS Code's capabilities),
against the fake CANN of tests/fake_cann.py: the server evaluates the planted two-block task on
the (fake) device, the perf-few-cores finding arrives on host.py's block_dim labelled as the CPU
model's beside the measured time, and the background verification measures the changed copy on
the device, so the quick fix is titled with the measured gain (docs/advisor.md, "On the device")."""

from __future__ import annotations

import re
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from sage_npu.npu_eval.backends import ascend_env
from tests.fake_cann import make_fake_cann
from tests.perf_tasks import materialise
from tests.test_server_advice import finding_on_save, verified_action

NAME = "perf_two_cores"
TWO_BLOCKS_US, ALL_CORES_US = 40.0, 4.5  # the fake device's times for 2 blocks and for 48


@pytest.fixture(autouse=True)
def fake_device(tmp_path_factory, monkeypatch) -> None:
    """The fake CANN on the environment the server process inherits (set up before it starts)."""
    root = tmp_path_factory.mktemp("cann")
    cann = make_fake_cann(root / "cann", profile={"duration_us": 99.0, "block_dim": 8, "duration_by_block_dim": {
        "2": TWO_BLOCKS_US, "48": ALL_CORES_US}})
    for var in ascend_env.HOME_VARS:
        monkeypatch.delenv(var, raising=False)
    for k, v in cann.env().items():
        monkeypatch.setenv(k, v)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]))
async def client(lsp_client: LanguageClient, tmp_path_factory):
    cache = tmp_path_factory.getbasetemp() / "server-device-cache"

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params):  # VS Code re-requests its lenses; nothing to do here
        return None

    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"sage": {"eval": {"backend": "ascend", "trials": 2, "cacheDir": str(cache)},
                                         "server": {"debounceS": 0.05}}}))
    lsp_client.position_encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_device_verifies_a_finding_by_measuring_it(client: LanguageClient, tmp_path):
    host = materialise(tmp_path)[NAME] / "host.py"
    uri = host.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=host.read_text())))
    diag = await finding_on_save(client, uri, "perf-few-cores")
    assert "block_dim=2" in host.read_text().splitlines()[diag.range.start.line]
    assert "(CPU model)" in diag.message and f"on the device: measured {TWO_BLOCKS_US:.2f} us" in diag.message
    estimated = float(re.search(r"~([\d.]+) us of", diag.message).group(1))
    action = await verified_action(client, uri, diag, "SAGE: block_dim 2 -> 48")
    m = re.search(r"verified measured ([\d.]+) us faster \(device\), correct on 2/2 trials "
                  r"\(the CPU model estimated ([\d.]+)\)$", action.title)
    assert m is not None, action.title
    assert float(m.group(1)) == TWO_BLOCKS_US - ALL_CORES_US and float(m.group(2)) == estimated
    edit = action.edit.changes[uri][0].new_text if action.edit and action.edit.changes else ""
    assert "block_dim=48" in edit
