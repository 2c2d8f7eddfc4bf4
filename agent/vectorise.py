"""A per-element scalar loop rewritten as the vector instruction it computes (docs/advisor.md,
perf-scalar-loop).

The loop this transform reads: `for (int32_t j = 0; j < N; j++) { D.SetValue(j, E); }` where D is
a LocalTensor of half or float and E one operation over elements j of LocalTensors of that type
(`A.GetValue(j) + B.GetValue(j)`, `-`, `*`) or over one such element and a literal that the type
holds exactly (`+`, `*`), under casts to float or to the tensors' type. It becomes the count form
`AscendC::Add(D, A, B, N)` (Sub, Mul, Adds, Muls). Each element of the result then depends on
element j of the sources alone, and is the one the scalar code stores: the vector unit rounds the
exact result once to the type, and the scalar code's float (or double) result rounded to the type
is that same value, as an intermediate of at least 2p + 2 bits (float's 24 for a half's p = 11)
makes double rounding harmless for +, - and *. Any other loop is refused (None): a loop it cannot
prove equivalent is not proposed, nor one over a GlobalTensor's elements (the vector
instructions take LocalTensors).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from sage_npu.agent.episode import Candidate
from sage_npu.npu_eval.analysis.model import Call, Function, KernelModel, type_kind

if TYPE_CHECKING:
    from sage_npu.agent.transforms import Sources
    from sage_npu.npu_eval.chips import ChipProfile

# element types the rewrite handles, and the struct format that tells whether a literal fits one
TYPES = {"half": "e", "float": "f"}
# operation of two tensor elements -> the vector API; of a tensor element and a literal -> its API
TENSOR_OPS = {"+": "Add", "-": "Sub", "*": "Mul"}
SCALAR_OPS = {"+": "Adds", "*": "Muls"}
TAGS = ("advisor", "perf-scalar-loop", "vectorise")


@dataclass(frozen=True)
class Loop:
    """A counted loop `for (T j = 0; j < count; j++)`: its variable and count's text."""

    node: ts.Node
    var: str
    count: str


