"""`sage-npu <command>`: the command line (every command is described in README.md, the
report, settings and codes in docs/).

Global flags are accepted after the command name (`sage-npu eval PATH --chip 910B4 --json`).
Exit codes, the same for every command: 0 success (eval: correct, or a kernel alone that
compiles), 1 the kernel is not correct (or, for run, what the program returned), 2 usage or
setup errors (a missing path, a bad flag or setting), 141 the reader of the output went away
(`sage-npu ... | head`), quietly.

Start-up stays light: this module and the parsers import only argparse and the parts' parser
modules; each command imports what it runs when it runs (`sage-npu eval` never loads the agent,
the memory or the server).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from sage_npu.agent.bench_cli import add_bench_parser, run_bench
from sage_npu.memory.cli import add_memory_parser, run_memory
from sage_npu.npu_eval.run_cli import add_run_parser, cmd_run

if TYPE_CHECKING:
    from sage_npu.npu_eval.calibrate import Measurement
    from sage_npu.npu_eval.report import Report
    from sage_npu.npu_eval.task import Task
    from sage_npu.settings import Settings

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool whose reader went away


# The flags every subcommand takes (name, whether a value follows): accepted before or after it.
GLOBAL_FLAGS = {"--db": True, "--chip": True, "--backend": True, "--config": True, "--json": False}


def _global_flags() -> argparse.ArgumentParser:
    g = argparse.ArgumentParser(add_help=False)
    g.add_argument("--db", type=Path, help="experience memory folder")
    g.add_argument("--chip", help="chip profile (910B1-910B4, 310P3); default 910B2")
    g.add_argument("--backend", choices=["sim", "ascend", "auto"],
                   help="sim: CPU emulator; ascend: CANN + NPU; auto (default): ascend when CANN and an NPU are "
                        "found (sage-npu doctor), else sim")
    g.add_argument("--config", type=Path, help="TOML settings file")
    g.add_argument("--json", action="store_true", help="machine-readable output")
    return g


def build_parser(commands: set[str] | None = None) -> argparse.ArgumentParser:
    """The root parser; `commands`, when given, receives the subcommands' names."""
    parser = argparse.ArgumentParser(prog="sage-npu", description="Evaluate and optimize Ascend C kernels.")
    sub = parser.add_subparsers(dest="command", required=True)
    g = _global_flags()
    ev = sub.add_parser("eval", parents=[g], help="compile, run and check a kernel task",
                        description="Evaluate a task folder (reference.py, host.py, kernel) or a kernel file.")
    ev.add_argument("path", type=Path, help="task folder or kernel file")
    ev.add_argument("--seed", type=int, help="seed of the first trial's inputs")
    ev.add_argument("--trials", type=int, help="correctness trials (default 5)")
    ev.add_argument("--profile", action="store_true",
                    help="print the timeline: pipes, hot lines (estimated on sim, measured on ascend)")
    ev.add_argument("--sanitize", action="store_true", default=None,
                    help="ascend: build with --sanitizer -g and run under mssanitizer --tool=memcheck")
    ev.add_argument("--trace", type=Path, metavar="FILE", help="write a Chrome trace (open it in Perfetto)")
    add_estimate_only_flags(ev, "the estimate (and --profile)")
    ev.add_argument("--debug", action="store_true",
                    help="build the task with -g -O0 and start gdb stopped at the kernel entry (block 0, or --block)")
    ev.add_argument("--block", type=int, metavar="N", help="with --debug: the block to stop in (default 0)")
    ev.set_defaults(func=cmd_eval)
    cal = sub.add_parser("calibrate", parents=[g], help="fit the cost model to measured kernel times",
                         description="Fit the cost model's constants for --chip to device times measured with "
                         "msprof or torch_npu. MEASUREMENTS is a CSV with the columns task,measured_us (a number, or "
                         "the msprof op output folder to read it from); --from-device SUITE measures them on the NPU.")
    cal.add_argument("measurements", type=Path, nargs="?")
    add_estimate_only_flags(cal, "each measured task's trace (measurements are taken at production shapes)")
    cal.add_argument("--from-device", type=Path, metavar="SUITE",
                     help="run each task of SUITE on the NPU (msprof op) and fit to those times")
    cal.set_defaults(func=cmd_calibrate)
    opt = sub.add_parser("optimize", parents=[g], help="search for a faster correct kernel (the SAGE agent)",
                         description="Optimize a task with the SAGE agent: a model when $SAGE_NPU_LLM_BASE_URL (or "
                         "agent.llm.base_url) is set, else the offline optimizer. Every candidate is compiled, checked "
                         "on every trial and estimated; the best correct one is written to <task>/.sage/suggestion/.")
    opt.add_argument("path", type=Path, help="task folder")
    opt.add_argument("--turns", type=int, help="candidates to evaluate at most (default: agent.turns, 30)")
    opt.add_argument("--apply", action="store_true", help="replace kernel and host.py with a correct improvement")
    opt.add_argument("--trials", type=int, help="correctness trials per candidate (default 5)")
    opt.add_argument("--verbose", "-v", action="store_true",
                     help="also print the memory credit's symbols: z, and each item's xi, eta, u, n_ret, n_ado")
    opt.set_defaults(func=cmd_optimize)
    adv = sub.add_parser("advise", parents=[g], help="the performance advisor: ranked findings with estimated savings",
                         description="Evaluate a task and list what would make it faster, largest estimated saving "
                         "first: each finding at the line to change (host.py's included), with its cause and the "
                         "saving the cost model estimates for the change (docs/advisor.md).")
    adv.add_argument("path", type=Path, help="task folder or kernel file")
    adv.add_argument("--trials", type=int, help="correctness trials (default 5)")
    add_estimate_only_flags(adv, "the findings")
    adv.set_defaults(func=cmd_advise)
    # auto: sim; the settings read once cmd_run has parsed the options given after FILE
    add_run_parser(sub, g).set_defaults(func=lambda a: cmd_run(a, lambda: _settings(a, backend=False).eval))
    add_memory_parser(sub, g).set_defaults(func=cmd_memory)
    add_bench_parser(sub, g).set_defaults(func=cmd_bench)
    doc = sub.add_parser("doctor", parents=[g], help="what the device backend needs: each part, found or missing",
                         description="List what --backend ascend needs (CANN, bisheng, msprof, mssanitizer, npu-smi "
                         "and an NPU, the device nodes, torch_npu), one line each, and what --backend auto uses. "
                         "Exit 0 when the device can be used, 1 when not.")
    doc.add_argument("--run", type=Path, metavar="SUITE",
                     help="on a machine with an NPU: evaluate each task of SUITE (e.g. examples/tasks) on both "
                          "backends and print the estimate beside the measurement")
    doc.set_defaults(func=cmd_doctor)
    srv = sub.add_parser("serve", parents=[g], help="run the language server (stdio, or --tcp HOST:PORT)")
    srv.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    srv.set_defaults(func=cmd_serve)
    if commands is not None:
        commands.update(sub.choices)
    return parser


