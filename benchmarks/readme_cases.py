"""Build a case list for benchmarks/samples_sweep.py from asc-devkit's sample READMEs, for a commit
that has no test plan (`scripts/presmoke/reports/case_runner_manifest.json`), such as the first one:

    python benchmarks/readme_cases.py /path/to/asc-devkit --rev 3d5cee08792f \\
        -o benchmarks/asc_devkit_3d5cee08792f_cases.json

Each entry has the shape of a plan entry (case, source_case, supported_archs, commands, ...) plus
`readme`, the README it came from, and `readme_products`, the processors that README lists. The
commands are the README's "样例执行" (run the sample) block: environment set-up (cd, export, source,
mkdir, rm, set -e, subshell brackets) is dropped, `a; b` becomes two commands, and `| tee FILE`
after the binary is dropped. A README that runs several binaries (one with its own gen/verify
scripts each) gives one case per binary, named `<sample>/<binary>`. Only names and commands are
written: asc-devkit's licence keeps its files out of this repository.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from samples_sweep import PlanCase  # a sibling script: benchmarks/ is on the path

RUN_HEADING = "## 编译运行"  # "build and run"
# A processor a README lists -> the architecture the sweep selects on (Atlas A2/A3, 910B/910C: dav-2201).
PRODUCT_ARCH = {"910B": "dav-2201", "910C": "dav-2201", "Atlas A2": "dav-2201", "Atlas A3": "dav-2201",
                "310P": "dav-2002"}
SETUP = re.compile(r"^(cd|export|source|mkdir|rm|set|SOC_VERSION=)\b|^[()]$")
COMMAND = re.compile(r"^(cmake|make|python3?|bash|cp|gdb|mssanitizer|msprof)\b|^\./")
RUN_STEP = "样例执行"
BINARY = re.compile(r"^(?:\S+\s+)*?\./(\S+)")


class ReadmeCase(PlanCase):
    """One case of the list: a plan entry, where it came from, and the processors its README lists."""

    source: str = "readme"
    readme: str
    readme_products: list[str]


def products(text: str) -> list[str]:
    """The processors under the README's "支持的AI处理器" (supported AI processors) heading."""
    m = re.search(r"^##\s*支持的AI处理器\s*\n(.*?)(?=^##)", text, re.M | re.S)
    return re.findall(r"^\s*-\s*(.+?)\s*$", m.group(1), re.M) if m else []


def run_block(text: str) -> list[str] | None:
    """The commands of the bash blocks of the "样例执行" (run the sample) step, up to the next
    step (such as the gdb variant) or heading; None when the README runs nothing."""
    _, _, tail = text.partition(RUN_HEADING)
    start = tail.find(RUN_STEP)
    if start >= 0:
        tail = tail[start:]
        stop = re.search(r"^\s*- |^## ", tail[len(RUN_STEP):], re.M)
        tail = tail[:len(RUN_STEP) + stop.start()] if stop else tail
    cmds = [c for block in re.findall(r"```bash\s*\n(.*?)```", tail, re.S) for c in block_commands(block)]
    return cmds if any(BINARY.match(c) or c.startswith("bash ") for c in cmds) else None


def block_commands(block: str) -> list[str]:
    """A bash block's commands; lines of expected output (`test pass`) are not commands."""
    cmds = []
    for line in block.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        for part in re.split(r"\s*(?:;|&&)\s*", line):
            part = re.sub(r"\s*\|\s*tee\s+\S+$", "", part.strip())
            if part and not SETUP.match(part) and COMMAND.match(part):
                cmds.append(" ".join(part.split()))
    return cmds


def split_by_binary(cmds: list[str]) -> list[tuple[str, list[str]]]:
    """[(binary, commands)]: the build commands, then per binary the commands from the end of the
    previous binary's verification up to its own verification."""
    build = [c for c in cmds if c.startswith(("cmake", "make", "cp "))]
    steps = [c for c in cmds if c not in build]
    groups: list[tuple[str, list[str]]] = []
    cur: list[str] = []
    binary = None
    for c in steps:
        m = BINARY.match(c)
        if binary and not m and "verify" not in c:  # a new generation step starts the next binary
            groups.append((binary, cur))
            cur, binary = [], None
        cur.append(c)
        if m:
            binary = m.group(1)
    groups.append((binary or "", cur))
    return [(b, build + g) for b, g in groups]


def cases_of(readme: str, text: str) -> list[ReadmeCase]:
    cmds = run_block(text)
    if cmds is None:
        return []
    sample = str(Path(readme).parent.relative_to("examples"))
    prods = products(text)
    archs = sorted({a for p in prods for k, a in PRODUCT_ARCH.items() if k in p})
    groups = split_by_binary(cmds)
    many = sum(1 for b, _ in groups if b) > 1
    return [ReadmeCase(case=f"{sample}/{b}" if many else sample, source_case=sample, supported_archs=archs,
                       readme=readme, readme_products=prods, commands=g) for b, g in groups]


def readmes(repo: Path, rev: str | None) -> list[tuple[str, str]]:
    """(path, text) of every examples/**/README.md, from a checkout or from `rev` of a git repository."""
    if rev is None:
        return [(str(p.relative_to(repo)), p.read_text()) for p in sorted((repo / "examples").rglob("README.md"))]
    git = ["git", "-C", str(repo)]
    names = subprocess.run([*git, "ls-tree", "-r", "--name-only", rev, "examples"], capture_output=True,
                           text=True, check=True).stdout.split()
    return [(n, subprocess.run([*git, "show", f"{rev}:{n}"], capture_output=True, text=True, check=True).stdout)
            for n in names if n.endswith("/README.md")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("asc_devkit", type=Path, help="an asc-devkit checkout or git repository")
    ap.add_argument("--rev", help="read the READMEs of this commit (a git repository); default: the files")
    ap.add_argument("-o", "--output", type=Path, help="write the list here (default: print it)")
    a = ap.parse_args(argv)
    cases = [c for path, text in readmes(a.asc_devkit, a.rev) for c in cases_of(path, text)]
    out = json.dumps([c.model_dump() for c in cases], indent=1, ensure_ascii=False) + "\n"
    if a.output:
        a.output.write_text(out)
    else:
        sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
