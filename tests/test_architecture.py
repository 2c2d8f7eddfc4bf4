"""The structure the codebase promises (docs/architecture.md), checked on the source:

- the arrows between the parts: server -> agent -> memory, agent -> npu_eval, server -> npu_eval;
  npu_eval and memory import no other part; no part imports the root package (sage_npu itself);
- no module imports another module's `_private` names;
- one function labels timings: no other module spells "est. ... (CPU model)" or "measured".
"""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PARTS = ("npu_eval", "memory", "agent", "server")
ROOT = "root"  # sage_npu/*.py: the CLI and the settings composition
ALLOWED = {
    "npu_eval": set(),
    "memory": set(),
    "agent": {"memory", "npu_eval"},
    "server": {"agent", "npu_eval"},
    ROOT: {*PARTS},
}
LABEL_HOME = REPO / "npu_eval" / "report.py"


@dataclass(frozen=True)
class Violation:
    file: str
    line: int
    what: str


def package_files(root: Path) -> dict[Path, str]:
    """Every Python file of the package under `root`, with the part it belongs to."""
    files = {p: part for part in PARTS for p in (root / part).rglob("*.py") if "node_modules" not in p.parts}
    files.update({p: ROOT for p in (root / "sage_npu").glob("*.py")})
    return files


def imported_modules(tree: ast.AST) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) for every import of a sage_npu module, lazy ones inside functions too."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names if a.name.startswith("sage_npu")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sage_npu"):
            out.append((node.lineno, node.module, [a.name for a in node.names]))
    return out


def part_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PARTS else ROOT


def arrow_violations(root: Path) -> list[Violation]:
    bad = []
    for path, part in package_files(root).items():
        tree = ast.parse(path.read_text(), str(path))
        for line, module, names in imported_modules(tree):
            targets = {part_of(module)}
            if module == "sage_npu":  # `from sage_npu import npu_eval` names a part; anything else is the root
                targets = {n if n in PARTS else ROOT for n in names}
            for target in targets - {part}:
                if target not in ALLOWED[part]:
                    bad.append(Violation(str(path.relative_to(root)), line, f"{part} imports {target} ({module})"))
    return bad


def _module_file(root: Path, module: str) -> Path | None:
    parts = module.split(".")[1:]
    if parts and parts[0] in PARTS:
        base = root.joinpath(*parts)
    else:
        base = root.joinpath("sage_npu", *parts)
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def private_name_violations(root: Path, files: list[Path]) -> list[Violation]:
    """`from sage_npu.x import _y` and `x._y` on an imported sage_npu module, across modules."""
    bad = []
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        module_aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sage_npu"):
                for a in node.names:
                    target = _module_file(root, f"{node.module}.{a.name}")
                    if target is not None:
                        module_aliases[a.asname or a.name] = node.module + "." + a.name
                    elif a.name.startswith("_") and not a.name.startswith("__"):
                        bad.append(Violation(str(path.relative_to(root)), node.lineno,
                                             f"imports {a.name} from {node.module}"))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("sage_npu") and a.asname:
                        module_aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in module_aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                target = _module_file(root, module_aliases[node.value.id])
                if target is not None and target.resolve() != path.resolve():
                    bad.append(Violation(str(path.relative_to(root)), node.lineno,
                                         f"uses {node.value.id}.{node.attr}"))
    return bad


def label_violations(root: Path) -> list[Violation]:
    """String literals spelling a timing label anywhere but the label function's module."""
    bad = []
    for path in [*package_files(root), *(root / "benchmarks").glob("*.py")]:
        if path.resolve() == (root / LABEL_HOME.relative_to(REPO)).resolve():
            continue
        tree = ast.parse(path.read_text(), str(path))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        # a model field's name given as `field=` (memory/migrations.py) names a column, not a label
        fields = {id(k.value) for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords
                  if k.arg == "field"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | fields:
                text = node.value
                if "CPU model)" in text or text.strip() in ("measured", "est.") or text.startswith("est. "):
                    bad.append(Violation(str(path.relative_to(root)), node.lineno, f"spells {text!r}"))
    return bad


def test_the_arrows_hold():
    bad = arrow_violations(REPO)
    assert not bad, "\n".join(f"{v.file}:{v.line}: {v.what}" for v in bad)


def test_a_planted_wrong_arrow_is_caught(tmp_path):
    for part in (*PARTS, "sage_npu"):
        shutil.copytree(REPO / part, tmp_path / part, ignore=shutil.ignore_patterns("node_modules", "__pycache__"))
    planted = {
        "server/positions.py": "from sage_npu.memory.store import MemoryStore\n",
        "npu_eval/chips.py": "from sage_npu.agent import optimize\n",
        "memory/tokens.py": "import sage_npu.npu_eval.report\n",
        "agent/prompt.py": "def f():\n    from sage_npu import cli\n",
    }
    for rel, text in planted.items():
        p = tmp_path / rel
        p.write_text(p.read_text() + "\n" + text)
    caught = {v.file for v in arrow_violations(tmp_path)} - {v.file for v in arrow_violations(REPO)}
    assert caught == set(planted)


def test_no_module_uses_another_modules_private_names():
    files = [p for p in package_files(REPO)]
    bad = private_name_violations(REPO, files)
    assert not bad, "\n".join(f"{v.file}:{v.line}: {v.what}" for v in bad)


def test_a_planted_private_import_is_caught(tmp_path):
    for part in ("npu_eval", "sage_npu"):
        shutil.copytree(REPO / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    p = tmp_path / "npu_eval" / "program.py"
    p.write_text(p.read_text() + "\nfrom sage_npu.npu_eval.report import _Model\n"
                 "from sage_npu.npu_eval import report as r\nX = r._Model\n")
    before = {v.what for v in private_name_violations(REPO, [REPO / "npu_eval" / "program.py"])}
    bad = {v.what for v in private_name_violations(tmp_path, [p])} - before
    assert bad == {"imports _Model from sage_npu.npu_eval.report", "uses r._Model"}


def test_only_the_label_function_spells_a_timing_label():
    bad = label_violations(REPO)
    assert not bad, "\n".join(f"{v.file}:{v.line}: {v.what}" for v in bad)


def test_a_planted_label_is_caught_and_a_field_name_is_not(tmp_path):
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "m.py").write_text('x = "measured"\nadd_field_column(s, M, field="measured")\n')
    assert [(v.file, v.line) for v in label_violations(tmp_path)] == [("memory/m.py", 1)]