def _settings(args: argparse.Namespace, backend: bool = True) -> Settings:
    """The composed settings (defaults < --config < environment < flags); imported here, not at
    start-up, because pydantic-settings is a good part of the start-up time. With `backend`,
    `auto` is replaced by the backend it stands for here (labels then say what ran)."""
    from sage_npu.settings import load_settings

    settings = load_settings(args.config, _overrides(args))
    if not backend or settings.eval.backend != "auto":
        return settings
    from sage_npu.npu_eval.backends import concrete

    return settings.model_copy(update={"eval": concrete(settings.eval)})


def _usage_error(message: str) -> int:
    print(f"sage-npu: {message}", file=sys.stderr)
    return EXIT_USAGE


def _overrides(args: argparse.Namespace) -> dict:
    ev = {k: v for k, v in (("chip", args.chip), ("backend", args.backend),
                            ("seed", getattr(args, "seed", None)), ("sanitize", getattr(args, "sanitize", None)),
                            ("line_profile", True if getattr(args, "profile", False) else None),
                            ("trials", getattr(args, "trials", None)),
                            ("check", False if getattr(args, "estimate_only", False) else None),
                            ("run_timeout_s", getattr(args, "run_timeout", None))) if v is not None}
    out: dict = {"eval": ev} if ev else {}
    if args.db is not None:
        out["memory"] = {"db": args.db}
    bench = _bench_overrides(args)
    if bench:
        out["agent"] = {"bench": bench}
    return out


