"""Run asc-devkit's own test plan on the CPU emulator: how much of the Ascend C people write
the product understands, measured on the official samples.

    python benchmarks/samples_sweep.py /path/to/asc-devkit            # a checkout, or a bare git repo
    python benchmarks/samples_sweep.py /path/to/asc-devkit --case reduce --jobs 2 --json out.json
    python benchmarks/samples_sweep.py /path/to/asc-devkit --rev 3d5cee08792f \
        --cases benchmarks/asc_devkit_3d5cee08792f_cases.json   # a commit without a test plan

It reads the plan (`scripts/presmoke/reports/case_runner_manifest.json`, or the case list given
with --cases, such as the one benchmarks/readme_cases.py builds from the READMEs), selects the cases of
this sweep (see `select`), and runs each case's own commands in a copy of its sample folder:
its scripts generate and verify the data, and `sage-npu run` replaces the CMake build and the
binary. A case passes when every command exits 0, no output says `test failed!` or `[ERROR]`,
and `sage-npu run` reports the program ok. Each command has `--timeout` seconds (300 by default),
which is also the program's run limit in `sage-npu run` (the build aside). It prints PASS/FAIL
per case with a one-line reason, the asc-devkit commit and a summary, and lists warnings (and any
error diagnostic) of passing cases. asc-devkit's licence keeps its files out of this repository: the sweep takes a path.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import string
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from pydantic import BaseModel, ConfigDict

from sage_npu.npu_eval.program import ProgramReport

MANIFEST = "scripts/presmoke/reports/case_runner_manifest.json"
ADVANCED = "04_advanced_api"  # the advanced (high-level) API's samples: in the sweep with --advanced
ARCH = "dav-2201"  # the 910B family
# A sample that uses the cube unit (matrix kernels, mixed AIC/AIV kernels) is out of this sweep.
CUBE = re.compile(r"\bMmad\b|\bLoadData\b|\bMatmul\b|\bFixpipe\b|KERNEL_TYPE_MIX|KERNEL_TYPE_AIC|__cube__|__mix__|"
                  r"TPosition::(A1|B1|A2|B2|CO1|CO2|C1|C2)\b|\bBatchMatmul\b|\bMatmul(Impl|Type)\b|lib/matmul_intf\.h")
# Commands that need CANN's framework tools (op packaging, graph compilers, profilers, torch_npu).
FRAMEWORK = re.compile(r"msopgen|\batc\b|custom_opp|\bmsprof\b|msopprof|ASCEND_CUSTOM_OPP_PATH|aclnn|torch|"
                       r"tensorflow|onnx|run_add_custom|add_custom_test|cmake -S|cmake --build|tiling_sink")
# A CMake build that packages operators for CANN (op packages, aclnn's generated API, the op
# repository a sample installs into) or builds a superproject of them.
CMAKE_FRAMEWORK = re.compile(r"\bnpu_op_package\b|\bnpu_op_kernel_library\b|\bnpu_op_code_gen\b|ASCEND_OPP_PATH|"
                             r"\bnnopbase\b|\bcust_opapi\b|\bExternalProject_Add\b")
# `test failed!` ends a failing sample's output, but a report keeps only the first 64 KB of it: a
# sample that prints every mismatching element (`CompareResult golden.bin failed ...`) is known
# failed from its first such line.
FAILED_TEXT = re.compile(r"test failed!|\[ERROR\]|CompareResult \S*\s*failed", re.IGNORECASE)
HEADER_SUFFIXES = (".h", ".hpp")
# What `sage-npu run` builds: AI Core and host sources, and AI CPU kernels (.aicpu).
BUILT_SUFFIXES = (".asc", ".cpp", ".cc", ".aicpu")
SOURCE_SUFFIXES = (*BUILT_SUFFIXES, *HEADER_SUFFIXES)
COMMAND_TIMEOUT_S = 300  # a command's limit, and the program's own run limit (`sage-npu run --timeout`)
# What `sage-npu run` may take beyond its run limit: building the program (one compile a source,
# each up to its own 120 s limit) and writing the report. The sweep waits that much longer, so a
# slow program is stopped by its run limit and reported as a timeout, with where it was.
BUILD_ALLOWANCE_S = 300
REASON_MAX = 200


class PlanCase(BaseModel):
    """One entry of asc-devkit's case_runner_manifest.json (the fields the sweep reads)."""

    model_config = ConfigDict(extra="ignore")
    case: str
    source_case: str
    supported_archs: list[str]
    target_runnable: bool = True
    skip: bool = False
    commands: list[str]
    runner: str = ""  # the case's run.sh (scripts/presmoke/cases/...), which sets its environment


