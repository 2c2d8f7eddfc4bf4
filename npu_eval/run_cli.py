"""`sage-npu run FILE [-- ARGS]`: build a whole Ascend C program for the CPU and run it
(npu_eval/program.py). The program's output passes through; a summary of its launches (faults
on their lines, estimated device time) follows on stderr, or everything as one JSON document
with --json. Exit code: the program's own, 1 when a launch faulted or the run crashed, timed
out or did not compile, 2 for usage errors."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from sage_npu.npu_eval.settings import DEFAULT_TIMEOUT_S, EvalSettings


def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--with", dest="extra_sources", action="append", type=Path, default=[], metavar="SRC",
                   help="another source of the program, compiled with it: the kernel file of a main.cpp, or the "
                   "sources of a kernel library it links (a CMake add_library, shared or static)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help=f"wall-clock limit of the run in seconds (default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="a preprocessor definition for the build (e.g. -D SCENARIO_NUM=1)")
    p.add_argument("--strict-device-memory", action="store_true",
                   help="fill fresh device memory (aclrtMalloc, GmAlloc) with the garbage pattern 0x5A instead of "
                   "zeros, so a program that relies on zeroed memory shows it (the NPU hands a new process zeroed "
                   "memory in practice, but nothing guarantees it; a kernel reading bytes nobody wrote is an "
                   "uninitialized-gm-read warning either way)")
    p.add_argument("--zero-device-memory", action="store_true", help=argparse.SUPPRESS)  # the default since 0.2
    p.add_argument("--debug", action="store_true",
                   help="build with -g -O0 and start gdb on the program, in the current directory, stopped at each "
                   "kernel entry in block 0 (or --block) of every launch; not confined (gdb traces it)")
    p.add_argument("--block", type=int, default=None, metavar="N", help="with --debug: the block to stop in")
    p.add_argument("--estimate-only", action="store_true",
                   help="the launches' estimates without the cube's arithmetic (each Mmad's multiply-accumulate "
                   "skipped), for a program at a production shape too large to emulate with its values; the "
                   "matrix results the program reads back are not computed (emulator only)")


def add_run_parser(subparsers, parents: argparse.ArgumentParser | list[argparse.ArgumentParser]
                   ) -> argparse.ArgumentParser:
    """The `run` subcommand; sets `func` to cmd_run (the caller may override it)."""
    parents = parents if isinstance(parents, list) else [parents]
    p = subparsers.add_parser(
        "run", parents=parents, help="build and run a whole Ascend C program (kernels + host main) on the CPU",
        description="Build an Ascend C program (.asc or .cpp with its host main(), ACL or CPU-debug API) for the "
        "CPU emulator and run it in the sandbox, in a copy of the current directory (files it writes come back). "
        "Each kernel launch is checked and estimated. Arguments after -- go to the program.")
    p.add_argument("file", type=Path, help="the program's source (.asc or .cpp)")
    # Everything after FILE: our options up to "--", the program's arguments after it (argparse alone
    # cannot take options between FILE and "--" when a positional list follows).
    p.add_argument("program_args", nargs=argparse.REMAINDER, metavar="[-- ARG ...]",
                   help="arguments for the program, after --")
    _add_options(p)
    options = argparse.ArgumentParser(prog=f"{p.prog} FILE", add_help=False, parents=parents)
    _add_options(options)
    p.set_defaults(func=cmd_run, run_options=options)
    return p


def _split_args(args: argparse.Namespace) -> list[str]:
    """Parse our options written after FILE into `args`; return the program's arguments: what
    follows "--", and otherwise every token that is not one of our options (argparse drops a
    "--" right after FILE, so `run f.asc -- -v` arrives as ["-v"])."""
    rest = list(args.program_args or [])
    parser: argparse.ArgumentParser = args.run_options
    if "--" in rest:
        i = rest.index("--")
        ours, prog = rest[:i], rest[i + 1:]
        _, unknown = parser.parse_known_args(ours, namespace=args)
        if unknown:
            parser.error(f"unrecognized arguments: {' '.join(unknown)} (the program's arguments go after --)")
        return prog
    _, prog = parser.parse_known_args(rest, namespace=args)
    return prog


def _settings_from_args(args: argparse.Namespace) -> EvalSettings:
    values = {k: v for k, v in (("chip", getattr(args, "chip", None)), ("backend", getattr(args, "backend", None)),
                                ("check", False if getattr(args, "estimate_only", False) else None))
              if v is not None}
    return EvalSettings.model_validate(values)


def debug_program(args: argparse.Namespace, prog_args: list[str], settings: EvalSettings,
                  defines: dict[str, str]) -> int:
    """`run --debug`: the program built for gdb (npu_eval/debug.py), then this process becomes
    gdb, stopped at the kernel entries in the block asked for."""
    import os
    import shutil

    from sage_npu.npu_eval.debug import DEBUG_FOLDER, command_line, prepare_program

    if not args.debug:
        print("sage-npu: --block names the block to debug: use it with --debug", file=sys.stderr)
        return 2
    gdb = shutil.which("gdb")
    if gdb is None:
        print("sage-npu: --debug needs gdb, which is not on PATH (Debian and Ubuntu: apt-get install gdb)",
              file=sys.stderr)
        return 2
    sources = [Path(args.file), *args.extra_sources]
    for p in sources:
        if not p.is_file():
            print(f"sage-npu: {p}: no such file", file=sys.stderr)
            return 2
    block = args.block if args.block is not None else 0
    target = prepare_program(sources, prog_args, settings, defines, block, sources[0].resolve().parent / DEBUG_FOLDER)
    if isinstance(target, list):
        for d in target:
            print(f"{d.file}:{d.line}:{d.column}: {d.severity}: {d.message} [{d.code}]", file=sys.stderr)
        return 1
    argv = target.gdb_argv(gdb)
    stops = ", ".join(f"{Path(s.file).name}:{s.line}" for s in target.stops)
    print(f"sage-npu: {args.file} built with -g -O0; gdb stops in block {block} at {stops}\n  {command_line(argv)}",
          file=sys.stderr, flush=True)
    sys.stdout.flush()
    os.execv(gdb, argv)  # gdb owns the terminal; never returns


def cmd_run(args: argparse.Namespace, settings_for: Callable[[], EvalSettings] | None = None) -> int:
    """`settings_for`: the settings, from the options (read once those after FILE are parsed into
    `args`: `run prog.asc --backend ascend --estimate-only`) and the caller's settings files."""
    from sage_npu.npu_eval.backends import estimate_only_refusal
    from sage_npu.npu_eval.program import ProgramError, format_program_report, run_program

    prog_args = _split_args(args)
    settings = settings_for() if settings_for else _settings_from_args(args)  # --estimate-only: check false
    if getattr(args, "estimate_only", False):
        refused = estimate_only_refusal(settings) or ("--estimate-only runs the program, not gdb: leave out --debug"
                                                      if args.debug or args.block is not None else None)
        if refused:
            print(f"sage-npu: {refused}", file=sys.stderr)
            return 2
    defines = {}
    for d in args.defines or []:
        name, _, value = d.partition("=")
        defines[name] = value or "1"
    if getattr(args, "strict_device_memory", False):
        defines["SAGE_DEVICE_MEM_FILL"] = "0x5A"
    as_json = bool(getattr(args, "json", False))
    if getattr(args, "debug", False) or getattr(args, "block", None) is not None:
        return debug_program(args, prog_args, settings, defines)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        report = run_program(args.file, prog_args, settings, extra_sources=args.extra_sources,
                             timeout_s=args.timeout, stdout=None if as_json else sys.stdout.fileno(),
                             stderr=sys.stderr.fileno(), defines=defines)
    except ProgramError as e:
        print(f"sage-npu: {e}", file=sys.stderr)
        return 2
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        print(format_program_report(report), file=sys.stderr)
    return report.exit_code