def _bench_overrides(args: argparse.Namespace) -> dict:
    """`sage-npu bench --ray [ADDRESS] --wave N --timeout S --model M... --shared-memory` as agent.bench
    settings."""
    out: dict = {}
    if getattr(args, "command", None) != "bench":   # `run --timeout` is the program's own limit
        return out
    ray = getattr(args, "ray", None)
    if ray is not None:
        out.update(ray=True, ray_address=ray or None)
    for flag, name in (("wave", "wave"), ("timeout", "task_timeout_s"), ("model", "models"),
                       ("shared_memory", "shared_memory")):
        if getattr(args, flag, None) is not None:
            out[name] = getattr(args, flag)
    return out


def _task_to_evaluate(args: argparse.Namespace) -> tuple[Settings, Task] | int:
    """The settings and the task at args.path, or the usage error's exit code (a backend that
    cannot run here, no such path, no kernel in the folder: the same usage error as every command's)."""
    from sage_npu.npu_eval.backends import estimate_only_refusal, unavailable
    from sage_npu.npu_eval.task import TaskError, load_task

    settings = _settings(args)
    missing = estimate_only_refusal(settings.eval) or unavailable(settings.eval.backend)
    if missing is not None:
        return _usage_error(missing)
    try:
        return settings, load_task(args.path)
    except TaskError as e:
        return _usage_error(str(e))


def add_estimate_only_flags(p: argparse.ArgumentParser, what: str) -> None:
    """--estimate-only and --timeout (docs/cost-model.md, "Estimate only"), for a command that
    evaluates tasks; `what` is what the command gives without the values."""
    p.add_argument("--estimate-only", action="store_true",
                   help=f"{what} without computing the values: one run with the cube's arithmetic skipped and "
                   "nothing checked, for shapes too large to emulate (emulator only)")
    p.add_argument("--timeout", dest="run_timeout", type=float, metavar="S",
                   help="wall-clock limit of one kernel run (eval.run_timeout_s, default 10): a production "
                   "shape's estimate-only run takes minutes")


def cmd_eval(args: argparse.Namespace) -> int:
    from sage_npu.npu_eval.evaluate import evaluate

    found = _task_to_evaluate(args)
    if isinstance(found, int):
        return found
    settings, task = found
    if args.debug or args.block is not None:
        return debug_in_gdb(args, task, settings)
    report = evaluate(task, settings.eval, trace_out=args.trace)
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        print(format_report(report))
        if args.profile:
            print(format_profile(report))
        if args.trace and report.timing is not None:
            print(f"trace written to {args.trace} (open it at https://ui.perfetto.dev)")
    return eval_exit_code(report)


def cmd_advise(args: argparse.Namespace) -> int:
    """`sage-npu advise PATH [--json] [--estimate-only]`: evaluate, then print the advisor's findings
    (the report's `advice`), largest saving first. Exit 1 when the kernel is not correct, or with
    --estimate-only did not run to its end (nothing is advised)."""
    from sage_npu.npu_eval.evaluate import evaluate
    from sage_npu.npu_eval.report import Advice

    found = _task_to_evaluate(args)
    if isinstance(found, int):
        return found
    settings, task = found
    report = evaluate(task, settings.eval)
    if args.json:
        print(Advice.of(report).model_dump_json(indent=2))
    elif report.status not in ("correct", "estimated"):
        print(format_report(report))
        print("sage-npu: no advice: the kernel must be correct first", file=sys.stderr)
    else:
        print(format_advice(report))
    return eval_exit_code(report)


