"""The VS Code extension (editor/vscode): it lints, type-checks and compiles, its node unit tests
pass, it packages into a .vsix without the network, and the settings it declares are the
server's own (same names, defaults, bounds and choices)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import typing
import zipfile
from pathlib import Path

import pytest
from pydantic import BaseModel

from sage_npu.npu_eval.chips import CHIPS
from sage_npu.settings import Settings

EXT = Path(__file__).resolve().parents[1] / "editor" / "vscode"


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _toolchain() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None or not (EXT / "node_modules" / "typescript").exists():
        pytest.fail(f"the extension's toolchain is missing (node: {node}, npm: {npm}, node_modules in {EXT}): run "
                    "`cd editor/vscode && npm ci` (as .ci/run does); Node.js 20+ is needed.", pytrace=False)
    return node, npm


def _npm(npm: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    # npm_config_offline: dependency detection for the .vsix must not need the registry.
    env = {**os.environ, "npm_config_offline": "true", "npm_config_update_notifier": "false"}
    return subprocess.run([npm, *args], cwd=EXT, capture_output=True, text=True, timeout=timeout, env=env)


def test_extension_compiles_and_its_unit_tests_pass(tmp_path):
    node, _ = _toolchain()
    tsc = EXT / "node_modules" / "typescript" / "bin" / "tsc"
    out = tmp_path / "out"  # not editor/vscode/out: the unit tests leave the source tree as it was
    build = subprocess.run([node, str(tsc), "-p", ".", "--outDir", str(out)], cwd=EXT, capture_output=True,
                           text=True, timeout=120)
    assert build.returncode == 0, f"tsc failed:\n{build.stdout}\n{build.stderr}"
    assert (out / "extension.js").exists()
    tests = sorted(str(p) for p in (out / "test").glob("*.test.js"))
    assert {Path(t).name for t in tests} >= {"suggestions.test.js", "env.test.js", "settings.test.js", "status.test.js",
                                              "debug.test.js"}
    # TAP explicitly: Node 23+ defaults to its "spec" reporter, whose summary reads "ℹ fail 0".
    run = subprocess.run([node, "--test", "--test-reporter=tap", *tests], cwd=EXT, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, f"node --test failed:\n{run.stdout}\n{run.stderr}"
    assert "# fail 0" in run.stdout


def test_extension_lints_and_type_checks():
    _, npm = _toolchain()
    for script in ("lint", "check"):
        run = _npm(npm, "run", "--silent", script)
        assert run.returncode == 0, f"npm run {script} failed:\n{run.stdout}\n{run.stderr}"


def test_extension_packages_into_a_vsix(tmp_path):
    _, npm = _toolchain()
    vsix = tmp_path / "sage-npu.vsix"
    # Its prepublish step rebuilds editor/vscode/out (ignored by git), which the .vsix ships.
    run = _npm(npm, "run", "--silent", "package", "--", "--out", str(vsix), timeout=180)
    assert run.returncode == 0, f"npm run package failed:\n{run.stdout}\n{run.stderr}"
    names = set(zipfile.ZipFile(vsix).namelist())
    for needed in ("extension/package.json", "extension/out/extension.js", "extension/out/review.js",
                   "extension/LICENSE.txt", "extension/readme.md",
                   "extension/node_modules/vscode-languageclient/package.json"):
        assert needed in names, f"{needed} is not in the .vsix"
    shipped_dev = [n for n in names if n.startswith(("extension/src/", "extension/out/test/",
                                                     "extension/node_modules/typescript/",
                                                     "extension/node_modules/eslint/"))]
    assert not shipped_dev, f"sources, tests or dev tools in the .vsix: {shipped_dev[:5]}"


def _field(model: type[BaseModel], defaults: BaseModel, path: list[str]):
    """The field at `path` (camelCase names) below `model`, and its default."""
    for name in path[:-1]:
        field = model.model_fields[_snake(name)]
        model, defaults = field.annotation, getattr(defaults, _snake(name))
        assert isinstance(model, type) and issubclass(model, BaseModel), f"{name} is not a settings group"
    name = _snake(path[-1])
    assert name in model.model_fields, f"{name} is not a field of {model.__name__}"
    return model.model_fields[name], getattr(defaults, name)


def test_declared_settings_match_the_server_models():
    props = json.loads((EXT / "package.json").read_text())["contributes"]["configuration"]["properties"]
    defaults = Settings()
    checked = []
    for key, decl in props.items():
        path = key.removeprefix("sage.").split(".")
        if path[0] not in Settings.model_fields or len(path) < 2:
            continue  # the extension's own (interpreter, serverCommand, trace.server)
        field, default = _field(Settings, defaults, path)
        if default is None:
            # An optional text setting: "" in the editor means unset, and the extension does not send it.
            assert decl["type"] == "string" and decl["default"] == "", f"{key} must default to an empty string"
        else:
            assert decl["default"] == default, f"default of {key}"
        bounds = {type(m).__name__: m for m in field.metadata}
        for kind, attr, json_key in (("Ge", "ge", "minimum"), ("Le", "le", "maximum"),
                                     ("Gt", "gt", "exclusiveMinimum")):
            if kind in bounds:
                assert decl.get(json_key) == getattr(bounds[kind], attr), f"{json_key} of {key}"
        if typing.get_origin(field.annotation) is typing.Literal:
            assert decl["enum"] == list(typing.get_args(field.annotation)), f"choices of {key}"
        assert decl.get("description") or decl.get("markdownDescription"), f"{key} has no description"
        checked.append(key)
    assert props["sage.eval.chip"]["enum"] == list(CHIPS)
    assert {"sage.eval.chip", "sage.eval.trials", "sage.eval.backend", "sage.server.debounceS",
            "sage.agent.llm.baseUrl", "sage.agent.llm.apiKeyEnv", "sage.agent.llm.timeoutS",
            "sage.memory.db", "sage.memory.embedder"} <= set(checked)
    assert not [k for k in props if "key" in k.lower() and not k.endswith("apiKeyEnv")], "no setting holds a key"