@dataclass(frozen=True)
class LaunchEstimate:
    kernel: str
    block_dim: int
    estimated_us: float
    bottleneck: str


@dataclass
class Outcome:
    case: str
    passed: bool
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    errors_on_pass: list[str] = field(default_factory=list)  # error diagnostics of a case that passed
    seconds: float = 0.0
    # each launch's estimate (us) and busiest pipe, in launch order, of the case's program (its last run when
    # the case runs it several times): the cost model's figure for the official sample, beside its README's
    estimates: list[LaunchEstimate] = field(default_factory=list)


@dataclass
class ProgramVerdict:
    """What one `sage-npu run --json` said: why the program failed (None when it passed), the distinct
    warnings and error diagnostics, and each launch's estimate."""

    why: str | None
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    estimates: list[LaunchEstimate] = field(default_factory=list)


def one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_MAX else text[:REASON_MAX - 3] + "..."


def sample_sources(root: Path, c: PlanCase) -> str:
    """The text of the sample's sources, less those that only build executables this case does not
    run (a folder with a cube and a vector binary has a vector case)."""
    folder = root / "examples" / c.source_case
    others = _other_executables_sources(folder, c)
    parts = []
    for p in sorted(folder.rglob("*")):
        if p.suffix in SOURCE_SUFFIXES and p.is_file() and p not in others:
            parts.append(p.read_text(errors="replace"))
    return "\n".join(parts)


def _other_executables_sources(folder: Path, c: PlanCase) -> set[Path]:
    runs = {m.group(1) for m in map(_RUN.match, c.commands) if m}
    mine: set[Path] = set()
    theirs: set[Path] = set()
    for lists in folder.rglob("CMakeLists.txt"):
        for name, args in _cmake_calls(lists.read_text(errors="replace")):
            if name == "add_executable" and args:
                (mine if args[0] in runs else theirs).update(lists.parent / a for a in args[1:])
    return theirs - mine if runs else set()


def framework_text(root: Path, c: PlanCase) -> str:
    """The case's commands, and the text of the sample's scripts they run (`bash run.sh`): the
    script is the step."""
    folder = root / "examples" / c.source_case
    parts = list(c.commands)
    for cmd in c.commands:
        m = re.match(r"^(?:ba)?sh\s+(\S+)", cmd)
        if m and (folder / m.group(1)).is_file():
            parts.append((folder / m.group(1)).read_text(errors="replace"))
    return " ; ".join(parts)


def needs_framework(root: Path, c: PlanCase) -> bool:
    """Whether the case needs a CANN framework step: its commands or scripts run one
    (FRAMEWORK), or its CMake build packages operators for CANN (CMAKE_FRAMEWORK: an aclnn
    sample links the op package another sample installs)."""
    if FRAMEWORK.search(framework_text(root, c)):
        return True
    folder = root / "examples" / c.source_case
    return any(CMAKE_FRAMEWORK.search(p.read_text(errors="replace")) for p in folder.rglob("CMakeLists.txt"))


CubeSelection = Literal["exclude", "include", "only"]


def select(root: Path, plan: list[PlanCase], cube: CubeSelection = "exclude",
           advanced: bool = False) -> tuple[list[PlanCase], dict[str, int]]:
    """The cases of this sweep: the scenario lists dav-2201, the sample uses only vector cores
    (no cube API or mixed kernel in the sources of the binaries it runs), it sits outside
    04_advanced_api unless `advanced` (the advanced API's samples, which need the host tiling
    library), and its commands (and the sample scripts they run) need no CANN framework step.
    Returns the selection and why the rest were left out.

    `cube` "include" adds the cube and mixed cases the rule leaves out (advanced-API ones too),
    "only" runs just those: they measure how the emulator refuses what it cannot run."""
    chosen: list[PlanCase] = []
    left: dict[str, int] = {}
    for c in plan:
        why = None
        adv = ADVANCED in c.case and not advanced  # an advanced-API case left out unless asked for
        if ARCH not in c.supported_archs:
            why = f"not {ARCH}"
        elif adv and cube == "exclude":
            why = "advanced API"
        elif c.skip or not c.target_runnable:
            why = "skipped by the plan"
        elif not (root / "examples" / c.source_case).is_dir():
            why = "no sample folder"
        elif needs_framework(root, c):
            why = "CANN framework step"
        elif CUBE.search(sample_sources(root, c)):
            why = None if cube != "exclude" else "cube or mixed"
        elif cube == "only":
            why = "not cube"
        elif adv:
            why = "advanced API"
        if why:
            left[why] = left.get(why, 0) + 1
        else:
            chosen.append(c)
    return chosen, left


