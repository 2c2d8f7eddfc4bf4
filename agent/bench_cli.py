"""`sage-npu bench SUITE [--turns N] [--jobs N | --ray [ADDRESS]] [--wave N] [--timeout S] [--out results.json]
[--fresh] [--trials N]`, and `sage-npu bench compare A.json B.json`.

The root CLI owns the parser and the settings: it calls `add_bench_parser(subparsers, global_flags)`, puts
`--ray`, `--wave` and `--timeout` into `settings.agent.bench` and, for a parsed `bench` command, calls
`run_bench(settings.eval, settings.memory, settings.agent, args)`, which returns the exit code (with
several models, `--model a --model b` or agent.bench.models, the worst of their runs): 0 the suite
ran (unsolved tasks are results, not errors), 2 a usage or setup error (no such suite, no task in it,
--jobs < 1, Ray missing, the output file cannot be written, a journal of another run), 1 the run stopped
early (a lost cluster, say) and 130 interrupted: both print and write the rows so far. Episodes are
recorded in the experience memory only when one is configured (`--db`, the config file or
SAGE_NPU_MEMORY__DB). With `--out FILE`, the run is journaled
beside FILE and resumes when started again (docs/bench.md). Human output: a progress bar (tasks done,
execution rate so far, ETA) on a terminal, a line per task, then the table; `--json` prints the JSON
document of `sage_npu.agent.bench` instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the parser is built on every command: keep its imports light
    from sage_npu.agent.settings import AgentSettings
    from sage_npu.memory.settings import MemorySettings
    from sage_npu.npu_eval.settings import EvalSettings


def add_bench_parser(subparsers, global_flags: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add `bench` (accepting the global flags after its name)."""
    p = subparsers.add_parser(
        "bench", parents=[global_flags], help="run offline episodes over a suite of tasks",
        description="Optimize every task folder in SUITE (each with host.py, reference.py and a kernel) and "
        "report per-task rows, execution rate, Fast_1.0, S_self, turns, tokens and wall time.")
    p.add_argument("suite", type=Path, help="folder of task folders (e.g. examples/tasks); or `compare A.json "
                   "B.json`: two runs' --out files side by side")
    p.add_argument("files", type=Path, nargs="*", help=argparse.SUPPRESS)   # compare's two files
    p.add_argument("--turns", type=int, help="candidates per task at most (default: agent.turns, 30)")
    p.add_argument("--jobs", type=int, default=1, help="tasks run in parallel worker processes (default 1)")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run each episode as a Ray task: on the cluster at ADDRESS, or a local Ray instance")
    p.add_argument("--wave", type=int, help="episodes per wave, credited in suite order when it ends "
                   "(default: agent.bench.wave, 8); the memory a run leaves depends on it")
    p.add_argument("--timeout", type=float, metavar="S", help="end an episode after S seconds, recorded as a "
                   "timeout (default: agent.bench.task_timeout_s)")
    p.add_argument("--out", type=Path, metavar="FILE", help="also write the results as JSON to FILE; the run is "
                   "journaled beside it and resumes when started again")
    p.add_argument("--fresh", action="store_true", help="with --out: start over instead of resuming")
    p.add_argument("--model", action="append", metavar="NAME", help="run the suite with this model (repeat for "
                   "several, one run each: FILE.<model>.json, and a memory per model unless --shared-memory)")
    p.add_argument("--shared-memory", action="store_true", default=None,
                   help="with several --model: one memory for all of them (transfer across models)")
    p.add_argument("--trials", type=int, help="correctness trials per evaluation (default 5)")
    return p


