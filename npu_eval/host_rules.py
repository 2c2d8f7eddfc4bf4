"""host.py may only plan (docs/task-format.md): an allow-list checked on its syntax tree before it runs.

A model that cannot make the kernel fast is tempted to compute the answer on the host and hand
it to the kernel, or to read the expected outputs from disk. The plan stage already rejects a
Launch argument that host.py computed (torch's version counter); this check closes the rest:
what host.py may import and call. Plain arithmetic stays free (tiling is arithmetic), and a
tensor computed with operators is still caught at run time by the argument rule.

Allowed: imports of torch, math, typing/__future__/dataclasses and sage_npu.npu_eval; calls of
the builtins a plan needs, math.*, torch's buffer factories, Launch/Tiling, functions and
classes host.py defines, and methods from a fixed list of shape queries, views and
list/dict/str helpers. Everything else is reported at its line with what to do instead.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ALLOWED_MODULES = {"torch", "math", "typing", "__future__", "dataclasses", "sage_npu", "sage_npu.npu_eval",
                   "sage_npu.npu_eval.launch"}
TORCH_FACTORIES = {"empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
                   "empty_strided", "Size", "finfo", "iinfo", "device"}
BUILTINS = {"len", "int", "float", "bool", "str", "min", "max", "abs", "round", "divmod", "range", "sum", "any",
            "all", "enumerate", "zip", "sorted", "reversed", "list", "tuple", "dict", "set", "isinstance", "print",
            "ValueError", "TypeError", "RuntimeError", "AssertionError", "NotImplementedError", "super",
            "dataclass", "field", "pow", "repr", "hasattr"}
METHODS = {
    # tensor metadata and views (no data is computed)
    "numel", "nelement", "size", "dim", "element_size", "stride", "is_contiguous", "contiguous", "view",
    "reshape", "flatten", "unsqueeze", "squeeze", "storage_offset", "data_ptr",
    # python containers and strings
    "append", "extend", "insert", "pop", "get", "items", "keys", "values", "copy", "format", "join", "split",
    "startswith", "endswith", "lower", "upper", "bit_length", "index", "count",
}
_ALLOCATORS = ", ".join(f"torch.{n}" for n in sorted(TORCH_FACTORIES - {"Size", "finfo", "iinfo", "device"}))
FORBIDDEN_NAMES = {"open", "exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr", "globals",
                   "locals", "vars", "input", "breakpoint", "memoryview"}


@dataclass(frozen=True)
class HostViolation:
    line: int
    column: int
    message: str


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


class _Checker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[HostViolation] = []
        self.aliases: dict[str, str] = {}       # local name -> module or module.attr it stands for
        self.defined: set[str] = set()          # functions and classes host.py defines
        self.bound: set[str] = set()            # every name host.py binds (a parameter may be called `input`)

    def bad(self, node: ast.AST, message: str) -> None:
        self.found.append(HostViolation(getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1, message))

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.name not in ALLOWED_MODULES:
                self.bad(node, f"host.py imports {a.name}: it may only import torch, math and sage_npu.npu_eval "
                               "(it plans the launch; the kernel does the work)")
            self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level or mod not in ALLOWED_MODULES:
            self.bad(node, f"host.py imports from {'.' * node.level}{mod}: it may only import torch, math and "
                           "sage_npu.npu_eval (it plans the launch; the kernel does the work)")
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{mod}.{a.name}"

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.defined.add(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.defined.add(node.name)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__") and node.attr.endswith("__"):
            self.bad(node, f"host.py reads {node.attr}: dunder attributes are off limits to a launch plan")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES and node.id not in self.bound:
            self.bad(node, f"host.py uses {node.id}: a launch plan may not read files or run code it builds")

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Name):
            name = func.id
            target = self.aliases.get(name, name)
            if name in self.defined or name in BUILTINS or (name in FORBIDDEN_NAMES and name not in self.bound):
                return   # forbidden names are reported by visit_Name
            if target.startswith("math.") or target in ("sage_npu.npu_eval.Launch", "sage_npu.npu_eval.Tiling",
                                                        "sage_npu.npu_eval.launch.Launch",
                                                        "sage_npu.npu_eval.launch.Tiling",
                                                        "dataclasses.dataclass", "dataclasses.field"):
                return
            if target.startswith("torch.") and target[len("torch."):] in TORCH_FACTORIES:
                return
            self.bad(node, f"host.py calls {name}(), which is not on its allow-list: a launch plan may call "
                           "torch.empty/zeros/full(_like), math, Launch, Tiling and its own functions")
            return
        if not isinstance(func, ast.Attribute):
            self.bad(node, "host.py calls the result of an expression; call named functions only")
            return
        dotted = _dotted(func)
        head = dotted.split(".")[0] if dotted else None
        module = self.aliases.get(head) if head else None
        if module is not None and dotted is not None and head is not None:
            full = module + dotted[len(head):]
            if full.startswith("math."):
                return
            if full.startswith("torch.") and full[len("torch."):] in TORCH_FACTORIES:
                return
            if full.startswith("torch."):
                self.bad(node, f"host.py calls {dotted}(): host.py may only allocate buffers ({_ALLOCATORS}); "
                               "computing belongs in the kernel")
                return
        if func.attr in METHODS:
            return
        self.bad(node, f"host.py calls .{func.attr}(), which is not on its allow-list: a launch plan may query "
                       "shapes (numel, size, element_size, ...) and take views, not compute on tensors")


def _bound_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def check_host(source: str) -> list[HostViolation]:
    """Every allow-list violation in host.py's source, in line order; a syntax error is one violation."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return [HostViolation(e.lineno or 1, e.offset or 1, f"host.py does not parse: {e.msg}")]
    checker = _Checker()
    checker.bound = _bound_names(tree)
    checker.visit(tree)
    return sorted(checker.found, key=lambda v: (v.line, v.column))


def check_host_file(path: Path) -> list[HostViolation]:
    return check_host(path.read_text(encoding="utf-8", errors="replace"))