def rule_count(root: Path, plan: list[PlanCase]) -> str:
    """How many cases the selection rule of this sweep selects, as the issue it measures states
    it (every case that lists dav-2201, uses only vector cores and needs no CANN framework step),
    split into those outside 04_advanced_api, which a run selects, and the advanced API's,
    which --advanced adds."""
    every, _ = select(root, plan, advanced=True)
    advanced = sum(ADVANCED in c.case for c in every)
    return (f"the rule (lists {ARCH}, vector cores only, no CANN framework step) selects {len(every)} cases: "
            f"{len(every) - advanced} outside {ADVANCED} and {advanced} in it (--advanced)")


@dataclass
class Build:
    """What the sample's CMake would build: the executable's sources and its definitions."""

    sources: list[Path]
    defines: dict[str, str]


_CALL = re.compile(r"(\w+)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)", re.S)


_ARG = re.compile(r'(?:[^\s"]+|"(?:\\.|[^"\\])*")+')


def _cmake_args(text: str) -> list[str]:
    """CMake's arguments: a quoted argument loses its quotes; quotes inside an unquoted one stay
    (`DEF="v"` defines DEF as the string literal "v", as CMake passes it to the compiler)."""
    out = []
    for word in _ARG.findall(text):
        whole = re.fullmatch(r'"((?:\\.|[^"\\])*)"', word)
        out.append(whole.group(1).replace('\\"', '"') if whole else word)
    return out


def _cmake_calls(text: str) -> list[tuple[str, list[str]]]:
    text = re.sub(r"#[^\n]*", "", text)
    return [(name.lower(), _cmake_args(args)) for name, args in _CALL.findall(text)]