def run_bench(settings_eval: EvalSettings, settings_memory: MemorySettings, agent: AgentSettings,
              args: argparse.Namespace) -> int:
    if str(args.suite) == "compare" or getattr(args, "files", []):
        return run_compare(args)
    turns = args.turns if args.turns is not None else agent.turns
    if turns < 1 or args.jobs < 1:
        print(f"sage-npu: --turns and --jobs must be at least 1 (got turns={turns}, jobs={args.jobs})",
              file=sys.stderr)
        return 2
    agent = agent.model_copy(update={"turns": turns})
    models = agent.bench.models
    if len(models) <= 1:
        one = agent.model_copy(update={"llm": agent.llm.model_copy(update={"model": models[0]})}) if models else agent
        return _run_one(settings_eval, settings_memory, one, args, args.out)
    code = 0
    for m in models:   # one run per model, one after the other: each its own results, journal and memory
        llm = agent.llm.model_copy(update={"model": m})
        memory = settings_memory
        if settings_memory.db is not None and not agent.bench.shared_memory:
            memory = settings_memory.model_copy(update={"db": settings_memory.db / model_slug(m)})
        out = args.out.with_name(f"{args.out.stem}.{model_slug(m)}{args.out.suffix}") if args.out else None
        if not getattr(args, "json", False):
            print(f"== model {m}" + (f", memory {memory.db}" if memory.db is not None else ""), flush=True)
        code = max(code, _run_one(settings_eval, memory, agent.model_copy(update={"llm": llm}), args, out))
    return code


def model_slug(model: str) -> str:
    """A model name as a file or folder name part (`Qwen/Qwen2.5-Coder` -> `Qwen_Qwen2.5-Coder`)."""
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in model) or "model"


def _run_one(settings_eval: EvalSettings, settings_memory: MemorySettings, agent: AgentSettings,
             args: argparse.Namespace, out: Path | None) -> int:
    """One run of the suite; its exit code (see the module docstring)."""
    from sage_npu.agent.bench import BenchError, format_table, run_suite
    from sage_npu.agent.bench_journal import journal_path

    as_json = getattr(args, "json", False)
    memory = settings_memory if settings_memory.db is not None else None
    progress = Progress(show_lines=not as_json)
    try:
        result = run_suite(args.suite, settings_eval, agent, jobs=args.jobs, memory_settings=memory,
                           on_row=progress.row, journal_path=journal_path(out) if out is not None else None,
                           fresh=getattr(args, "fresh", False))
    except BenchError as e:
        print(f"sage-npu: {e}", file=sys.stderr)
        return 2
    finally:
        progress.close()
    data = result.to_json()
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(data, indent=2) + "\n")
        except OSError as e:
            print(f"sage-npu: cannot write the results to {out}: {e.strerror}; the table follows", file=sys.stderr)
            print(format_table(result))
            return 2
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        print()
        print(format_table(result))
        if out is not None:
            print(f"results written to {out}")
    if result.stopped:
        return 130 if result.stopped.startswith("interrupted") else 1
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """`sage-npu bench compare A.json B.json`: 0, or 2 for anything but two readable --out files."""
    from sage_npu.agent.bench_compare import CompareError, compare_json, format_compare, load

    files = getattr(args, "files", [])
    if str(args.suite) != "compare" or len(files) != 2:
        print("sage-npu: bench takes one SUITE, or `compare A.json B.json`", file=sys.stderr)
        return 2
    try:
        a, b = load(files[0]), load(files[1])
    except CompareError as e:
        print(f"sage-npu: {e}", file=sys.stderr)
        return 2
    if getattr(args, "json", False):
        print(json.dumps(compare_json(a, b), indent=2))
    else:
        print(format_compare(a, b, (str(files[0]), str(files[1]))))
    return 0


class Progress:
    """A line per finished task on stdout and, on a terminal, a bar on stderr: tasks done, the
    execution rate so far, the ETA (tqdm's, from the pace so far)."""

    def __init__(self, show_lines: bool = True) -> None:
        self.show_lines = show_lines
        self.solved = 0
        self.bar = None

    def row(self, row, done: int, total: int) -> None:
        from sage_npu.agent.bench import progress_line

        if self.bar is None:
            self.bar = _bar(total)
        self.solved += bool(row.correct)
        if self.show_lines:
            line = progress_line(row, done, total)
            if self.bar is not None:
                self.bar.write(line, file=sys.stdout)
            else:
                print(line, flush=True)
        if self.bar is not None:
            self.bar.set_postfix_str(f"ER {self.solved}/{done} ({self.solved / done:.0%})", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _bar(total: int):
    """tqdm's bar on stderr when it is a terminal, else None (logs and pipes get the lines alone)."""
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="task", file=sys.stderr, dynamic_ncols=True, desc="bench")