def format_advice(report: Report) -> str:
    """The findings as compiler-style lines (clickable in terminals and editors), largest saving first."""
    from sage_npu.npu_eval.report import labelled

    t = report.timing
    if t is None:
        return "no advice: nothing was estimated"
    if not report.advice:
        return (f"{Path(report.kernel).name}: no finding saves 2% or more of "
                f"{labelled(f'{t.estimated_us:.2f} us', t.estimated)}")
    lines = [f"{f.file}:{f.line}:1: {f.severity}: {f.message} [{f.code}]" for f in report.advice]
    top = report.advice[0]
    lines.append(f"{Path(report.kernel).name}: {len(report.advice)} finding(s); top: {top.change}, "
                 f"{labelled(f'~{top.saving_us:.2f} us of {top.before_us:.2f} us', top.estimated)}")
    return "\n".join(lines)


def debug_in_gdb(args: argparse.Namespace, task: Task, settings: Settings) -> int:
    """`eval --debug`: the task planned and built for gdb (npu_eval/debug.py), then this process
    becomes gdb, stopped at the kernel entry in the block asked for (the terminal is gdb's)."""
    import shutil

    from sage_npu.npu_eval.debug import command_line
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.report import Report
    from sage_npu.npu_eval.stages import StageFailure

    if not args.debug:
        return _usage_error("--block names the block to debug: use it with --debug")
    if args.json or args.profile or args.trace:
        return _usage_error("--debug starts gdb: it cannot be combined with --json, --profile or --trace")
    gdb = shutil.which("gdb")
    if gdb is None:
        return _usage_error("--debug needs gdb, which is not on PATH (Debian and Ubuntu: apt-get install gdb)")
    block = args.block if args.block is not None else 0
    with Evaluator(settings.eval) as ev:
        target = ev.debug_target(task, block)
    if isinstance(target, StageFailure):
        print(format_report(Report(task=str(task.root), kernel=str(task.kernel), chip=settings.eval.chip,
                                   status=target.status, diagnostics=target.diagnostics)))
        print(f"sage-npu: block {block} cannot be debugged until the task builds and plans", file=sys.stderr)
        return 1
    argv = target.gdb_argv(gdb)
    print(f"sage-npu: {target.entry}, block {block} of {target.block_dim}, built with -g -O0 in {target.folder}; "
          f"gdb stops at {target.stop.file}:{target.stop.line}\n  {command_line(argv)}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os.execv(gdb, argv)  # gdb owns the terminal (Ctrl+C interrupts the kernel, not us); never returns


def eval_exit_code(report: Report) -> int:
    """0 for a correct kernel, for a kernel alone that compiles and for an estimate-only run (no
    error diagnostic either way); else 1."""
    if report.status in ("compiled", "estimated"):
        return 1 if report.errors() else 0
    return 0 if report.status == "correct" else 1


def cmd_calibrate(args: argparse.Namespace) -> int:
    from sage_npu.npu_eval.calibrate import CalibrationError, Sample, fit, loss, read_measurements, save_user_costs
    from sage_npu.npu_eval.chips import chip_profile
    from sage_npu.npu_eval.cost_model import estimate
    from sage_npu.npu_eval.costs import default_costs
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.report import labelled

    settings = _settings(args)
    chip = chip_profile(settings.eval.chip)
    if (args.measurements is None) == (args.from_device is None):
        return _usage_error("calibrate wants MEASUREMENTS (a CSV) or --from-device SUITE: one of them")
    try:
        rows = (read_measurements(args.measurements) if args.from_device is None
                else device_measurements(args.from_device, settings))
    except CalibrationError as e:
        return _usage_error(str(e))
    samples = []
    # the model's traces: no advice (its counterfactual estimates are not fitted)
    with Evaluator(settings.eval.model_copy(update={"trials": 1, "backend": "sim", "advise": False})) as ev:
        for m in rows:
            evaluation = ev.evaluate(m.task)
            if evaluation.trace is None:
                r = evaluation.report
                why = next((f"{d.file}:{d.line}: {d.message}" for d in r.errors()), "it did not run to its end")
                print(f"sage-npu: {m.task}: no trace to calibrate against ({r.status}: {why}); fix the task first "
                      f"(sage-npu eval {m.task})", file=sys.stderr)
                return 1
            samples.append(Sample(evaluation.trace.trace, evaluation.trace.block_dim, m.measured_us, m.task.name))
    base = default_costs(chip.family)
    before = loss(samples, chip, base)
    table, factors, after = fit(samples, chip, base)
    path = save_user_costs(settings.eval.resolved_profile_dir(), chip.name, table)
    rows_out = [{"task": s.name, "measured_us": s.measured_us,
                 "estimated_us": estimate(s.trace, chip, table, s.block_dim).estimated_us} for s in samples]
    if args.json:
        print(json.dumps({"chip": chip.name, "factors": factors, "loss_before": before, "loss_after": after,
                          "profile": str(path), "tasks": rows_out}, indent=2))
    else:
        print(f"calibrated {chip.name} on {len(samples)} measurements: mean squared log error "
              f"{before:.4f} -> {after:.4f}")
        print("factors: " + ", ".join(f"{k} x{v:.3g}" for k, v in factors.items()))
        for r in rows_out:
            measured = labelled(f"{r['measured_us']:9.2f} us", estimated=False)
            estimated = labelled(f"{r['estimated_us']:9.2f} us", estimated=True)
            print(f"  {r['task']:<24} {measured}  {estimated}")
        print(f"saved {path}; eval on {chip.name} uses it from now on")
    return 0


def device_measurements(suite: Path, settings: Settings) -> list[Measurement]:
    """`calibrate --from-device`: each task of `suite` measured on the NPU (trial 0 under msprof
    op), as the measurements the fit pairs with the emulator's traces."""
    from sage_npu.npu_eval.backends import unavailable
    from sage_npu.npu_eval.calibrate import CalibrationError, Measurement
    from sage_npu.npu_eval.evaluate import Evaluator

    missing = unavailable("ascend")
    if missing is not None:
        raise CalibrationError(missing)
    tasks = sorted(p for p in suite.iterdir() if (p / "host.py").is_file()) if suite.is_dir() else []
    if not tasks:
        raise CalibrationError(f"{suite}: no task folders (with host.py) to measure")
    out = []
    # only the device's time is wanted (the emulator's runs separately): no advice, no emulator build
    with Evaluator(settings.eval.model_copy(update={"backend": "ascend", "trials": 1, "device_advice": False})) as ev:
        for task in tasks:
            r = ev.evaluate(task).report
            if r.timing is None or r.timing.estimated:
                print(f"sage-npu: {task.name}: not measured on the device ({r.status}); left out", file=sys.stderr)
                continue
            out.append(Measurement(task, r.timing.estimated_us))
    if not out:
        raise CalibrationError(f"{suite}: no task was measured on the device")
    return out


def cmd_optimize(args: argparse.Namespace) -> int:
    from sage_npu.agent.episode import Attempt, apply_suggestion, write_suggestion
    from sage_npu.agent.llm import RetryNotice
    from sage_npu.agent.optimize import optimize
    from sage_npu.agent.progress import memory_effect, progress_lines
    from sage_npu.memory.experience_memory import ExperienceMemory
    from sage_npu.memory.store import StoreError
    from sage_npu.npu_eval.backends import unavailable
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.report import timing_label
    from sage_npu.npu_eval.task import TaskError

    settings = _settings(args)
    missing = unavailable(settings.eval.backend)
    if missing is not None:
        return _usage_error(missing)
    label = timing_label(estimated=settings.eval.backend != "ascend")
    streamed = [0]
    previous: list[Attempt] = []

    def clear_stream() -> None:
        if streamed[0]:
            print("\r" + " " * 60 + "\r", end="")
            streamed[0] = 0

    def progress(a: Attempt) -> None:
        if args.json:
            return
        clear_stream()
        print("\n".join(progress_lines(a, previous[-1] if previous else None)), flush=True)
        previous.append(a)

    def retry(notice: RetryNotice) -> None:
        if not args.json:
            clear_stream()
            print(f"  retrying: {notice.message(settings.agent.llm.base_url or 'the endpoint')}", file=sys.stderr,
                  flush=True)

    def token(piece: str) -> None:
        if args.json or not sys.stdout.isatty():
            return
        streamed[0] += len(piece)
        print(f"\r  the model is answering ... {streamed[0]} characters", end="", flush=True)

    try:
        memory = ExperienceMemory.open(settings.memory)
    except StoreError as e:
        print(f"sage-npu: the experience memory cannot be used ({e}); optimizing without it", file=sys.stderr)
        memory = None
    try:
        with Evaluator(settings.eval.verifying()) as ev:
            result = optimize(args.path, ev, settings.agent, memory=memory, turns=args.turns, on_attempt=progress,
                              on_token=token, on_retry=retry)
    except TaskError as e:
        return _usage_error(str(e))
    if result.error and not args.json:
        print(f"sage-npu: the episode stopped early: {result.error}", file=sys.stderr)
    applied = []
    where = None
    if result.status in ("improved", "fixed"):
        where = write_suggestion(result)
        if args.apply:
            applied = apply_suggestion(result)
    if args.json:
        print(json.dumps(result.to_json() | {"applied_files": applied}, indent=2))
        return 0 if result.status != "seed_not_correct" else 1
    code = print_outcome(result, label, where, applied)
    if result.tokens:
        print(f"tokens: {result.tokens} ({result.model})")
    if result.retries:
        print(f"the LLM endpoint needed {result.retries} retr{'y' if result.retries == 1 else 'ies'}")
    print(memory_effect(result, verbose=args.verbose))
    return code


def print_outcome(result, label: str, where: Path | None, applied: list[str]) -> int:
    """The human summary of an optimize episode; its exit code."""
    if result.status == "seed_not_correct":
        print(format_report(result.seed))
        print("the kernel is not correct yet: fix it first (sage-npu eval shows why)" if result.model == "offline"
              else f"no correct candidate in {result.turns} turns")
        return 1
    written = f"suggestion written to {where}" + (f"; applied to {', '.join(applied)}" if applied else
                                                    "; --apply replaces the task's files with it")
    best = result.best
    if result.status == "fixed" and best is not None and best.timing and best.correctness:
        t = best.timing.estimated_us
        print(f"\nfixed: a correct kernel at {t:.3f} us ({label}), correct on {best.correctness.passed}/"
              f"{best.correctness.trials} trials, after {result.turns} turns")
        print(result.diff.rstrip())
        print(written)
        return 0
    assert result.seed.timing is not None  # the seed is correct here, so it was timed
    seed_t = result.seed.timing.estimated_us
    if result.status == "no_improvement":
        print(f"no faster correct candidate in {result.turns} turns; the kernel stays at {seed_t:.3f} us ({label})")
        return 0
    assert best is not None and best.timing is not None and best.correctness is not None  # improved
    best_t = best.timing.estimated_us
    print(f"\nbest: {seed_t:.3f} us -> {best_t:.3f} us, {label} {result.speedup:.2f}x, correct on "
          f"{best.correctness.passed}/{best.correctness.trials} trials, after {result.turns} turns")
    for step in result.applied:
        print(f"  - {step}")
    print(result.diff.rstrip())
    print(written)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    settings = _settings(args)
    return run_bench(settings.eval, settings.memory, settings.agent, args)


def cmd_memory(args: argparse.Namespace) -> int:
    return run_memory(_settings(args, backend=False).memory, args)


def cmd_doctor(args: argparse.Namespace) -> int:
    """Each part the device backend needs, found or missing; with --run, estimate beside measurement."""
    from sage_npu.npu_eval.backends.ascend_env import detect

    setup = detect()
    why = setup.reason()
    uses = "ascend (the NPU)" if why is None else "sim (the CPU emulator): " + ", ".join(
        p.name for p in setup.missing()) + " missing"
    if args.json and args.run is None:
        print(json.dumps({"parts": [{"name": p.name, "found": p.found, "required": p.required, "detail": p.detail}
                                    for p in setup.parts], "auto": "ascend" if why is None else "sim"}, indent=2))
    elif args.run is None:
        print("\n".join(p.line() for p in setup.parts))
        print(f"{'--backend auto':<13} uses {uses}")
    if args.run is None:
        return 0 if why is None else 1
    if why is not None:
        return _usage_error(why)
    return doctor_run(args.run, _settings(args))


def doctor_run(suite: Path, settings: Settings) -> int:
    """Every task of `suite` on the emulator and on the NPU: the cost model's estimate beside the
    measurement, the table that says how far to trust the model on this chip."""
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.report import timing_label
    from sage_npu.npu_eval.task import TaskError, load_task

    tasks = sorted(p for p in Path(suite).iterdir() if p.is_dir()) if Path(suite).is_dir() else []
    if not tasks:
        return _usage_error(f"{suite}: no task folders to run")
    base = settings.eval.model_copy(update={"trials": 1})
    heads = timing_label(estimated=True), timing_label(estimated=False)
    print(f"{'task':<24} {'sim':<10} {heads[0]:>16}  {'ascend':<10} {heads[1]:>11}  {'ratio':>7}   (us)")
    with Evaluator(base.model_copy(update={"backend": "sim"})) as sim, \
            Evaluator(base.model_copy(update={"backend": "ascend", "device_advice": False})) as dev:
        for path in tasks:
            try:
                task = load_task(path)
            except TaskError:
                continue
            a, b = sim.evaluate(task).report, dev.evaluate(task).report
            est = a.timing.estimated_us if a.timing else None
            got = b.timing.estimated_us if b.timing else None
            ratio = f"{est / got:7.2f}" if est and got else f"{'-':>7}"
            print(f"{path.name:<24} {a.status:<10} {est or 0:16.2f}  {b.status:<10} {got or 0:11.2f}  {ratio}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from sage_npu import __version__
    from sage_npu.server.setup import serve

    settings = _settings(args)
    tcp = None
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            return _usage_error("--tcp wants HOST:PORT, e.g. 127.0.0.1:2087")
        tcp = (host or "127.0.0.1", int(port))
    serve(settings, __version__, tcp=tcp)
    return 0


# How `--profile` names each part of the estimate (report.TimeCauseName; docs/profile.md).
CAUSE_LABELS = {
    "op_head": "op head (fixed per launch)",
    "pipe_work": "{pipe} work",
    "pipe_heads": "{pipe} pipe head (fixed per kernel)",
    "bank_conflicts": "{pipe} UB bank conflicts",
    "bandwidth_share": "{pipe} GM bandwidth shared (other cores; reads beside writes)",
    "waits": "waits on other pipes",
    "roofline": "roofline bound",
}


def format_profile(report: Report) -> str:
    """The timeline (estimated, or measured on the device): device time, the bottleneck with what
    it means and what to try (docs/profile.md), where the time goes by cause, each pipe's busy
    share and the hot lines."""
    import textwrap

    from sage_npu.npu_eval.cost_model import bottleneck_advice
    from sage_npu.npu_eval.report import labelled

    t = report.timing
    if t is None:
        return "no estimate: the kernel did not run to the end"
    how = "" if t.estimated else " (msprof op on the NPU)"
    lines = [f"{labelled(f'{t.estimated_us:.2f} us', t.estimated)} device time{how} + launch "
             f"{t.launch_overhead_us:.0f} us; roofline {t.roofline_us:.2f} us; bottleneck: {t.bottleneck}"]
    advice = bottleneck_advice(t.bottleneck)
    if advice:
        lines += textwrap.wrap(f"{t.bottleneck}: {advice} (docs/profile.md)", width=100, initial_indent="  ",
                               subsequent_indent="  ")
    if t.causes:
        lines.append(f"where the time goes ({t.core_label}):")
        for c in t.causes:
            label = CAUSE_LABELS.get(c.cause, c.cause).format(pipe=c.pipe)
            share = c.us / t.estimated_us if t.estimated_us else 0.0
            lines.append(f"  {label:<38} {c.us:9.3f} us {share * 100:5.1f}%")
    if t.gm_read_bytes:
        share = t.l2_hit_bytes / t.gm_read_bytes
        lines.append(f"GM reads {t.gm_read_bytes:,} bytes, {t.l2_hit_bytes:,} ({share * 100:.1f}%) from the L2 cache, "
                     f"saving {labelled(f'{t.l2_saved_us:.3f} us', t.estimated)} of MTE2 time ({t.core_label})")
    lines.append("pipe   busy")
    for pipe, ratio in sorted(t.pipes.items(), key=lambda kv: -kv[1]):
        lines.append(f"{pipe:<6} {ratio * 100:5.1f}%  {'#' * round(ratio * 40)}")
    if report.advice:
        lines.append("advice (sage-npu advise), saving by change:")
        for f in report.advice:
            saving = labelled(f"{f.saving_us:.3f} us", f.estimated)
            lines.append(f"  {Path(f.file).name}:{f.line:<5} {saving:>24}  {f.change} [{f.code}]")
    if t.hot_lines:
        lines.append(f"hot lines ({t.core_label}):")
        for h in t.hot_lines:
            try:
                src = Path(h.file).read_text(errors="replace").splitlines()[h.line - 1].strip()
            except (OSError, IndexError):
                src = ""
            lines.append(f"  {Path(h.file).name}:{h.line:<5} {h.us:8.3f} us  {src[:70]}")
    return "\n".join(lines)


def format_report(report: Report) -> str:
    """Human output: compiler-style diagnostics (clickable in terminals and editors), then a summary."""
    lines = []
    for d in report.diagnostics:
        block = f" (block {d.block})" if d.block is not None and f"block {d.block}" not in d.message else ""
        lines.append(f"{d.file}:{d.line}:{d.column}: {d.severity}: {d.message}{block} [{d.code}]")
    c = report.correctness
    summary = f"{report.status}"
    if report.status == "estimated":
        summary += ": its values were not computed or checked (--estimate-only)"
    elif c is not None:
        summary += f": {c.passed}/{c.trials} trials pass, max rel err {c.max_rel_err:.3g}"
    lines.append(f"{Path(report.kernel).name} on {report.chip} ({report.backend}): {summary}")
    if report.stdout:
        lines.append("--- kernel output ---")
        lines.append(report.stdout.rstrip())
    return "\n".join(lines)


def hoist_global_flags(argv: list[str], commands: set[str]) -> list[str]:
    """`sage-npu --json --chip 910B4 eval X` as `sage-npu eval --json --chip 910B4 X`: the global
    flags every subcommand takes are accepted before the subcommand too. Anything else before
    it is left where it is, for argparse to refuse."""
    moved: list[str] = []
    stray: list[str] = []  # not a global flag: left before the subcommand, where argparse names it
    i = 0
    while i < len(argv) and argv[i] not in commands:
        name = argv[i].split("=", 1)[0]
        width = 2 if GLOBAL_FLAGS.get(name) and "=" not in argv[i] else 1
        (moved if name in GLOBAL_FLAGS else stray).extend(argv[i:i + width])
        i += width
    if i >= len(argv):
        return argv
    return [*stray, argv[i], *moved, *argv[i + 1:]]


def _terminated(signum, frame) -> None:
    # SIGTERM (a closed terminal, `timeout`, a supervisor) ends like Ctrl+C: the temporary
    # folders' context managers and the workers' shutdown run on the way out.
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)
    try:
        commands: set[str] = set()
        parser = build_parser(commands)
        args = parser.parse_args(hoist_global_flags(list(sys.argv[1:] if argv is None else argv), commands))
        from sage_npu.settings import SettingsError

        try:
            return args.func(args)
        except SettingsError as e:
            return _usage_error(str(e))
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """The output's reader closed the pipe (`| head`): stop without a traceback. Whatever is still
    buffered goes to /dev/null, so the flush at exit does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
