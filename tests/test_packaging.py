"""Packaging: every part is in the wheel, with its data, and the installed command works
from outside the repository (an editable install would hide missing package data)."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_every_package_folder_is_listed():
    setup = _pyproject()["tool"]["setuptools"]
    listed, mapping = set(setup["packages"]), setup["package-dir"]
    found = set()
    for root, target in mapping.items():
        base = REPO / target
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            found.add(".".join([root, *rel.parts]) if rel.parts else root)
    assert found <= listed, f"package folders missing from pyproject.toml: {sorted(found - listed)}"
    assert {"sage_npu.npu_eval", "sage_npu.memory", "sage_npu.agent", "sage_npu.server"} <= listed


def test_emulator_headers_are_package_data():
    patterns = _pyproject()["tool"]["setuptools"]["package-data"]["sage_npu.npu_eval"]
    headers = {p.relative_to(REPO / "npu_eval") for p in (REPO / "npu_eval" / "sim").rglob("*.h")}
    covered = {h for h in headers for pat in patterns if h.match(pat)}
    assert headers and headers == covered, f"headers not in package data: {sorted(headers - covered)}"


def make_venv_seeing_our_dependencies(venv: Path) -> Path:
    """A venv on the base interpreter with its site packages; returns its python. (`--system-site-
    packages` from inside a venv would see the base interpreter's packages, not the running venv's:
    see_the_running_venv adds those.)"""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    return venv / "bin" / "python"


def see_the_running_venv(venv: Path) -> None:
    """When the tests run inside a venv (the README's way), its site-packages hold the dependencies:
    a .pth file puts them after the new venv's own, so the wheel installed there wins. Written after
    the wheel's install, so pip never sees the running venv's editable sage-npu; plain path lines,
    so that venv's .pth files (the editable finder) are not run."""
    if sys.prefix == sys.base_prefix:
        return
    ours = [p for p in site.getsitepackages() if Path(p).resolve().is_relative_to(Path(sys.prefix).resolve())]
    [target] = (venv / "lib").glob("python*/site-packages")
    (target / "zz_running_venv.pth").write_text("".join(f"{p}\n" for p in ours))


def test_wheel_installs_and_evaluates_outside_the_repo(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(dist), str(REPO)], check=True, cwd=tmp_path)
    wheel = next(dist.glob("sage_npu-*.whl"))
    venv = tmp_path / "venv"
    py = make_venv_seeing_our_dependencies(venv)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    see_the_running_venv(venv)
    task = tmp_path / "task"
    shutil.copytree(REPO / "examples" / "tasks" / "add_custom", task)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    where = subprocess.run([str(py), "-c", "import sage_npu.npu_eval as m; print(m.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path, env=env).stdout
    assert str(venv) in where, f"the venv imported sage_npu from {where}, not from the wheel"
    proc = subprocess.run([str(venv / "bin" / "sage-npu"), "eval", str(task), "--json", "--trials", "2"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["status"] == "correct"
    assert report["correctness"]["passed"] == 2
