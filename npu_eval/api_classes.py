"""What an Ascend C name the emulator lacks is, read from where asc-devkit declares or documents it,
so a kernel the emulator cannot run gets one line naming what it uses and what to do.

The table (`api_classes_table.py`) is generated from an asc-devkit checkout or bare git mirror:

    python -m sage_npu.npu_eval.api_classes PATH/TO/asc-devkit > npu_eval/api_classes_table.py

It records every name asc-devkit has that the emulator's headers do not (`api_support.emulated_names`),
with its `Kind` and the file it was read from:

- from `include/`: the identifiers in each header's code; a header's folder or file name gives its
  kind (`kernel_operator_mm_intf.h`, `adv_api/matmul/` are cube; `basic_api/reg_compute/`,
  `simt_api/`, `tensor_api/` are Ascend 950; `adv_api/hccl/` is HCCL). A name found in headers of
  several kinds is `missing` (a shared helper), unless every one of them is special.
- from `docs/zh/api/`: each API page's title; its folder (矩阵计算, Cube分组管理, 卷积计算: cube;
  HCCL通信类; AI-CPU-API) or else its supported-products lines (no Atlas A2 line that says 支持
  but an Ascend 950 one: `ascend950`) give the kind. A page's kind wins over a header's.

Also recorded: every header path under `include/`, so a missing `#include "lib/matmul_intf.h"`
is recognised by its file name (`HEADERS`).
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# cube: the matrix unit (Mmad, LoadData, Fixpipe, Matmul); ascend950: an API only Ascend 950 has;
# not910b: a chip other than 910B/310P; hccl: collective communication; aicpu: the AI CPU;
# missing: an API 910B has that the emulator does not provide yet.
Kind = Literal["cube", "ascend950", "not910b", "hccl", "aicpu", "missing"]

_CUBE_PATH = re.compile(r"cube|(?:^|[/_])mm(?:[_.]|$)|gemm|fixpipe|conv(?:2d|3d|_|/)|matmul|mmad|"
                        r"矩阵计算|Cube分组管理|卷积计算")
_950_PATH = re.compile(r"reg_compute|simt_api|tensor_api|Reg矢量计算|TensorAPI|SIMT-API|C-API/reg/")
_HCCL_PATH = re.compile(r"hccl|hcomm|HCCL")
_AICPU_PATH = re.compile(r"aicpu|AI-CPU")
# When sources disagree, the first kind here wins: a cube API is cube wherever else it appears,
# and a name 910B documents as supported is an API the emulator lacks, not a foreign one.
_PRIORITY: tuple[Kind, ...] = ("cube", "missing", "hccl", "aicpu", "ascend950", "not910b")
_DOC_TAG_910B, _DOC_TAG_950 = "910b", "950"
_PRODUCT = re.compile(r'<!--\s*npu="(\w+)"[^>]*-->\s*\n\s*-\s*[^\n]*?[：:]\s*(不支持|支持)')
_TITLE = re.compile(r"^#\s*([A-Za-z_]\w*)")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_IDENT = re.compile(r"\b([A-Z][A-Za-z0-9_]{2,}|asc_\w+)\b")


@dataclass(frozen=True)
class NotEmulated:
    """A name asc-devkit has and the emulator does not: what it is, and the file that says so."""

    name: str
    kind: Kind
    where: str  # path in asc-devkit


_PATH_KINDS: tuple[tuple[re.Pattern[str], Kind], ...] = (
    (_CUBE_PATH, "cube"), (_HCCL_PATH, "hccl"), (_AICPU_PATH, "aicpu"), (_950_PATH, "ascend950"))


def path_kind(path: str) -> Kind:
    """The kind a header or doc page's path implies."""
    for pattern, kind in _PATH_KINDS:
        if pattern.search(path):
            return kind
    return "missing"


def doc_kind(path: str, text: str) -> Kind:
    """A doc page's kind: its folder, else what its supported-products lines say of 910B and 950."""
    kind = path_kind(path)
    if kind != "missing":
        return kind
    verdicts: dict[str, bool] = {}
    for tag, verdict in _PRODUCT.findall(text):
        verdicts[tag] = verdicts.get(tag, False) or verdict == "支持"
    if not verdicts or verdicts.get(_DOC_TAG_910B):
        return "missing"
    return "ascend950" if verdicts.get(_DOC_TAG_950) else "not910b"


