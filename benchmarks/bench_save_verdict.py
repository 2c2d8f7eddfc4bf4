"""Save -> evaluated verdict through the language server, per bundled vector example (issue 14's
target: median at most 1.0 s on a quiet 2-core machine), next to the floor: a bare
`g++ -fsyntax-only` of the same kernel against the emulator headers, without a precompiled
header, in the same run.

For each example in examples/tasks: a copy of the task, opened in `sage-npu serve` over stdio with
default settings (5 trials, every check, the sandbox on) and a fresh build cache; one save
evaluates it unmeasured (it starts the detached process that makes the build cache's prebuilt
emulator parts, once per flag set; the trials wait for them). Then each trial edits the kernel so
its generated code changes (a new constant in the entry), sends didChange and didSave, and waits
for the evaluation's publishDiagnostics on the kernel (the one the `sage/report` notification
follows). Every trial must miss the build cache (a new binary appears in it), or the benchmark
fails. The syntax-only floor runs on the same edited kernel right after each trial.

    python benchmarks/bench_save_verdict.py [--trials 5] [--only add_custom,softmax_rows]
    [--debounce S]    (the server's sage.server.debounceS; default: the server's own default)
    [--set eval.prebuilt=false --set eval.optLevel=-O1]   (any sage.* setting: the build before issue 14)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from sage_npu.npu_eval.build import compile_flags
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.prebuilt import wait_for_a_set
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.signature import find_entries
from sage_npu.npu_eval.task import load_task

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "tasks"
VERDICT_TIMEOUT_S = 120.0


@dataclass
class Row:
    name: str
    save_s: list[float] = field(default_factory=list)
    syntax_s: list[float] = field(default_factory=list)
    statuses: set[str] = field(default_factory=set)


@dataclass
class Inbox:
    """What the server sent: publishDiagnostics times per uri, and each sage/report's arrival."""

    published: dict[str, list[float]] = field(default_factory=dict)
    reports: asyncio.Queue = field(default_factory=asyncio.Queue)


def edited(source: str, k: int) -> str:
    """`source` with a statement in the entry's body that changes its generated code."""
    entry = find_entries(source.encode())[0]
    lines = source.splitlines(keepends=True)
    at = next(i for i in range(entry.line - 1, len(lines)) if "{" in lines[i])
    stmt = f"    volatile int sage_bench_edit = {k}; (void)sage_bench_edit;\n"
    return "".join([*lines[:at + 1], stmt, *lines[at + 1:]])


def binaries(cache: Path) -> int:
    """Built harnesses in the build cache (two-character group folders hold them)."""
    return sum(1 for g in cache.glob("??") for f in g.iterdir() if not f.name.endswith(".json"))


def syntax_only(kernel: Path, root: Path) -> float:
    """The floor: g++ parses the kernel against the emulator headers (no precompiled header)."""
    flags = compile_flags(chip_profile(EvalSettings().chip), "-O0", {}) + ["-iquote", str(root)]
    with tempfile.TemporaryDirectory(prefix="sage-bench-syntax-") as tmp:
        src = Path(tmp) / "check.cpp"
        src.write_text(f'#include "sage_sim/harness.h"\n#include "{kernel}"\n')
        t = time.perf_counter()
        subprocess.run(["g++", *flags, "-fsyntax-only", str(src)], check=True, cwd=tmp)
        return time.perf_counter() - t


def with_settings(sage: dict, assignments: list[str]) -> dict:
    """`sage` with each `section.key=value` of `--set` (value as JSON, else a string)."""
    for a in assignments:
        path, _, raw = a.partition("=")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        section, _, key = path.partition(".")
        sage.setdefault(section, {})[key] = value
    return sage


async def prebuilt_ready(cache: Path, limit_s: float = 300.0) -> None:
    """Wait for the prebuilt emulator parts the warm-up save asked for: a detached process makes
    them once per flag set, and the trials measure the steady state that follows."""
    if not await asyncio.to_thread(wait_for_a_set, cache, limit_s):
        raise SystemExit(f"no prebuilt emulator parts in {cache} after {limit_s:.0f} s")