def _cmake_condition(args: list[str], values: dict[str, str]) -> bool:
    """The few if() forms samples use: NOT, DEFINED, STREQUAL, EQUAL, MATCHES, a bare variable."""
    def get(word: str) -> str:
        return values.get(word, word)  # CMake dereferences a word that names a variable

    if args[:1] == ["NOT"]:
        return not _cmake_condition(args[1:], values)
    if len(args) == 2 and args[0] == "DEFINED":
        return args[1] in values
    if len(args) == 3 and args[1] in ("STREQUAL", "EQUAL"):
        return get(args[0]) == get(args[2])
    if len(args) == 3 and args[1] == "MATCHES":
        return re.search(args[2], get(args[0])) is not None
    if len(args) == 1:
        # A defined variable is true unless its value is a false constant; an undefined name is
        # true only as a true constant (1, ON, YES, TRUE, Y, a non-zero number), as in CMake.
        word = args[0]
        if word in values:
            return values[word].upper() not in ("", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND") and \
                not values[word].upper().endswith("-NOTFOUND")
        return word.upper() in ("ON", "YES", "TRUE", "Y") or (word.lstrip("-").replace(".", "", 1).isdigit()
                                                               and float(word) != 0)
    return False


def _cmake_run(calls: list[tuple[str, list[str]]], cmake_cmds: list[str],
               known: dict[str, str] | None = None) -> list[tuple[str, list[str]]]:
    """The calls an `if()` leaves active, with ${VAR}s replaced: variables come from `known`
    (CMake's own, such as CMAKE_CURRENT_SOURCE_DIR), the plan's `cmake -DX=v`, then `set()`
    (a CACHE set only when not given on the command line) and `option()` (its default, OFF
    unless given)."""
    values = {"CMAKE_ASC_ARCHITECTURES": ARCH, **(known or {})}
    for cmd in cmake_cmds:
        for m in re.finditer(r"-D(\w+)=(\S+)", cmd):
            values[m.group(1)] = m.group(2).strip("'\"")
    given = set(values)
    stack: list[tuple[bool, bool]] = []  # (this branch active, some branch of this if taken)
    active, out = True, []
    for name, raw in calls:
        args = [re.sub(r"\$\{(\w+)\}", lambda m: values.get(m.group(1), ""), a) for a in raw]
        if name == "if":
            stack.append((active, False))
            taken = active and _cmake_condition(args, values)
            stack[-1] = (active, taken)
            active = taken
        elif name in ("elseif", "else") and stack:
            outer, taken = stack[-1]
            now = outer and not taken and (name == "else" or _cmake_condition(args, values))
            stack[-1] = (outer, taken or now)
            active = now
        elif name == "endif" and stack:
            active = stack.pop()[0]
        elif active:
            if name == "set" and len(args) >= 2 and not ("CACHE" in args and args[0] in given):
                values[args[0]] = args[1]
            elif name == "option" and args and args[0] not in given:  # option(NAME "help" [default OFF])
                values[args[0]] = args[2] if len(args) >= 3 else "OFF"
            elif name == "string" and args[:1] == ["REGEX"]:
                values.update(_cmake_string_regex(args[1:]))
            out.append((name, args))
    return out


def _cmake_string_regex(args: list[str]) -> dict[str, str]:
    """The variables `string(REGEX MATCH|MATCHALL|REPLACE ...)` sets (asc-devkit's fixpipe_l0c2l1
    derives ASC_ARCHITECTURES=2201 from dav-2201 with MATCH). The inputs are concatenated, as in
    CMake; MATCH also sets CMAKE_MATCH_<n>, MATCHALL joins the matches with `;` (a CMake list),
    REPLACE's `\\1` is the first group. CMake's regex syntax is a subset of Python's for these; a
    regex Python cannot compile sets nothing (the build reads the variable unset) rather than
    stopping the sweep."""
    try:
        return _string_regex(args)
    except re.error:
        return {}


def _string_regex(args: list[str]) -> dict[str, str]:
    mode, rest = (args[0], args[1:]) if args else ("", [])
    if mode in ("MATCH", "MATCHALL") and len(rest) >= 2:
        regex, out, text = rest[0], rest[1], "".join(rest[2:])
        if mode == "MATCHALL":
            return {out: ";".join(m.group(0) for m in re.finditer(regex, text))}
        m = re.search(regex, text)
        groups = {f"CMAKE_MATCH_{i}": (m.group(i) or "") for i in range(len(m.groups()) + 1)} if m else {}
        return {out: m.group(0) if m else "", **groups}
    if mode == "REPLACE" and len(rest) >= 3:
        regex, repl, out, text = rest[0], rest[1], rest[2], "".join(rest[3:])
        py_repl = re.sub(r"\\+(\d)", r"\\g<\1>", repl)  # `"\\1"` in the file, one or two backslashes here
        return {out: re.sub(regex, py_repl, text)}
    return {}


_TARGET_WORDS = ("WIN32", "MACOSX_BUNDLE", "EXCLUDE_FROM_ALL", "STATIC", "SHARED", "MODULE", "OBJECT")


def understand_build(folder: Path, exe: str, cmake_cmds: list[str]) -> Build | None:
    """Read add_executable(<exe> ...) and its target_compile_definitions from the sample's
    CMakeLists.txt files, with the sources of the libraries of the sample it links
    (add_library + target_link_libraries: a kernel built as a shared or static library);
    None when the build is not one executable from listed sources (ExternalProject, custom
    commands), which the sweep cannot stand in for."""
    read = [(lists.parent, _cmake_run(_cmake_calls(lists.read_text(errors="replace")), cmake_cmds,
                                      {"CMAKE_CURRENT_SOURCE_DIR": str(lists.parent)}))
            for lists in sorted(folder.rglob("CMakeLists.txt"))]
    libraries = {a[0]: (d, a[1:], calls) for d, calls in read for name, a in calls if name == "add_library" and a}
    for where, calls in read:
        exe_calls = [a for name, a in calls if name == "add_executable" and a and a[0] == exe]
        if not exe_calls:
            continue
        linked = _linked(read, exe, set(libraries))
        targets = [(where, exe_calls[0][1:])] + [libraries[lib][:2] for lib in linked]
        listed = [(d, s) for d, srcs in targets for s in srcs if s not in _TARGET_WORDS]
        if any(not s.endswith(SOURCE_SUFFIXES) for _, s in listed):
            return None  # a source the emulator does not build (a CUDA-like .cu, an object file)
        srcs = [d / s for d, s in listed if s.endswith(BUILT_SUFFIXES)]
        if srcs and all(s.is_file() for s in srcs):
            defines = _definitions(calls, exe)
            for lib in linked:
                defines.update(_definitions(libraries[lib][2], lib))
            return Build(srcs, defines)
    return None


def _linked(read: list[tuple[Path, list[tuple[str, list[str]]]]], target: str, libraries: set[str]) -> list[str]:
    """The sample's own libraries `target` links, directly or through another of them, in link order."""
    found: list[str] = []
    todo = [target]
    while todo:
        t = todo.pop(0)
        for _, calls in read:
            for name, a in calls:
                if name == "target_link_libraries" and a and a[0] == t:
                    for lib in a[1:]:
                        if lib in libraries and lib not in found and lib != target:
                            found.append(lib)
                            todo.append(lib)
    return found


def unbuildable(folder: Path, exe: str) -> str:
    """Why the sweep cannot build `exe` (understand_build gave None), in one line."""
    return (f"the sample's CMake build of {exe} is not one executable from listed sources "
            "(the sweep cannot stand in for it)")


def _definitions(calls: list[tuple[str, list[str]]], exe: str) -> dict[str, str]:
    """Preprocessor definitions the build gives `exe`: add_definitions(-DX=v),
    add_compile_definitions(X=v), and the target's compile definitions and -D options."""
    items: list[str] = []
    for name, a in calls:
        if name in ("add_definitions", "add_compile_definitions"):
            items += a
        elif name in ("target_compile_definitions", "target_compile_options") and a and a[0] == exe:
            items += a[1:]
    defines: dict[str, str] = {}
    for d in items:
        if d in ("PRIVATE", "PUBLIC", "INTERFACE") or "$<" in d:
            continue
        if d.startswith("-D"):
            d = d[2:]
        elif d.startswith("-"):
            continue  # another compiler option
        key, _, val = d.partition("=")
        defines[key] = val
    return defines


_RUN = re.compile(r"^(?:mssanitizer\s+)?\./(\S+)(.*)$")
SAGE = [sys.executable, "-c", "import sys; from sage_npu.cli import main; sys.exit(main())"]


def sage_run_command(build: Build, folder: Path, copy: Path, args: list[str], limit_s: float = COMMAND_TIMEOUT_S,
              estimate_only: bool = False) -> list[str]:
    """The `sage-npu run` command of a case's program, with the sweep's limit as its own (its
    default would stop a slow case long before the sweep's limit)."""
    srcs = [copy / s.relative_to(folder) for s in build.sources]
    cmd = [*SAGE, "run", "--json", "--timeout", f"{limit_s:g}", *(["--estimate-only"] if estimate_only else []),
           str(srcs[0])]
    for extra in srcs[1:]:
        cmd += ["--with", str(extra)]
    for k, v in build.defines.items():
        cmd += ["-D", f"{k}={v}" if v else k]
    return cmd + (["--", *args] if args else [])


def program_verdict(out: str, estimate_only: bool = False) -> ProgramVerdict:
    """The verdict on the output of `sage-npu run --json`: the program failed when the report is
    missing, it printed `test failed!` or `[ERROR]`, or the report's status is not ok. A kernel
    `assert` that fails in a program that then runs to its end and exits 0 is the program's own
    design (asc-devkit's log sample asserts on purpose and reads the error back from the runtime):
    that case passes, its assert-failed errors listed with the passing cases' errors.
    `estimate_only` (`run --estimate-only`): the program's own check of what it did not compute may
    fail; it passes when it ran to its end with no launch faulted."""
    try:
        rep = ProgramReport.model_validate_json(out)
    except ValueError:
        return ProgramVerdict(one_line("sage-npu run printed no report: " + out[-300:]))
    diags = [*rep.diagnostics, *(d for launch in rep.launches for d in launch.diagnostics)]
    text = lambda d: f"{Path(d.file).name}:{d.line}: {d.message} [{d.code}]"  # noqa: E731
    # a launch loop repeats a launch's findings in every launch: each distinct one is listed once
    v = ProgramVerdict(None, warnings=list(dict.fromkeys(text(d) for d in diags if d.severity == "warning")),
                       errors=list(dict.fromkeys(text(d) for d in diags if d.severity == "error")),
                       estimates=[LaunchEstimate(x.kernel, x.block_dim, x.timing.estimated_us, x.timing.bottleneck)
                                  for x in rep.launches if x.timing is not None])
    if estimate_only and rep.status == "failed":
        return v
    printed = [] if estimate_only else (rep.stdout + "\n" + rep.stderr).splitlines()
    bad = next((ln for ln in printed if FAILED_TEXT.search(ln)), None)
    if bad is not None:
        v.why = one_line(f"the program printed: {bad}")
        return v
    asserted = [d for d in diags if d.severity == "error"] and all(
        d.code == "assert-failed" for d in diags if d.severity == "error")
    if rep.status == "faulted" and asserted and rep.program_exit_code == 0:
        return v
    if rep.status != "ok" or rep.exit_code != 0:
        first = v.errors[0] if v.errors else (rep.stderr.strip().splitlines() or ["no diagnostic"])[-1]
        v.why = one_line(f"{rep.status}: {first}")
    return v


# In a case's run.sh every step runs as `(cd "$BUILD_DIR" && TESTCASE=1 soc_version=$SOC_VERSION bash -lc '...')`:
# the assignments before `bash` are the environment the plan's commands (`./demo $TESTCASE`) expect.
_RUNNER_ENV = re.compile(r"((?:\b[A-Za-z_]\w*=\S*\s+)+)bash\b")


def runner_env(root: Path, c: PlanCase) -> dict[str, str]:
    """The variables the case's runner script sets for its commands, those with a literal value
    (`TESTCASE=1`) or the runner's architecture (`ASC_ARCH=$ARCH`, which is this sweep's `ARCH`);
    `soc_version=$SOC_VERSION` names the runner's own chip and is left out."""
    path = root / c.runner if c.runner else None
    if path is None or not path.is_file():
        return {}
    env: dict[str, str] = {}
    for m in _RUNNER_ENV.finditer(path.read_text(errors="replace")):
        for word in m.group(1).split():
            key, _, val = word.partition("=")
            val = val.replace("${ARCH}", ARCH).replace("$ARCH", ARCH)
            if "$" not in val:
                env[key] = val.strip("'\"")
    return env


def cmake_commands(c: PlanCase, env: dict[str, str]) -> list[str]:
    """The case's cmake commands with the runner's variables filled in, as its shell does
    (`cmake -DCOPY_DST=$COPY_DST ..` with COPY_DST=UB)."""
    return [string.Template(x).safe_substitute(env) for x in c.commands if x.startswith("cmake")]


def run_case(root: Path, c: PlanCase, work: Path, limit_s: float = COMMAND_TIMEOUT_S,
             estimate_only: bool = False) -> Outcome:
    """Run one case's commands in a copy of its sample folder, in the environment its runner
    script sets, each within `limit_s` (a program's run, its build aside); the first failure ends it.
    `estimate_only`: the program runs with `sage-npu run --estimate-only` and the commands after its
    first run (the verification of outputs it did not compute) are left out."""
    t0 = time.monotonic()
    folder = root / "examples" / c.source_case
    copy = work / c.case.replace("/", "__")
    shutil.rmtree(copy, ignore_errors=True)  # an earlier run's copy, in a --keep folder used again
    shutil.copytree(folder, copy)
    bdir = copy / "build"
    bdir.mkdir(exist_ok=True)
    env = runner_env(root, c)
    cmake = cmake_commands(c, env)
    outcome = Outcome(c.case, passed=True)
    for cmd in c.commands:
        if cmd.startswith(("cmake", "make")):
            continue
        m = _RUN.match(cmd)
        if m:
            build = understand_build(folder, m.group(1), cmake)
            if build is None:
                return _failed(outcome, t0, unbuildable(folder, m.group(1)))
            given = string.Template(m.group(2)).safe_substitute(env)  # `./demo $TESTCASE`
            args = [] if cmd.startswith("mssanitizer") else shlex.split(given)
            verdict = _run_program(sage_run_command(build, folder, copy, args, limit_s, estimate_only), bdir, limit_s,
                                   estimate_only)
            outcome.warnings, outcome.estimates = verdict.warnings, verdict.estimates
            if verdict.why:
                return _failed(outcome, t0, verdict.why)
            outcome.errors_on_pass = verdict.errors
            if estimate_only:
                break
            continue
        why = run_script(cmd, bdir, env, limit_s)
        if why:
            return _failed(outcome, t0, why)
    outcome.seconds = time.monotonic() - t0
    return outcome


def _failed(o: Outcome, t0: float, why: str) -> Outcome:
    o.passed, o.reason, o.seconds = False, one_line(why), time.monotonic() - t0
    return o


def _run_program(cmd: list[str], cwd: Path, limit_s: float, estimate_only: bool = False) -> ProgramVerdict:
    wait_s = limit_s + BUILD_ALLOWANCE_S
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=wait_s)
    except subprocess.TimeoutExpired:
        return ProgramVerdict(f"sage-npu run took over {wait_s:g} s (its build and its {limit_s:g} s run)")
    return program_verdict(p.stdout, estimate_only)


