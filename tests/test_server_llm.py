""""Optimize with SAGE" from the editor with a model configured: the server's agent process runs
the LLM loop against the fake OpenAI-compatible server (real HTTP), streams progress while the
model answers, and the verified rewrite comes back as a code action whose acceptance is logged."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.fake_openai import FakeOpenAI
from tests.test_llm_loop import KERNEL, answer, reflection, rewrites

NAIVE = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "vadd_naive"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    files = rewrites(NAIVE)
    with FakeOpenAI([answer(files["double-buffering"][KERNEL]), reflection]) as srv:
        yield srv


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]))
async def client(lsp_client: LanguageClient, model, tmp_path_factory):
    base = tmp_path_factory.mktemp("llm-editor")
    lsp_client.suggestions = []
    lsp_client.episodes = []

    @lsp_client.feature("sage/suggestion")
    def on_suggestion(params):
        lsp_client.suggestions.append(params)

    @lsp_client.feature("sage/episode")
    def on_episode(params):
        lsp_client.episodes.append(params)

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(params):
        return None

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"sage": {
            "eval": {"trials": 2, "cacheDir": str(base / "cache")},
            "agent": {"turns": 1, "llm": {"baseUrl": model.base_url, "model": "fake-coder", "backoffS": 0}},
            "memory": {"db": str(base / "mem"), "embedder": "hashing"},
        }}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_model_episode_runs_in_the_agent_process_with_progress(client: LanguageClient, model, tmp_path):
    task = tmp_path / "vadd_naive"
    shutil.copytree(NAIVE, task)
    uri = (task / KERNEL).as_uri()
    started = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sage.optimize", arguments=[uri]))
    assert started["started"] is True, started
    for _ in range(3000):   # the command answers at once; the episode's end comes as sage/episode
        if client.episodes:
            break
        await asyncio.sleep(0.1)
    result = client.episodes[-1]
    assert result.status == "improved" and result.model == "fake-coder", result
    assert model.requests and model.requests[0].body["model"] == "fake-coder" and model.requests[0].body["stream"]
    messages = [getattr(r, "message", None) or (r.get("message") if isinstance(r, dict) else None)
                for reports in client.progress_reports.values() for r in reports]
    assert any(m and m.startswith("the model is answering") for m in messages), messages
    assert any(m and m.startswith("turn 1 model correct ") and "new best" in m for m in messages), messages
    note = client.suggestions[-1]
    assert "BUFFER_NUM = 2" in note.diff and note.speedup > 1
