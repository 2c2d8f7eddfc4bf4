"""What the `ascend` backend needs on this machine, and whether it is there: CANN (its home
from ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME / ASCEND_CANN_PACKAGE_PATH or the default installs),
its tools (bisheng, msprof, mssanitizer), the driver's `npu-smi` and an NPU it lists (the SoC
name gives `--npu-arch` and the chip profile), the device nodes, and torch_npu (only the
torch_npu baseline needs it; it is never imported here).

`detect()` looks without side effects beyond running `npu-smi info` once, and only when CANN
and bisheng are found (so a machine without CANN pays a few `stat` calls). `sage-npu doctor`
prints `DeviceSetup.parts`, one line each.
"""

from __future__ import annotations

import grp
import importlib.util
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sage_npu.npu_eval.chips import CHIPS

# Where CANN says its home is, in the order its set_env.sh scripts export them (8.x: the toolkit's
# set_env.sh sets ASCEND_TOOLKIT_HOME and ASCEND_HOME_PATH; 9.x's cann/set_env.sh sets ASCEND_HOME_PATH;
# the CMake samples read ASCEND_CANN_PACKAGE_PATH).
HOME_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CANN_PACKAGE_PATH")
# The default installs: 9.x under cann/, 8.x's toolkit under ascend-toolkit/latest.
DEFAULT_HOMES = (Path("/usr/local/Ascend/cann"), Path("/usr/local/Ascend/ascend-toolkit/latest"))
NPU_SMI_DEFAULTS = (Path("/usr/local/sbin/npu-smi"), Path("/usr/local/bin/npu-smi"))
DEVICE_NODES = ("davinci_manager", "devmm_svm", "hisi_hdc")
DRIVER_GROUP = "HwHiAiUser"  # the group the NPU driver's device nodes belong to

# SoC name prefix -> bisheng's --npu-arch (asc-devkit's npu-arch facts: Atlas A2/A3 are dav-2201,
# the 310P dav-2002, the 310B dav-3002, the 950 dav-3510).
_ARCH = (("Ascend910B", "dav-2201"), ("Ascend910_93", "dav-2201"), ("Ascend310P", "dav-2002"),
         ("Ascend310B", "dav-3002"), ("Ascend950", "dav-3510"))
# `npu-smi info`'s chip rows: "| 0     910B2               | OK            | 93.6  ..." (NPU id, Name, Health).
_SMI_ROW = re.compile(r"^\|\s*(?P<npu>\d+)\s+(?P<name>[0-9A-Za-z_]+)\s*\|\s*(?P<health>[A-Za-z]+)\s*\|")


@dataclass(frozen=True)
class Part:
    """One thing the device path needs, as `sage-npu doctor` prints it."""

    name: str
    found: bool
    detail: str
    required: bool = True   # the ascend backend cannot run without it

    def line(self) -> str:
        state = "found" if self.found else ("missing" if self.required else "absent")
        return f"{self.name:<13} {state:<8} {self.detail}"


@dataclass(frozen=True)
class DeviceSetup:
    """What `detect()` found: the tools' paths, the NPU's SoC and what it maps to, every part."""

    home: Path | None = None
    bisheng: Path | None = None
    msprof: Path | None = None
    mssanitizer: Path | None = None
    soc: str | None = None             # e.g. Ascend910B2
    arch: str | None = None            # bisheng's --npu-arch, e.g. dav-2201
    chip: str | None = None            # our chip profile, e.g. 910B2
    simulator: Path | None = None      # CANN's simulator libraries for the SoC (per-line times)
    parts: tuple[Part, ...] = field(default_factory=tuple)

    def missing(self) -> list[Part]:
        return [p for p in self.parts if p.required and not p.found]

    def reason(self) -> str | None:
        """One line naming what is missing, or None when the device can be used."""
        gone = self.missing()
        if not gone:
            return None
        what = "; ".join(f"{p.name}: {p.detail}" for p in gone)
        return (f"the ascend backend cannot run here ({what}). Use --backend sim (the CPU emulator) or auto; "
                "`sage-npu doctor` lists each part")