_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def run_script(cmd: str, cwd: Path, env: dict[str, str] | None = None,
               limit_s: float = COMMAND_TIMEOUT_S) -> str | None:
    """A command of the sample's own (data generation, verification), with the runner's
    environment added; why it failed, or None."""
    try:
        p = subprocess.run(["bash", "-c", cmd], cwd=cwd, capture_output=True, text=True, timeout=limit_s,
                           env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        return f"`{cmd}` took over {limit_s:g} s"
    out = p.stdout + "\n" + p.stderr
    missing = _NO_MODULE.search(out)
    if p.returncode != 0 and missing:
        pkg = missing.group(1).split(".")[0]
        return (f"`{cmd}` needs the Python package {pkg}, which is not installed: the sample's own script imports "
                f"it (not the emulator); install {pkg} to run this case")
    bad = next((ln for ln in out.splitlines() if FAILED_TEXT.search(ln)), None)
    if p.returncode != 0 or bad:
        last = bad or next((ln for ln in reversed(out.splitlines()) if ln.strip()), "no output")
        return f"`{cmd}` failed: {last}"
    return None


def checkout(path: Path, rev: str, cache: Path) -> tuple[Path, str]:
    """(a folder with examples/ and the plan, the commit). A bare git repository (a mirror) is
    exported once per commit into `cache`; a checkout is used as it is."""
    git = shutil.which("git")
    commit = "unknown (not a git checkout)"
    if git:
        p = subprocess.run([git, "-C", str(path), "rev-parse", rev], capture_output=True, text=True)
        if p.returncode == 0:
            commit = p.stdout.strip()
    if (path / "examples").is_dir():
        return path, commit
    if not git or commit.startswith("unknown"):
        raise SystemExit(f"samples_sweep: {path} has no examples/ and is not a git repository")
    out = cache / commit[:12]
    done = out / ".exported"  # an export cut short is redone
    if not done.is_file():
        out.mkdir(parents=True, exist_ok=True)
        have = subprocess.run([git, "-C", str(path), "ls-tree", "--name-only", commit, "examples", "scripts/presmoke"],
                              capture_output=True, text=True, check=True).stdout.split()
        arch = subprocess.run([git, "-C", str(path), "archive", commit, *have], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(out)], input=arch, check=True)
        done.touch()
    return out, commit


