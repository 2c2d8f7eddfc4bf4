"""The VS Code extension (editor/vscode): it compiles, its node unit tests pass, and the
settings it declares are the server's own (same names, defaults, bounds and choices)."""

from __future__ import annotations

import json
import shutil
import subprocess
import typing
from pathlib import Path

import pytest

from sage_npu.npu_eval.chips import CHIPS
from sage_npu.server.server import EditorSettings

EXT = Path(__file__).resolve().parents[1] / "editor" / "vscode"


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def test_extension_compiles_and_its_unit_tests_pass(tmp_path):
    node = shutil.which("node")
    tsc = EXT / "node_modules" / "typescript" / "bin" / "tsc"
    if node is None or not tsc.exists():
        pytest.fail(f"the extension's toolchain is missing (node: {node}, {tsc}): run "
                    "`cd editor/vscode && npm ci` (as .ci/run does); Node.js 18+ is needed.", pytrace=False)
    out = tmp_path / "out"  # not editor/vscode/out: the test leaves the source tree as it was
    build = subprocess.run([node, str(tsc), "-p", ".", "--outDir", str(out)], cwd=EXT, capture_output=True,
                           text=True, timeout=120)
    assert build.returncode == 0, f"tsc failed:\n{build.stdout}\n{build.stderr}"
    assert (out / "extension.js").exists()
    tests = sorted(str(p) for p in (out / "test").glob("*.test.js"))
    assert tests, "no compiled unit tests"
    run = subprocess.run([node, "--test", *tests], cwd=EXT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"node --test failed:\n{run.stdout}\n{run.stderr}"
    assert "# fail 0" in run.stdout


def test_declared_settings_match_the_server_models():
    props = json.loads((EXT / "package.json").read_text())["contributes"]["configuration"]["properties"]
    models = {name: field.annotation for name, field in EditorSettings.model_fields.items()}
    defaults = EditorSettings()
    checked = []
    for key, decl in props.items():
        part, _, name = key.removeprefix("sage.").partition(".")
        if part not in models:
            continue  # the extension's own (interpreter, serverCommand, trace.server)
        model = models[part]
        field_name = _snake(name)
        assert field_name in model.model_fields, f"{key} is not a field of {model.__name__}"
        field = model.model_fields[field_name]
        assert decl["default"] == getattr(getattr(defaults, part), field_name), f"default of {key}"
        bounds = {type(m).__name__: m for m in field.metadata}
        for kind, attr, json_key in (("Ge", "ge", "minimum"), ("Le", "le", "maximum"),
                                     ("Gt", "gt", "exclusiveMinimum")):
            if kind in bounds:
                assert decl.get(json_key) == getattr(bounds[kind], attr), f"{json_key} of {key}"
        if typing.get_origin(field.annotation) is typing.Literal:
            assert decl["enum"] == list(typing.get_args(field.annotation)), f"choices of {key}"
        checked.append(key)
    assert props["sage.eval.chip"]["enum"] == list(CHIPS)
    assert {"sage.eval.chip", "sage.eval.trials", "sage.eval.backend", "sage.server.debounceS"} <= set(checked)
