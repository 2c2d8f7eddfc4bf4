"""One line for anything the emulator cannot run, naming what it is and what to do: a cube API,
an Ascend 950-only API, HCCL, an AI CPU API, a CANN-only library, a host library, an API not
emulated yet; and, for a name nothing knows, the nearest emulated names ("did you mean").

What a name is comes from asc-devkit's include/ tree and docs (api_classes.py); what the
emulator provides comes from its headers (api_support.emulated_names). Every line is at most
`MAX_CHARS` characters.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval import api_classes

MAX_CHARS = 200
# The CANN libraries a program may include that asc-devkit does not ship (so no table can say
# what they are): header path prefix -> what it is.
CANN_LIBRARIES = {
    "aclnn": "aclnn, CANN's operator library",
    "acl/acl_op": "CANN's single-operator API",
    "graph/": "CANN's graph engine",
    "ge/": "CANN's graph engine",
    "exe_graph/": "CANN's graph engine",
    "hccl/": "HCCL, CANN's collective communication library",
    "register/op_": "CANN's operator registration (an op project's host side)",
    "tiling/": "CANN's host tiling library",
    "platform/": "CANN's platform library",
    "opdev/": "CANN's operator development kit",
    "runtime/": "CANN's runtime internals",
    "torch": "PyTorch",
    "torch_npu": "torch_npu",
}
# Cube buffer positions the emulator does not place (TPosition members: the enum is shared, so no
# header path tells them apart). A1/B1/C1 (L1), A2 (L0A), B2 (L0B), CO1 (L0C) and C2 (BiasTable)
# are emulated; CO2 is global memory on the 910B, not a buffer.
CUBE_POSITIONS = ("CO2",)
_CUBE_POSITION = re.compile(r"\b(?:TPosition|QuePosition)::(" + "|".join(CUBE_POSITIONS) + r")\b")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_WORD = re.compile(r"(?<![.>\w])(?:AscendC::)?([A-Za-z_]\w*)\b")


@dataclass(frozen=True)
class CubeUse:
    """Where a source first uses the cube unit."""

    file: str
    line: int
    name: str


def one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 3] + "..."


def _short(where: str) -> str:
    return Path(where).name


def for_name(name: str, qualified: bool) -> str | None:
    """The refusal for an undeclared name asc-devkit has; `qualified`: written as AscendC::name.
    None when asc-devkit has no such name."""
    hit = api_classes.lookup(name)
    if hit is None or name in _emulated_set():
        return None  # a name emulated since the table was generated is the user's mistake
    src = _short(hit.where)
    text = {
        "cube": f"{name} is a cube-unit (matrix) API (asc-devkit {src}) sage-npu does not emulate yet (it has the "
                "vector unit and the cube's basic LoadData/Mmad/Fixpipe); run this kernel on a device",
        "ascend950": f"{name} is an Ascend 950-only API (asc-devkit {src} lists no 910B support): sage-npu "
                     "emulates 910B and 310P; write it with the 910B basic API",
        "not910b": f"{name} is not available on 910B or 310P (asc-devkit {src}), the chips sage-npu emulates",
        "hccl": f"{name} is HCCL, CANN's collective communication library (asc-devkit {src}): sage-npu runs "
                "one device without CANN; run this program with CANN",
        "aicpu": f"{name} is an AI CPU API (asc-devkit {src}) sage-npu does not emulate yet (AI CPU kernels run, "
                 "with aicpu_api.h's printf, assert and DataStoreBarrier); run this program with CANN",
        "missing": f"{'AscendC::' if qualified else ''}{name} (asc-devkit {src}) is not emulated by sage-npu yet: "
                   "run this kernel with CANN",
    }[hit.kind]
    return one_line(text)


def for_header(header: str) -> str | None:
    """The refusal for a missing #include: a CANN library or an asc-devkit header the emulator lacks."""
    for prefix, what in CANN_LIBRARIES.items():
        if header.startswith(prefix):
            return one_line(f"{header} is part of {what}, which sage-npu does not provide (it runs kernels and "
                            "ACL host code without CANN); run this program with CANN")
    hit = api_classes.header(header)
    if hit is None:
        return None
    what = {"cube": "a cube-unit (matrix) API sage-npu does not emulate yet",
            "ascend950": "an Ascend 950-only API: sage-npu emulates 910B and 310P",
            "not910b": "not available on 910B or 310P",
            "hccl": "HCCL, CANN's collective communication library",
            "aicpu": "an AI CPU header sage-npu does not provide (AI CPU kernels include aicpu_api.h)",
            "missing": "not emulated by sage-npu yet"}[hit.kind]
    return one_line(f"{header} (asc-devkit {hit.where}) is {what}; this code cannot run under sage-npu")


