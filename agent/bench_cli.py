"""`sage-npu bench SUITE [--turns N] [--jobs N] [--out results.json] [--trials N]`.

The root CLI owns the parser and the settings: it calls `add_bench_parser(subparsers, global_flags)` and,
for a parsed `bench` command, `run_bench(settings.eval, settings.memory, settings.agent.turns, args)`,
which returns the exit code: 0 the suite ran (unsolved tasks are results, not errors), 2 a usage or
setup error (no such suite, no task in it, --jobs < 1, the output file cannot be written).
Episodes are recorded in the experience memory only when one is configured (`--db`, the config file
or SAGE_NPU_MEMORY__DB). Human output: a progress line per task, then the table; `--json` prints the
JSON document of `sage_npu.agent.bench` instead.
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
    p.add_argument("suite", type=Path, help="folder of task folders (e.g. examples/tasks)")
    p.add_argument("--turns", type=int, help="candidates per task at most (default: agent.turns, 30)")
    p.add_argument("--jobs", type=int, default=1, help="tasks run in parallel worker processes (default 1)")
    p.add_argument("--out", type=Path, metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument("--trials", type=int, help="correctness trials per evaluation (default 5)")
    return p


def run_bench(settings_eval: EvalSettings, settings_memory: MemorySettings, agent: AgentSettings,
              args: argparse.Namespace) -> int:
    from sage_npu.agent.bench import BenchError, format_table, progress_line, run_suite

    turns = args.turns if args.turns is not None else agent.turns
    if turns < 1 or args.jobs < 1:
        print(f"sage-npu: --turns and --jobs must be at least 1 (got turns={turns}, jobs={args.jobs})",
              file=sys.stderr)
        return 2
    as_json = getattr(args, "json", False)
    memory = settings_memory if settings_memory.db is not None else None

    def show(row, done: int, total: int) -> None:
        if not as_json:
            print(progress_line(row, done, total), flush=True)

    try:
        result = run_suite(args.suite, settings_eval, agent.model_copy(update={"turns": turns}),
                           jobs=args.jobs, memory_settings=memory, on_row=show)
    except BenchError as e:
        print(f"sage-npu: {e}", file=sys.stderr)
        return 2
    data = result.to_json()
    if args.out is not None:
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(data, indent=2) + "\n")
        except OSError as e:
            print(f"sage-npu: cannot write the results to {args.out}: {e.strerror}; the table follows",
                  file=sys.stderr)
            print(format_table(result))
            return 2
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        print()
        print(format_table(result))
        if args.out is not None:
            print(f"results written to {args.out}")
    return 0