async def start(inbox: Inbox, tmp: Path, debounce: float | None, assignments: list[str]) -> LanguageClient:
    client = LanguageClient("bench-save", "1")

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _diagnostics(params: types.PublishDiagnosticsParams) -> None:
        inbox.published.setdefault(params.uri, []).append(time.perf_counter())

    @client.feature("sage/report")
    def _report(params) -> None:
        inbox.reports.put_nowait((time.perf_counter(), params))

    for method in (types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.WORKSPACE_CODE_LENS_REFRESH, types.PROGRESS,
                   types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE):
        client.feature(method)(lambda params: None)

    await client.start_io(sys.executable, "-m", "sage_npu.cli", "serve")
    sage: dict = {"eval": {"cacheDir": str(tmp / "cache")}, "memory": {"db": str(tmp / "mem"), "embedder": "hashing"}}
    if debounce is not None:
        sage["server"] = {"debounceS": debounce}
    sage = with_settings(sage, assignments)
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True)),
        initialization_options={"sage": sage}))
    client.initialized(types.InitializedParams())
    return client


async def save_and_wait(client: LanguageClient, inbox: Inbox, uri: str, version: int, text: str
                        ) -> tuple[float, str]:
    """Seconds from didSave to the evaluation's publishDiagnostics on `uri`, and the status."""
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [types.TextDocumentContentChangeWholeDocument(text=text)]))
    saved = time.perf_counter()
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    while True:
        arrived, report = await asyncio.wait_for(inbox.reports.get(), VERDICT_TIMEOUT_S)
        if arrived > saved:
            break
    # The evaluation publishes on the kernel, then notifies sage/report: the last publish before it.
    published = max(t for t in inbox.published.get(uri, []) if saved < t <= arrived)
    return published - saved, str(getattr(report, "status", "?"))


async def bench_example(name: str, trials: int, debounce: float | None, assignments: list[str]) -> Row:
    tmp = Path(tempfile.mkdtemp(prefix="sage-bench-save-"))
    root = tmp / name
    shutil.copytree(EXAMPLES / name, root)
    kernel = load_task(root).kernel
    uri, original = kernel.resolve().as_uri(), kernel.read_text()
    inbox, row = Inbox(), Row(name)
    client = await start(inbox, tmp, debounce, assignments)
    try:
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=uri, language_id="cpp", version=1, text=original)))
        await save_and_wait(client, inbox, uri, 2, original)  # warm: plan worker, kept plan
        await prebuilt_ready(tmp / "cache")
        for k in range(trials):
            text = edited(original, k + 1)
            kernel.write_text(text)
            before = binaries(tmp / "cache")
            seconds, status = await save_and_wait(client, inbox, uri, k + 3, text)
            if binaries(tmp / "cache") <= before:
                raise SystemExit(f"{name}: trial {k} hit the build cache; the edit must change the build")
            row.save_s.append(seconds)
            row.statuses.add(status)
            row.syntax_s.append(syntax_only(kernel, root))
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return row


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated example names (default: every example)")
    ap.add_argument("--debounce", type=float, default=None, help="sage.server.debounceS (default: the server's)")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="a sage.* setting")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())
    load = os.getloadavg()[0]
    print(f"save -> evaluated verdict, median of {args.trials} edits each (build-cache misses); "
          f"floor: g++ -fsyntax-only, no PCH; {os.cpu_count()} cores, load {load:.1f} at start"
          + (f"; settings {' '.join(args.set)}" if args.set else ""))
    print(f"{'example':<18} {'save->verdict':>13} {'syntax-only':>12} {'ratio':>6}  status")
    medians = []
    for name in names:
        row = await bench_example(name, args.trials, args.debounce, args.set)
        save, floor = statistics.median(row.save_s), statistics.median(row.syntax_s)
        medians.append(save)
        print(f"{name:<18} {save:12.2f}s {floor:11.2f}s {save / floor:6.2f}  {','.join(sorted(row.statuses))}",
              flush=True)
    print(f"{'median of medians':<18} {statistics.median(medians):12.2f}s   (target <= 1.0 s on a quiet machine; "
          f"load {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    asyncio.run(main())
