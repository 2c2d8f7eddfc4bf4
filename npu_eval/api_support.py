"""Which chips support each Ascend C API, from the "产品支持情况" (supported products) section of
the API's page in asc-devkit's documentation.

The table (`api_support_table.py`) is generated from an asc-devkit checkout or bare git mirror
and records, per API the emulator implements, the doc pages it was read from and the chip
families (`ChipProfile.family`) each page says are supported or not:

    python -m sage_npu.npu_eval.api_support PATH/TO/asc-devkit > npu_eval/api_support_table.py

A family counts as unsupported only when every page of the API that lists it says 不支持 (so an
API with a GM<->UB page and a cube page is supported where either is); a family a page does not
list is unknown, never an error. The static rule `api-unsupported` (analysis/rules_api.py) reads
the table through `unsupported()`.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# The doc's product tags (`<!-- npu="910b" -->`) of the families npu_eval/chips.py profiles.
DOC_TAGS = {"910b": 910, "310p": 310}
FAMILY_NAMES = {910: "Atlas A2 training/inference series, 910B", 310: "Atlas inference series, 310P"}
DOC_ROOT = "docs/zh/api/SIMD-API"
# Ascend 950's register-level APIs (C++ and the C API's reg/ family) and Tensor API: not emulated
_SKIP = ("Reg矢量计算", "C-API/reg/", "data_structure_TensorAPI")
# "仅支持包含...的接口" (supports only the forms with ...) is a yes: Fixpipe's A2 line reads so.
_PRODUCT = re.compile(r'<!--\s*npu="(\w+)"[^>]*-->\s*\n\s*-\s*[^\n]*?[：:]\s*(不支持|仅支持|支持)')
_TITLE = re.compile(r"^#\s*([A-Za-z_]\w*)")


@dataclass(frozen=True)
class ApiSupport:
    """One API's support: the doc pages read (paths in asc-devkit) and the families they settle."""

    api: str
    pages: tuple[str, ...]
    supported: frozenset[int]
    unsupported: frozenset[int]


@functools.cache
def table() -> dict[str, ApiSupport]:
    """Every recorded API (loaded once, on first use)."""
    from sage_npu.npu_eval.api_support_table import TABLE

    return {api: ApiSupport(api, pages, frozenset(yes), frozenset(no)) for api, (pages, yes, no) in TABLE.items()}


def unsupported(api: str, family: int) -> ApiSupport | None:
    """The API's record when its doc pages say the chip family lacks it, else None."""
    s = table().get(api)
    return s if s is not None and family in s.unsupported else None


def page_support(text: str) -> tuple[str | None, dict[int, bool]]:
    """A doc page's API name (its title up to the first non-identifier character) and, per family,
    whether any of its product lines says 支持 (supported)."""
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    m = _TITLE.match(first)
    found: dict[int, bool] = {}
    for tag, verdict in _PRODUCT.findall(text):
        family = DOC_TAGS.get(tag)
        if family is not None:
            found[family] = found.get(family, False) or verdict != "不支持"
    return (m.group(1) if m else None), found


def _pages(source: Path) -> Iterator[tuple[str, str]]:
    """(path in the repository, text) of every API page under DOC_ROOT, from a checkout or a bare mirror."""
    if (source / "docs").is_dir():
        for p in sorted((source / DOC_ROOT).rglob("*.md")):
            rel = p.relative_to(source).as_posix()
            if not any(s in rel for s in _SKIP):
                yield rel, p.read_text(errors="replace")
        return
    git = ["git", "-C", str(source), "-c", "core.quotepath=off"]
    names = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", DOC_ROOT], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    for rel in sorted(n for n in names if n.endswith(".md") and not any(s in n for s in _SKIP)):
        yield rel, subprocess.run([*git, "show", f"HEAD:{rel}"], capture_output=True, text=True, check=True).stdout


def emulated_names() -> set[str]:
    """Every capitalised identifier and every C API name (`asc_*`) in the emulator's headers (APIs
    are often declared through macros, so a declaration's shape cannot be relied on): the APIs a
    kernel can call here."""
    from sage_npu.npu_eval.build import SIM_INCLUDE

    names: set[str] = set()
    for h in SIM_INCLUDE.rglob("*.h"):
        names.update(re.findall(r"\b([A-Z]\w+|asc_\w+)\b", h.read_text(errors="replace")))
    return names


def generate(source: Path) -> str:
    """The text of api_support_table.py for the asc-devkit at `source`."""
    known = emulated_names()
    pages: dict[str, list[str]] = {}
    verdicts: dict[str, dict[int, bool]] = {}
    for rel, text in _pages(source):
        api, found = page_support(text)
        if api is None or api not in known or not found:
            continue
        pages.setdefault(api, []).append(rel)
        mine = verdicts.setdefault(api, {})
        for family, ok in found.items():
            mine[family] = mine.get(family, False) or ok
    head = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    lines = ["# ruff: noqa: E501",
             '"""Generated by `python -m sage_npu.npu_eval.api_support PATH/TO/asc-devkit`: do not edit by hand.',
             "",
             "API -> (asc-devkit doc pages, chip families supported, chip families not supported).",
             f"Read from asc-devkit {head.strip() or '(not a git checkout)'}.",
             '"""', "",
             "TABLE: dict[str, tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]] = {"]
    for api in sorted(pages):
        yes = tuple(sorted(f for f, ok in verdicts[api].items() if ok))
        no = tuple(sorted(f for f, ok in verdicts[api].items() if not ok))
        lines.append(f"    {api!r}: ({tuple(pages[api])!r}, {yes!r}, {no!r}),")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m sage_npu.npu_eval.api_support PATH/TO/asc-devkit (a checkout or bare mirror)")
    sys.stdout.write(generate(Path(sys.argv[1])))