def load_plan(root: Path, cases: Path | None = None) -> list[PlanCase]:
    """The commit's own test plan, or the case list `cases` (for a commit without a plan, such as
    benchmarks/asc_devkit_3d5cee08792f_cases.json built from the sample READMEs)."""
    path = cases or root / MANIFEST
    if not path.is_file():
        hint = "this commit has none; pass --cases FILE, a case list such as benchmarks/" \
               "asc_devkit_3d5cee08792f_cases.json (benchmarks/readme_cases.py builds one from the READMEs)"
        raise SystemExit(f"samples_sweep: no test plan at {path} ({hint})")
    return [PlanCase.model_validate(c) for c in json.loads(path.read_text())]


class Progress:
    """A line on stderr per finished case, so a run of an hour shows how far it got and what failed."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total, self.done = total, 0
        self.stream = stream if stream is not None else sys.stderr
        self._lock = threading.Lock()

    def __call__(self, o: Outcome) -> Outcome:
        with self._lock:  # cases finish on the pool's threads
            self.done += 1
            reason = f" -- {one_line(o.reason)}" if o.reason else ""
            print(f"[{self.done}/{self.total}] {'PASS' if o.passed else 'FAIL'} {o.case} ({o.seconds:.0f} s){reason}",
                  file=self.stream, flush=True)
        return o


def report(outcomes: list[Outcome], commit: str, selected: int, left: dict[str, int]) -> str:
    lines = [f"asc-devkit {commit}: {selected} cases selected "
             f"(left out: {', '.join(f'{n} {why}' for why, n in sorted(left.items())) or 'none'})"]
    for o in sorted(outcomes, key=lambda o: o.case):
        lines.append(f"{'PASS' if o.passed else 'FAIL'}  {o.case}" + (f"  -- {o.reason}" if o.reason else ""))
        if o.passed and o.estimates:
            lines.append("      estimated: " + ", ".join(f"{e.kernel} <<<{e.block_dim}>>> {e.estimated_us:.2f} us "
                                                          f"({e.bottleneck})" for e in o.estimates[:4])
                         + (f" and {len(o.estimates) - 4} more launches" if len(o.estimates) > 4 else ""))
        for w in o.warnings:
            lines.append(f"      warning: {one_line(w)}")
        for e in o.errors_on_pass:
            lines.append(f"      ERROR on a passing case: {one_line(e)}")
    passed = sum(o.passed for o in outcomes)
    noisy = sum(bool(o.errors_on_pass) for o in outcomes if o.passed)
    lines.append(f"summary: {passed}/{len(outcomes)} pass; {noisy} passing case(s) with an error diagnostic; "
                 f"{sum(o.seconds for o in outcomes):.0f} s of case time")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("asc_devkit", type=Path, help="an asc-devkit checkout or bare git repository")
    ap.add_argument("--rev", default="HEAD", help="the commit to sweep, for a git repository (default HEAD)")
    ap.add_argument("--cases", type=Path, help="a case list to run instead of the commit's test plan")
    ap.add_argument("--case", action="append", default=[], help="only cases whose name contains this (repeatable)")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--json", type=Path, help="also write the outcomes here")
    ap.add_argument("--timeout", type=float, default=COMMAND_TIMEOUT_S, metavar="S",
                    help=f"each command's limit, a program's run included (default {COMMAND_TIMEOUT_S} s)")
    ap.add_argument("--keep", type=Path, help="run in this folder and keep it (default: a temporary one)")
    ap.add_argument("--include-cube", action="store_const", const="include", dest="cube", default="exclude",
                    help="also run the cube and mixed cases the selection leaves out (their refusals)")
    ap.add_argument("--only-cube", action="store_const", const="only", dest="cube",
                    help="run only the cube and mixed cases")
    ap.add_argument("--estimate-only", action="store_true",
                    help="run each program with `sage-npu run --estimate-only` (the cube's arithmetic skipped) "
                    "and leave out the commands after it: each launch's estimate of a large sample, its outputs "
                    "not verified (a case passes when its program ran clean)")
    ap.add_argument("--advanced", action="store_true",
                    help=f"also select the advanced API's samples ({ADVANCED}), under the same rules")
    a = ap.parse_args(argv)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sage-npu" / "asc-devkit"
    root, commit = checkout(a.asc_devkit.resolve(), a.rev, cache)
    plan = load_plan(root, a.cases)
    print(f"asc-devkit {commit[:12]}: {rule_count(root, plan)}")
    chosen, left = select(root, plan, a.cube, a.advanced)
    if a.advanced:
        print(f"--advanced: {sum(ADVANCED in c.case for c in chosen)} of the {len(chosen)} selected cases are "
              f"{ADVANCED} samples")
    if a.case:
        chosen = [c for c in chosen if any(s in c.case for s in a.case)]
    work = a.keep or Path(tempfile.mkdtemp(prefix="sage-sweep-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    try:
        with ThreadPoolExecutor(max_workers=a.jobs) as pool:
            progress = Progress(len(chosen))
            outcomes = list(pool.map(lambda c: progress(run_case(root, c, work, a.timeout, a.estimate_only)),
                                     chosen))
    finally:
        if a.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(report(outcomes, commit, len(chosen), left))
    if a.estimate_only:
        print("estimate only (--estimate-only): the programs' outputs were not computed or verified")
    print(f"wall time {time.monotonic() - t0:.0f} s with {a.jobs} job(s)")
    if a.json:
        a.json.write_text(json.dumps({"commit": commit, "outcomes": [asdict(o) for o in outcomes]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