def soc_arch(soc: str) -> str | None:
    """bisheng's `--npu-arch` for a SoC name (`Ascend910B2` -> `dav-2201`), None when unknown."""
    return next((arch for prefix, arch in _ARCH if soc.startswith(prefix)), None)


def soc_chip(soc: str) -> str | None:
    """Our chip profile for a SoC name (`Ascend910B2` -> `910B2`), None when we have none."""
    name = soc.removeprefix("Ascend")
    return name if name in CHIPS else None


def parse_npu_smi(text: str) -> list[tuple[int, str, str]]:
    """(NPU id, SoC name, health) of each chip `npu-smi info` lists; its Name column says e.g.
    `910B2`, which the SoC name spells `Ascend910B2`."""
    out = []
    for raw in text.splitlines():
        m = _SMI_ROW.match(raw.strip())
        if m and not m.group("name").isdigit():
            name = m.group("name")
            out.append((int(m.group("npu")), name if name.startswith("Ascend") else f"Ascend{name}",
                        m.group("health")))
    return out


def cann_home(env: Mapping[str, str] | None = None) -> tuple[Path | None, str]:
    """CANN's home and where it came from (a variable's name, or `default install`)."""
    values = os.environ if env is None else env
    for var in HOME_VARS:
        value = values.get(var)
        if value and Path(value).is_dir():
            return Path(value), var
    for p in DEFAULT_HOMES:
        if p.is_dir():
            return p, "default install"
    return None, ""


def _first(paths: list[Path], name: str) -> Path | None:
    for p in paths:
        if p.is_file() and os.access(p, os.X_OK):
            return p
    found = shutil.which(name)
    return Path(found) if found else None


def tool(home: Path | None, name: str) -> Path | None:
    """A CANN tool in the places the 8.x and 9.x layouts put it, else on PATH."""
    places: list[Path] = []
    if home is not None:
        places += [home / "bin" / name, home / "compiler" / "ccec_compiler" / "bin" / name,
                   home / "tools" / "profiler" / "bin" / name, home / "tools" / name / "bin" / name]
        places += sorted(home.glob(f"*-linux/ccec_compiler/bin/{name}"))
    return _first(places, name)


def _version(home: Path) -> str:
    """The toolkit's version as its install info file says (`version=8.0.RC1`), or ''."""
    for info in [home / "ascend_toolkit_install.info", *sorted(home.glob("*-linux/ascend_toolkit_install.info"))]:
        try:
            for ln in info.read_text(errors="replace").splitlines():
                if ln.strip().startswith("version="):
                    return ln.split("=", 1)[1].strip()
        except OSError:
            continue
    return ""


