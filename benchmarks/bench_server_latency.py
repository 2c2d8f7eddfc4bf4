"""Hover and code-action latency while the server is busy (issue 6's target: p99 under 100 ms):
a scripted LSP client starts `sage-npu serve`, then measures hover and codeAction round trips
three ways in one run: idle (the baseline), while an evaluation runs (saves), and while an
optimize episode runs. Prints p50/p99 for each."""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[1]
SAMPLES = 60


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


async def measure(client: LanguageClient, uri: str, line: int, n: int) -> tuple[list[float], list[float]]:
    hover, action = [], []
    pos = types.Position(line=line, character=20)
    for _ in range(n):
        t = time.perf_counter()
        await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), pos))
        hover.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        await client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), types.Range(pos, pos), types.CodeActionContext(diagnostics=[])))
        action.append((time.perf_counter() - t) * 1e3)
        await asyncio.sleep(0.02)
    return hover, action


async def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sage-bench-lsp-"))
    task = tmp / "vadd_naive"
    shutil.copytree(REPO / "examples" / "tasks" / "vadd_naive", task)
    kernel = task / "vadd_naive.cpp"
    uri = kernel.as_uri()
    line = next(i for i, ln in enumerate(kernel.read_text().splitlines()) if "AscendC::DataCopy(" in ln)
    client = LanguageClient("bench", "1")

    episode_ended = asyncio.Event()

    @client.feature("sage/suggestion")
    def _suggestion(params):  # the episode's result; not measured here
        pass

    @client.feature("sage/episode")
    def _episode_ended(params):  # sage.optimize answers at once; this says the episode is over
        episode_ended.set()

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def _message(params):
        pass

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def _progress(params):
        return None

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def _refresh(params):
        return None

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _diagnostics(params):
        pass

    @client.feature(types.PROGRESS)
    def _progress_report(params):
        pass

    await client.start_io(sys.executable, "-m", "sage_npu.cli", "serve")
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True)),
        initialization_options={"sage": {"eval": {"trials": 3, "cacheDir": str(tmp / "cache")},
                                         "agent": {"turns": 12}, "server": {"debounceS": 0.0},
                                         "memory": {"db": str(tmp / "mem"), "embedder": "hashing"}}}))
    client.initialized(types.InitializedParams())
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=kernel.read_text())))
    rows = []
    rows.append(("idle", *await measure(client, uri, line, SAMPLES)))

    # Saves keep an evaluation running while we measure.
    async def keep_saving(stop: asyncio.Event) -> None:
        while not stop.is_set():
            client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
            await asyncio.sleep(1.0)

    stop = asyncio.Event()
    saver = asyncio.create_task(keep_saving(stop))
    await asyncio.sleep(0.5)
    rows.append(("during evaluation", *await measure(client, uri, line, SAMPLES)))
    stop.set()
    await saver

    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="sage.optimize", arguments=[uri]))
    await asyncio.sleep(0.5)
    rows.append(("during an episode", *await measure(client, uri, line, SAMPLES)))
    await episode_ended.wait()
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    shutil.rmtree(tmp, ignore_errors=True)

    print(f"{'while':<20} {'hover p50':>10} {'hover p99':>10} {'action p50':>11} {'action p99':>11}  (ms; "
          f"{SAMPLES} samples each; target p99 < 100)")
    for name, hover, action in rows:
        print(f"{name:<20} {statistics.median(hover):10.1f} {pct(hover, 99):10.1f} "
              f"{statistics.median(action):11.1f} {pct(action, 99):11.1f}")


if __name__ == "__main__":
    asyncio.run(main())
