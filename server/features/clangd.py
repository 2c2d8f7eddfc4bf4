"""Living beside clangd: a `.clangd` in each workspace folder that holds Ascend C sources,
pointing clangd at the emulator's headers with the flags evaluation compiles with, so clangd
resolves kernel_operator.h and stops flagging Ascend C. Written once, only where no `.clangd`
exists: a user's own configuration is never touched."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from sage_npu.npu_eval.build import SIM_INCLUDE, compile_flags
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.server.features.base import Feature

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer

log = logging.getLogger("sage_npu.server.clangd")

_ASCENDC_MARK = re.compile(rb"kernel_operator\.h|__aicore__")
_SOURCES = (".cpp", ".h", ".hpp", ".cc", ".cce")
_SKIP_DIRS = {"node_modules", "build", "dist", "out", "__pycache__", "venv"}
_SCAN_LIMIT = 2000  # files looked at per folder: a huge workspace is not worth a slow start


def clangd_flags(chip: str) -> list[str]:
    """The language flags of an evaluation build (standard, include path, chip defines)."""
    flags = compile_flags(chip_profile(chip), "-O0", {})
    out: list[str] = []
    for i, f in enumerate(flags):
        if f.startswith(("-std=", "-D")):
            out.append(f)
        elif f == "-I" and i + 1 < len(flags):
            out.append(f"-I{flags[i + 1]}")
    if not any(f.startswith("-I") for f in out):
        out.append(f"-I{SIM_INCLUDE}")
    return out


def clangd_config(chip: str) -> str:
    # JSON strings are valid YAML scalars, so every flag survives quoting (`-DSAGE_CHIP_NAME="910B2"`).
    flags = "\n".join(f"    - {json.dumps(f)}" for f in clangd_flags(chip))
    return (
        "# Written by sage-npu so clangd understands Ascend C: kernel_operator.h resolves to the\n"
        "# sage-npu emulator headers, with the flags `sage-npu eval` compiles with. sage-npu writes\n"
        "# it only where no .clangd exists and never overwrites it: edit it freely.\n"
        f"CompileFlags:\n  Add:\n{flags}\n"
        "---\n"
        "# .asc is Ascend C: parse it as C++.\n"
        "If:\n  PathMatch: .*\\.asc\n"
        "CompileFlags:\n  Add: [-xc++]\n"
    )


def holds_ascendc(root: Path, limit: int = _SCAN_LIMIT) -> bool:
    """Whether a folder (hidden and build directories skipped) has an Ascend C source."""
    seen = 0
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS]
        for name in files:
            seen += 1
            if seen > limit:
                return False
            if name.endswith(".asc"):
                return True
            if name.endswith(_SOURCES):
                try:
                    with open(os.path.join(here, name), "rb") as fh:
                        if _ASCENDC_MARK.search(fh.read(64 * 1024)):
                            return True
                except OSError:
                    continue
    return False


def write_clangd(root: Path, chip: str) -> bool:
    """Create root/.clangd unless one exists. True when written. The file appears whole: it is
    written aside and hard-linked into place, which fails rather than replace one, so clangd (or
    anything reading it the moment it appears) never sees it empty or half written. Where the
    file system has no hard links it is created in place ("x": never replace one)."""
    target, text = root / ".clangd", clangd_config(chip)
    aside = ""
    try:
        fd, aside = tempfile.mkstemp(prefix=".clangd.", dir=root)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            os.link(aside, target)
        except OSError as e:
            if isinstance(e, FileExistsError):
                return False
            with open(target, "x", encoding="utf-8") as fh:  # no hard links here
                fh.write(text)
        return True
    except FileExistsError:
        return False
    except OSError as e:
        log.warning("could not write %s: %s", target, e)
        return False
    finally:
        if aside:
            with contextlib.suppress(OSError):
                os.unlink(aside)


class ClangdConfig(Feature):
    def __init__(self, server: SageServer) -> None:
        super().__init__(server)
        self._handled: set[Path] = set()  # folders configured (or found configured) this session

    def _folders(self) -> list[Path]:
        ws = self.server.workspace
        uris = [f.uri for f in ws.folders.values()] or ([ws.root_uri] if ws.root_uri else [])
        return [Path(p) for p in (to_fs_path(u) for u in uris) if p]

    def _configure(self, folders: list[Path], chip: str, scan: bool) -> None:
        for root in folders:
            if root in self._handled or (scan and not holds_ascendc(root)):
                continue
            self._handled.add(root)
            if write_clangd(root, chip):
                log.info("wrote %s for clangd", root / ".clangd")

    async def initialized(self, params: types.InitializedParams) -> None:
        # Scanning a workspace reads files: keep it off the event loop.
        await asyncio.to_thread(self._configure, self._folders(), self.server.settings.eval.chip, True)

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        # A folder the first scan passed over (no kernel in it yet) is configured with its first kernel.
        path = to_fs_path(params.text_document.uri)
        if not path or not self.server.is_ascendc(params.text_document.uri):
            return
        folders = [root for root in self._folders() if Path(path).is_relative_to(root)]
        self._configure(folders, self.server.settings.eval.chip, False)