def npu_smi_info(npu_smi: Path, timeout_s: float = 10.0) -> tuple[str | None, str]:
    """(the first healthy chip's SoC name, a detail for doctor) from `npu-smi info`."""
    try:
        p = subprocess.run([str(npu_smi), "info"], capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"`npu-smi info` failed: {e}"
    chips = parse_npu_smi(p.stdout)
    if p.returncode != 0 or not chips:
        said = (p.stderr or p.stdout).strip().splitlines()
        return None, f"`npu-smi info` lists no NPU ({said[-1] if said else f'exit {p.returncode}'})"
    npu, soc, health = next((c for c in chips if c[2] == "OK"), chips[0])
    if health != "OK":
        return None, f"NPU {npu} ({soc}) reports health {health}"
    return soc, f"{soc} (NPU {npu} of {len(chips)})"


def _nodes() -> Part:
    dev = Path("/dev")
    cards = sorted(p.name for p in dev.glob("davinci[0-9]*"))
    lacking = [n for n in DEVICE_NODES if not (dev / n).exists()]
    if not cards or lacking:
        names = ", ".join([*(["davinci<N>"] if not cards else []), *lacking])
        return Part("device nodes", False, f"/dev lacks {names} (the NPU driver is not loaded here)", required=False)
    usable = all(os.access(dev / n, os.R_OK | os.W_OK) for n in [*cards, *DEVICE_NODES])
    detail = f"/dev/{', /dev/'.join([*cards, *DEVICE_NODES])}" + ("" if usable else
                                                                  " (this user cannot open them: join the "
                                                                  f"{DRIVER_GROUP} group)")
    return Part("device nodes", usable, detail, required=False)


def driver_gid() -> int | None:
    """The NPU driver's group, whose members may open the device nodes; None when there is none."""
    try:
        return grp.getgrnam(DRIVER_GROUP).gr_gid
    except KeyError:
        return None


def _driver_group() -> Part:
    try:
        g = grp.getgrnam(DRIVER_GROUP)
    except KeyError:
        return Part("driver group", False, f"no {DRIVER_GROUP} group (the NPU driver is not installed)",
                    required=False)
    member = g.gr_gid in os.getgroups() or g.gr_gid == os.getgid()
    return Part("driver group", member, f"{DRIVER_GROUP} (gid {g.gr_gid})" + ("" if member else
                ": this user is not a member (the device run needs it)"), required=False)


def _torch_npu() -> Part:
    # find_spec never imports it: importing torch_npu without CANN breaks `import torch`.
    if importlib.util.find_spec("torch_npu") is None:
        return Part("torch_npu", False, "not installed (pip install -e '.[npu]'; only the torch_npu baseline "
                    "of bench needs it)", required=False)
    return Part("torch_npu", True, "installed (imported only on the device, with TORCH_DEVICE_BACKEND_AUTOLOAD=0 "
                "elsewhere)", required=False)


def detect(env: Mapping[str, str] | None = None) -> DeviceSetup:
    """What is there; `npu-smi info` runs only when CANN and bisheng are found."""
    home, origin = cann_home(env)
    parts: list[Part] = []
    if home is None:
        parts.append(Part("CANN", False, "not installed: set ASCEND_HOME_PATH (source CANN's set_env.sh) or "
                          f"install to {' or '.join(map(str, DEFAULT_HOMES))}"))
    else:
        version = _version(home)
        parts.append(Part("CANN", True, f"{home}{f' {version}' if version else ''} (from {origin})"))
    tools = {n: tool(home, n) for n in ("bisheng", "msprof", "mssanitizer")}
    why = {"bisheng": "the Ascend C compiler", "msprof": "measures the kernel (msprof op)",
           "mssanitizer": "--sanitize runs it (memcheck)"}
    for name, path in tools.items():
        parts.append(Part(name, path is not None, str(path) if path else f"not found ({why[name]})",
                          required=name != "mssanitizer"))
    npu_smi = _first(list(NPU_SMI_DEFAULTS), "npu-smi")
    parts.append(Part("npu-smi", npu_smi is not None, str(npu_smi) if npu_smi else
                      "not found (the NPU driver's tool: no driver here)"))
    soc = arch = chip = None
    if npu_smi is not None and home is not None and tools["bisheng"] is not None:
        soc, detail = npu_smi_info(npu_smi)
        if soc is not None:
            arch, chip = soc_arch(soc), soc_chip(soc)
            if arch is None:
                soc, detail = None, f"{detail}: no --npu-arch known for this SoC"
            else:
                detail += f": --npu-arch={arch}, chip profile {chip or 'none (the default chip is used)'}"
        parts.append(Part("NPU", soc is not None, detail))
    else:
        parts.append(Part("NPU", False, "not looked for (needs CANN, bisheng and npu-smi)"))
    sim = home / "tools" / "simulator" / soc / "lib" if home is not None and soc is not None else None
    sim = sim if sim is not None and sim.is_dir() else None
    parts.append(Part("simulator", sim is not None, str(sim) if sim else "not found (tools/simulator/<SoC>/lib: "
                      "eval --profile's per-line times on the device need it)", required=False))
    parts += [_nodes(), _driver_group(), _torch_npu()]
    return DeviceSetup(home, tools["bisheng"], tools["msprof"], tools["mssanitizer"], soc, arch, chip, sim,
                       tuple(parts))