@functools.cache
def _emulated_set() -> frozenset[str]:
    from sage_npu.npu_eval.api_support import emulated_names

    return frozenset(emulated_names())


@functools.cache
def _emulated() -> tuple[str, ...]:
    return tuple(sorted(n for n in _emulated_set() if not n.startswith(("Sage", "SAGE"))))


def did_you_mean(name: str) -> list[str]:
    """The emulated names nearest `name` (a spelling mistake: DataCpy -> DataCopy), best first."""
    return difflib.get_close_matches(name, _emulated(), n=3, cutoff=0.8)


def unknown_name(name: str, qualified: bool) -> str | None:
    """The line for an AscendC name neither the emulator nor asc-devkit has: the nearest emulated
    names, or None when nothing is near (for an unqualified name: then it is the user's own)."""
    near = did_you_mean(name)
    shown = f"AscendC::{name}" if qualified else name
    if near:
        return one_line(f"{shown} is not declared; did you mean {' or '.join(near)}?")
    if qualified:
        return one_line(f"AscendC::{name} is not an Ascend C API (a spelling mistake?) nor one sage-npu emulates")
    return None


# A name the user's source declares itself: a constant or variable (`constexpr uint32_t C0_SIZE = 32;`)
# or a function defined with a return type (`uint32_t CeilAlign(uint32_t a, uint32_t b) {`).
_OWN_DECL = re.compile(r"\b(?:constexpr|const|static|inline|auto|u?int\d*_t|int|size_t|float|bool)\s+"
                       r"(?:[\w:<>]+\s+)*(\w+)\s*(?:=|\[|\{|\([^;{}]*\)\s*(?:const\s*)?\{)")
# A name in a compiler message: GCC quotes identifiers as ‘name’ (or 'name').
_QUOTED = re.compile(r"[‘'](?:AscendC::)?(\w+)[’']")


def cube_use_in_errors(errors: list[tuple[str, int, str]]) -> CubeUse | None:
    """The first compiler error (file, line, message) that names a cube API the emulator lacks: the
    name the compiler could not find is the one to refuse, not an earlier word of the source."""
    cube = api_classes.cube_names() - _emulated_set()
    for file, line, message in errors:
        for name in _QUOTED.findall(message):
            if name in cube:
                return CubeUse(file, line, name)
    return None


def cube_use(files: dict[str, str]) -> CubeUse | None:
    """The first use of the cube unit in the sources (path -> text): a cube API asc-devkit documents
    or declares, written as a call, type or scope (not as a member `x.Name`, which may be anyone's),
    or a cube-only buffer position."""
    cube = api_classes.cube_names() - _emulated_set()
    for path in sorted(files):
        text = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), files[path])
        own = set(re.findall(r"\b(?:class|struct|enum|using|define|void)\s+(\w+)", text)) | set(_OWN_DECL.findall(text))
        hits = [(m.start(), m.group(1)) for m in _WORD.finditer(text) if m.group(1) in cube and m.group(1) not in own]
        hits += [(m.start(), f"TPosition::{m.group(1)}") for m in _CUBE_POSITION.finditer(text)]
        if hits:
            at, name = min(hits)
            return CubeUse(path, text.count("\n", 0, at) + 1, name)
    return None


def for_cube_use(use: CubeUse) -> str:
    return one_line(f"this kernel uses a cube-unit API sage-npu does not emulate yet ({use.name}; the basic "
                    "LoadData, Mmad and Fixpipe are emulated): run it on a device")