def _files(source: Path, root: str) -> Iterator[tuple[str, str]]:
    """(path in the repository, text) of every file under `root`, from a checkout or a bare mirror."""
    if (source / root).is_dir():
        for p in sorted((source / root).rglob("*")):
            if p.is_file():
                yield p.relative_to(source).as_posix(), p.read_text(errors="replace")
        return
    git = ["git", "-C", str(source), "-c", "core.quotepath=off"]
    names = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", root], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    for rel in sorted(names):
        if rel.endswith((".h", ".hpp", ".md")):
            yield rel, subprocess.run([*git, "show", f"HEAD:{rel}"], capture_output=True, text=True).stdout


def _pick(kinds: dict[Kind, str]) -> tuple[Kind, str]:
    for kind in _PRIORITY:
        if kind in kinds:
            return kind, kinds[kind]
    raise ValueError(f"no kind among {sorted(kinds)}")


def classify(headers: list[tuple[str, str]], pages: list[tuple[str, str]],
             known: set[str]) -> dict[str, tuple[Kind, str]]:
    """name -> (kind, where) for every name of `headers` and `pages` not in `known`."""
    from_headers: dict[str, dict[Kind, str]] = {}
    for rel, text in headers:
        kind = path_kind(rel)
        for name in set(_IDENT.findall(_COMMENT.sub(" ", text))):
            if name not in known:
                from_headers.setdefault(name, {}).setdefault(kind, rel)
    from_docs: dict[str, dict[Kind, str]] = {}
    for rel, text in pages:
        first = text.lstrip().splitlines()[0].replace("\\_", "_") if text.strip() else ""
        m = _TITLE.match(first)
        if m and m.group(1) not in known:
            from_docs.setdefault(m.group(1), {}).setdefault(doc_kind(rel, text), rel)
    out: dict[str, tuple[Kind, str]] = {}
    for name, kinds in from_headers.items():
        # A name several kinds of header share is a common helper, unless all of them are special.
        special: dict[Kind, str] = {k: w for k, w in kinds.items() if k != "missing"}
        out[name] = _pick(special) if special and len(special) == len(kinds) else ("missing", kinds["missing"])
    for name, kinds in from_docs.items():
        out[name] = _pick(kinds)
    return out


def generate(source: Path) -> str:
    """The text of api_classes_table.py for the asc-devkit at `source`."""
    from sage_npu.npu_eval.api_support import emulated_names

    headers = [(r, t) for r, t in _files(source, "include") if r.endswith((".h", ".hpp"))]
    pages = [(r, t) for r, t in _files(source, "docs/zh/api") if r.endswith(".md")]
    table = classify(headers, pages, emulated_names())
    head = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    lines = ["# ruff: noqa: E501",
             '"""Generated by `python -m sage_npu.npu_eval.api_classes PATH/TO/asc-devkit`: do not edit by hand.',
             "",
             "NAMES: name -> (kind, the asc-devkit file it was read from), for names the emulator lacks.",
             "HEADERS: every header under asc-devkit's include/.",
             f"Read from asc-devkit {head.strip() or '(not a git checkout)'}.",
             '"""', "",
             "NAMES: dict[str, tuple[str, str]] = {"]
    lines += [f"    {name!r}: {table[name]!r}," for name in sorted(table)]
    lines += ["}", "", "HEADERS: tuple[str, ...] = ("]
    lines += [f"    {rel!r}," for rel, _ in headers]
    lines.append(")")
    return "\n".join(lines) + "\n"


@functools.cache
def _names() -> dict[str, tuple[str, str]]:
    from sage_npu.npu_eval.api_classes_table import NAMES

    return NAMES


@functools.cache
def _headers_by_file() -> dict[str, str]:
    from sage_npu.npu_eval.api_classes_table import HEADERS

    return {h.rsplit("/", 1)[-1]: h for h in HEADERS}


def lookup(name: str) -> NotEmulated | None:
    """What `name` is in asc-devkit, when the emulator lacks it (None: asc-devkit has no such name)."""
    hit = _names().get(name)
    return NotEmulated(name, hit[0], hit[1]) if hit else None  # type: ignore[arg-type]


def header(include: str) -> NotEmulated | None:
    """The asc-devkit header a missing `#include` names (matched by file name: CANN installs them
    under other folders, `lib/matmul_intf.h` is include/adv_api/matmul/matmul_intf.h)."""
    rel = _headers_by_file().get(include.rsplit("/", 1)[-1])
    return NotEmulated(include, path_kind(rel), rel) if rel else None


def cube_names() -> frozenset[str]:
    """Every cube name the emulator lacks (a source using one is a cube kernel)."""
    return frozenset(n for n, (kind, _) in _names().items() if kind == "cube")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m sage_npu.npu_eval.api_classes PATH/TO/asc-devkit (a checkout or bare mirror)")
    sys.stdout.write(generate(Path(sys.argv[1])))