def counted_loop(m: KernelModel, n: ts.Node) -> Loop | None:
    """The loop's variable and count, when it runs j from 0 up to a count without calls, by one."""
    init, cond, update = (n.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if n.type != "for_statement" or init is None or cond is None or update is None:
        return None
    decl = init.child_by_field_name("declarator")
    if init.type != "declaration" or decl is None or decl.type != "init_declarator":
        return None
    name, value = decl.child_by_field_name("declarator"), decl.child_by_field_name("value")
    if name is None or value is None or m.const_value(value) != 0:
        return None
    var = m.text(name)
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    op = cond.child_by_field_name("operator")
    if cond.type != "binary_expression" or left is None or right is None or op is None \
            or m.text(left) != var or m.text(op) != "<" or _has_call(right) or var in m.identifiers(right):
        return None
    step = "".join(m.text(update).split())
    return Loop(n, var, m.text(right)) if step in (f"{var}++", f"++{var}", f"{var}+=1") else None


def _has_call(n: ts.Node) -> bool:
    stack = [n]
    while stack:
        x = stack.pop()
        if x.type == "call_expression":
            return True
        stack.extend(x.children)
    return False


def _cast_inner(m: KernelModel, n: ts.Node, types: set[str]) -> ts.Node | None:
    """What a cast to one of `types` (`static_cast<float>(x)`, `(float)x`, `float(x)`) wraps."""
    if n.type == "cast_expression":
        t = n.child_by_field_name("type")
        return n.child_by_field_name("value") if t is not None and m.text(t).split("::")[-1] in types else None
    func, args = n.child_by_field_name("function"), n.child_by_field_name("arguments")
    if n.type != "call_expression" or func is None or args is None or args.named_child_count != 1:
        return None
    target = m.text(func).replace(" ", "")
    inner = target[len("static_cast<"):-1] if target.startswith("static_cast<") else target
    return args.named_children[0] if inner.split("::")[-1] in types else None


def _bare(m: KernelModel, n: ts.Node, dtype: str) -> ts.Node:
    """`n` without parentheses and casts to float or `dtype`."""
    while True:
        if n.type == "parenthesized_expression" and n.named_child_count == 1:
            n = n.named_children[0]
            continue
        inner = _cast_inner(m, n, {"float", dtype})
        if inner is None:
            return n
        n = inner


@dataclass(frozen=True)
class Operand:
    """A tensor whose element j is read (`tensor`), or a literal (`literal`)."""

    tensor: str | None = None
    literal: str | None = None


def _operand(m: KernelModel, n: ts.Node, loop: Loop, dtype: str, fn: Function | None) -> Operand | None:
    n = _bare(m, n, dtype)
    if n.type == "number_literal":
        text = m.text(n).rstrip("fF")
        try:
            value = float(text)
            exact = struct.unpack(TYPES[dtype], struct.pack(TYPES[dtype], value))[0] == value
        except (ValueError, OverflowError):
            return None
        return Operand(literal=text) if exact else None
    func, args = n.child_by_field_name("function"), n.child_by_field_name("arguments")
    if n.type != "call_expression" or func is None or func.type != "field_expression" or args is None:
        return None
    method, obj = func.child_by_field_name("field"), func.child_by_field_name("argument")
    if method is None or obj is None or m.text(method) != "GetValue" or obj.type != "identifier" \
            or [m.text(a) for a in args.named_children] != [loop.var]:
        return None
    name = m.text(obj)
    return Operand(tensor=name) if m.element_type(obj, fn) == dtype and _local_tensor(m, obj, fn) else None


# The queue and buffer methods whose result is a LocalTensor (`auto x = q.DeQue<half>();`).
LOCAL_MAKERS = ("AllocTensor", "DeQue", "Get")


def _local_tensor(m: KernelModel, n: ts.Node, fn: Function | None) -> bool:
    """Whether `n` names a LocalTensor: the vector instruction takes no GlobalTensor (a loop over
    GM elements stays as it is)."""
    name = m.ref_name(n)
    d = m.decl_of(name, fn, n.start_byte) if name is not None else None
    if d is None:
        return False
    kind = type_kind(d.type)
    if kind is not None or d.value is None or d.value.type != "call_expression":
        return kind == "local"
    func = d.value.child_by_field_name("function")
    method = func.child_by_field_name("field") if func is not None and func.type == "field_expression" else None
    return method is not None and m.text(method).split("<")[0] in LOCAL_MAKERS


def _vector_call(m: KernelModel, set_call: Call, loop: Loop) -> str | None:
    """The vector instruction `D.SetValue(j, E)` computes over the loop, or None."""
    dst = set_call.receiver
    fn = set_call.function
    node = set_call.node.child_by_field_name("function")
    obj = node.child_by_field_name("argument") if node is not None else None
    dtype = m.element_type(obj, fn) if obj is not None else None
    if dst is None or obj is None or dtype not in TYPES or not _local_tensor(m, obj, fn) \
            or len(set_call.args) != 2 or m.text(set_call.args[0]) != loop.var:
        return None
    e = _bare(m, set_call.args[1], dtype)
    left, right, op = (e.child_by_field_name(f) for f in ("left", "right", "operator"))
    if e.type != "binary_expression" or left is None or right is None or op is None:
        return None
    a, b = _operand(m, left, loop, dtype, fn), _operand(m, right, loop, dtype, fn)
    if a is None or b is None:
        return None
    sign = m.text(op)
    if a.tensor and b.tensor and sign in TENSOR_OPS:
        return f"AscendC::{TENSOR_OPS[sign]}({dst}, {a.tensor}, {b.tensor}, {loop.count});"
    tensor, literal = (a, b) if a.tensor else (b, a)
    if tensor.tensor and literal.literal and sign in SCALAR_OPS:
        return f"AscendC::{SCALAR_OPS[sign]}({dst}, {tensor.tensor}, static_cast<{dtype}>({literal.literal}), " \
               f"{loop.count});"
    return None


def _only_statement(loop: ts.Node, call: ts.Node) -> bool:
    """Whether the loop's body is the call's statement alone."""
    body = loop.child_by_field_name("body")
    if body is not None and body.type == "compound_statement":
        stmts = [s for s in body.named_children if s.type != "comment"]
        body = stmts[0] if len(stmts) == 1 else None
    return body is not None and body.type == "expression_statement" and body.named_children == [call]


def vector_instead_of_scalar_loop(src: Sources, chip: ChipProfile, line: int | None = None) -> list[Candidate]:
    """Each provable element loop (the one spanning `line`, when given) as its vector instruction."""
    m = KernelModel(src.kernel)
    out = []
    for c in m.calls:
        if c.name != "SetValue" or not c.loops:
            continue
        loop = counted_loop(m, c.loops[-1])
        if loop is None or not _only_statement(loop.node, c.node) or \
                (line is not None and not loop.node.start_point[0] < line <= loop.node.end_point[0] + 1):
            continue
        vector = _vector_call(m, c, loop)
        if vector is None:
            continue
        start, end = loop.node.start_byte, loop.node.end_byte
        text = (m.src[:start] + vector.encode() + m.src[end:]).decode("utf-8")
        out.append(Candidate("vector-instead-of-scalar-loop", f"{vector} instead of the element loop (line "
                             f"{loop.node.start_point[0] + 1})", {src.kernel_name: text}, TAGS))
    return out
