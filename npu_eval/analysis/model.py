"""The kernel model: what the static rules need to know about one Ascend C source, read in a
single walk of its tree-sitter parse: every declaration (with its type and initialiser), every
call (its name, receiver, template arguments, arguments, enclosing function and loops), every
member, subscript and dereference, and an evaluator for compile-time integer constants
(literals, constexpr/const names, #defines, sizeof of known types, arithmetic and casts over
them).

The model is deliberately conservative: a name counts as a constant only when every
declaration of it in the file is const with the same evaluable value, so a check built on it
stays silent rather than guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter as ts

from sage_npu.npu_eval.signature import parse

# sizeof() of the element types kernels use (half and bfloat16_t are 16-bit in Ascend C).
ELEMENT_BYTES = {
    "half": 2, "bfloat16_t": 2, "float": 4, "float32_t": 4, "float16_t": 2, "double": 8,
    "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
    "int64_t": 8, "uint64_t": 8, "bool": 1, "char": 1, "short": 2, "int": 4, "long": 8,
    "unsigned": 4, "size_t": 8,
}
# Constants of kernel_operator.h that kernels use in sizes.
API_CONSTANTS = {"ONE_BLK_SIZE": 32, "ONE_REPEAT_BYTE_SIZE": 256, "DEFAULT_REPEAT_STRIDE": 8}

COPY_APIS = frozenset({"DataCopy", "DataCopyPad"})
VECTOR_APIS = frozenset({
    "Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or", "AddRelu", "SubRelu", "FusedMulAdd", "MulAddDst",
    "MulAddRelu", "Adds", "Muls", "Maxs", "Mins", "LeakyRelu", "ShiftLeft", "ShiftRight", "Exp", "Ln", "Abs",
    "Sqrt", "Rsqrt", "Reciprocal", "Relu", "Not", "Neg", "Duplicate", "Axpy", "Cast", "Compare", "Compares",
    "CompareScalar", "Select", "ReduceSum", "ReduceMax", "ReduceMin", "WholeReduceSum", "WholeReduceMax",
    "WholeReduceMin", "BlockReduceSum", "BlockReduceMax", "BlockReduceMin", "PairReduceSum", "RepeatReduceSum",
    "ReduceRepeat", "ReduceDataBlock", "ReducePairElem", "Brcb", "GatherMask", "Gather",
})
SYNC_APIS = frozenset({"SetFlag", "WaitFlag", "PipeBarrier", "pipe_barrier", "set_flag", "wait_flag",
                       "DataSyncBarrier", "SyncAll"})
UB_POSITIONS = frozenset({"VECIN", "VECOUT", "VECCALC", "LCM"})

_LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})
_ACCESSES = frozenset({"subscript_expression", "pointer_expression", "field_expression"})
_CLASSES = frozenset({"class_specifier", "struct_specifier"})
_INT = re.compile(r"^(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[uUlL]*$")
_TEMPLATE_ARG = re.compile(r"<\s*(.+)\s*>\s*$", re.S)


@dataclass(eq=False)
class Function:
    node: ts.Node
    name: str
    klass: str | None   # the class it is a member of (in-class or `Klass::name` definitions)
    body: ts.Node


@dataclass(eq=False)
class Call:
    node: ts.Node
    name: str                    # "DataCopy", "AllocTensor"
    receiver: str | None         # "inQueueX" for `inQueueX.AllocTensor<half>()`, None for free calls
    template_args: list[str]
    args: list[ts.Node]
    function: Function | None
    loops: tuple[ts.Node, ...]   # enclosing loops inside the function, outermost first
    qualified: bool = False      # spelled `AscendC::Name`


@dataclass(eq=False)
class Decl:
    name: str
    type: str                    # the declared type, whitespace-normalised
    node: ts.Node                # the declaration
    name_node: ts.Node
    value: ts.Node | None        # initialiser expression
    const: bool
    kind: str                    # "param", "local", "field", "global", "define"
    function: Function | None
    klass: str | None


class KernelModel:
    def __init__(self, source: str | bytes) -> None:
        self.src = source.encode("utf-8") if isinstance(source, str) else source
        self.tree = parse(self.src)
        self.lines = self.src.split(b"\n")
        self.functions: list[Function] = []
        self.calls: list[Call] = []
        # Calls by function, kept here rather than on Function: a Function <-> Call cycle would
        # leave every model to the cycle collector instead of freeing it when the check ends.
        self._calls_in: dict[int, list[Call]] = {}
        self.decls: dict[str, list[Decl]] = {}
        self.uses: dict[str, list[ts.Node]] = {}  # every identifier occurrence, by name
        self.accesses: list[ts.Node] = []  # `p[i]`, `*p`, `p.f`, `p->f`, in source order
        self._const_cache: dict[str, int | None] = {}
        self._varying: dict[int, set[str]] = {}
        self._walk()

    # ---- text and positions ----

    def text(self, n: ts.Node) -> str:
        return self.src[n.start_byte:n.end_byte].decode("utf-8", errors="replace")

    def span(self, n: ts.Node) -> tuple[int, int, int, int]:
        """1-based (line, character column, end line, end character column) of a node."""
        (r0, c0), (r1, c1) = n.start_point, n.end_point
        return r0 + 1, char_column(self.lines, r0, c0), r1 + 1, char_column(self.lines, r1, c1)

    # ---- the walk ----

    def _walk(self) -> None:
        # (node, function, class, loops): an explicit stack, since kernels nest deeply.
        stack: list[tuple[ts.Node, Function | None, str | None, tuple]] = [(self.tree.root_node, None, None, ())]
        while stack:
            n, fn, klass, loops = stack.pop()
            t = n.type
            if t == "function_definition":
                fn = self._function(n, klass) or fn
                loops = ()
            elif t in _CLASSES:
                name = n.child_by_field_name("name")
                if name is not None:
                    klass = self.text(name)
            elif t == "call_expression":
                self._call(n, fn, loops)
            elif t in ("declaration", "field_declaration"):
                self._declaration(n, fn, klass)
            elif t in ("parameter_declaration", "optional_parameter_declaration"):
                self._parameter(n, fn, klass)
            elif t == "preproc_def":
                self._define(n)
            elif t == "identifier":
                self.uses.setdefault(self.text(n), []).append(n)
            elif t in _ACCESSES:
                self.accesses.append(n)
            if t in _LOOPS:
                loops = loops + (n,)
            for c in reversed(n.children):
                stack.append((c, fn, klass, loops))

    def _function(self, n: ts.Node, klass: str | None) -> Function | None:
        decl = n.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        body = n.child_by_field_name("body")
        if decl is None or body is None:
            return None
        name_node = decl.child_by_field_name("declarator")
        full = self.text(name_node) if name_node is not None else ""
        if "::" in full:  # `void KernelAdd::CopyIn(...)` defined outside its class
            scope, _, name = full.rpartition("::")
            klass = scope.split("::")[-1].split("<")[0]
        else:
            name = full
        f = Function(n, name.strip(), klass, body)
        self.functions.append(f)
        return f

    def _call(self, n: ts.Node, fn: Function | None, loops: tuple) -> None:
        func = n.child_by_field_name("function")
        if func is None:
            return
        receiver = None
        target = func
        qualified = False
        if func.type == "field_expression":
            arg = func.child_by_field_name("argument")
            receiver = self.ref_name(arg) if arg is not None else None
            if receiver is None and arg is not None:
                receiver = " ".join(self.text(arg).split())
            target = func.child_by_field_name("field")
        while target is not None and target.type == "qualified_identifier":
            qualified = qualified or self.text(target).startswith("AscendC::")
            target = target.child_by_field_name("name")
        if target is None:
            return
        targs: list[str] = []
        if target.type in ("template_function", "template_method"):
            args_node = target.child_by_field_name("arguments")
            if args_node is not None:
                targs = [" ".join(self.text(a).split()) for a in args_node.named_children]
            target = target.child_by_field_name("name")
        if target is None or target.type not in ("identifier", "field_identifier"):
            return
        arg_list = n.child_by_field_name("arguments")
        args = [a for a in arg_list.named_children if a.type != "comment"] if arg_list is not None else []
        call = Call(n, self.text(target), receiver, targs, args, fn, loops, qualified)
        self.calls.append(call)
        if fn is not None:
            self._calls_in.setdefault(fn.node.id, []).append(call)

    def _add(self, d: Decl) -> None:
        self.decls.setdefault(d.name, []).append(d)

    def _declaration(self, n: ts.Node, fn: Function | None, klass: str | None) -> None:
        type_node = n.child_by_field_name("type")
        if type_node is None:
            return
        type_text = " ".join(self.text(type_node).split())
        const = any(c.type == "type_qualifier" and self.text(c) in ("const", "constexpr") for c in n.children)
        kind = "field" if n.type == "field_declaration" else ("local" if fn is not None else "global")
        declarators = n.children_by_field_name("declarator")
        defaults = n.children_by_field_name("default_value")
        for i, d in enumerate(declarators):
            value = None
            if d.type == "init_declarator":
                value = d.child_by_field_name("value")
                d = d.child_by_field_name("declarator")
            elif len(defaults) == len(declarators):
                value = defaults[i]
            ident = _innermost_name(d)
            if ident is None or d is None or d.type == "function_declarator":
                continue
            if value is not None and value.type in ("initializer_list", "argument_list") \
                    and value.named_child_count == 1:
                value = value.named_children[0]
            self._add(Decl(self.text(ident), type_text, n, ident, value, const, kind, fn, klass))

    def _parameter(self, n: ts.Node, fn: Function | None, klass: str | None) -> None:
        d = n.child_by_field_name("declarator")
        ident = _innermost_name(d) if d is not None else None
        if ident is None:
            return
        type_node = n.child_by_field_name("type")
        type_text = " ".join(self.text(type_node).split()) if type_node is not None else ""
        self._add(Decl(self.text(ident), type_text, n, ident, None, False, "param", fn, klass))

    def _define(self, n: ts.Node) -> None:
        name = n.child_by_field_name("name")
        value = n.child_by_field_name("value")
        if name is None:
            return
        self._add(Decl(self.text(name), "#define", n, name, value, True, "define", None, None))

    def calls_in(self, fn: Function) -> list[Call]:
        return self._calls_in.get(fn.node.id, [])

    # ---- names and types ----

    def ref_name(self, n: ts.Node | None) -> str | None:
        """The variable an expression names: `x`, `this->x`, `x[i]` and `x.view` give "x"."""
        while n is not None:
            if n.type == "identifier":
                return self.text(n)
            if n.type == "field_expression":
                arg = n.child_by_field_name("argument")
                if arg is not None and arg.type == "this":
                    f = n.child_by_field_name("field")
                    return self.text(f) if f is not None else None
                return None
            if n.type in ("subscript_expression", "parenthesized_expression"):
                n = n.child_by_field_name("argument") if n.type == "subscript_expression" else n.named_children[0]
                continue
            return None
        return None

    def decl_of(self, name: str, fn: Function | None, at: int | None = None) -> Decl | None:
        """The declaration `name` refers to inside `fn`: a local or parameter of the function
        (the last one before byte offset `at`), else a field of its class, else a global."""
        decls = self.decls.get(name)
        if not decls:
            return None
        if fn is not None:
            local = [d for d in decls if d.function is fn and (at is None or d.node.start_byte <= at)]
            if local:
                return local[-1]
            fields = [d for d in decls if d.kind == "field" and d.klass == fn.klass]
            if fields:
                return fields[-1]
        globals_ = [d for d in decls if d.kind in ("global", "define", "field")]
        return globals_[-1] if len(globals_) == 1 else None

    def object_kind(self, name: str | None, fn: Function | None, at: int | None = None) -> str | None:
        """"queue", "tbuf", "pipe", "pool" (TBufPool), "local" (LocalTensor), "global" (GlobalTensor) or None."""
        if name is None:
            return None
        d = self.decl_of(name, fn, at)
        if d is None:
            return None
        kind = type_kind(d.type)
        if kind is None and d.value is not None and d.kind != "define":
            return self.expr_kind(d.value, fn)
        return kind

    def expr_kind(self, n: ts.Node, fn: Function | None) -> str | None:
        """Whether an expression is a LocalTensor ("local") or a GlobalTensor ("global")."""
        if n.type == "call_expression":
            func = n.child_by_field_name("function")
            if func is not None and func.type == "field_expression":
                method = func.child_by_field_name("field")
                mname = self.text(method).split("<")[0] if method is not None else ""
                if mname in ("AllocTensor", "DeQue", "Get", "GetWithOffset", "ReinterpretCast"):
                    return "local"
            return None
        name = self.ref_name(n)
        kind = self.object_kind(name, fn, n.start_byte)
        return kind if kind in ("local", "global") else None

    def element_type(self, n: ts.Node, fn: Function | None) -> str | None:
        """The element type of a tensor expression: from its declaration (`LocalTensor<half>`),
        or the template argument of the call that produced it (`q.AllocTensor<float>()`)."""
        if n.type == "call_expression":
            func = n.child_by_field_name("function")
            if func is not None and func.type == "field_expression":
                method = func.child_by_field_name("field")
                if method is not None and method.type == "template_method":
                    args = method.child_by_field_name("arguments")
                    if args is not None and args.named_child_count == 1:
                        return _strip_ns(self.text(args.named_children[0]))
            return None
        name = self.ref_name(n)
        if name is None:
            return None
        d = self.decl_of(name, fn, n.start_byte)
        if d is None:
            return None
        if type_kind(d.type) in ("local", "global"):
            m = _TEMPLATE_ARG.search(d.type)
            return _strip_ns(m.group(1)) if m else None
        if d.value is not None and d.kind in ("local", "global"):
            return self.element_type(d.value, d.function)
        return None

    def element_bytes(self, type_name: str | None) -> int | None:
        if type_name is None:
            return None
        return ELEMENT_BYTES.get(type_name)

    # ---- constants ----

    def const_name(self, name: str) -> int | None:
        if name in self._const_cache:
            return self._const_cache[name]
        self._const_cache[name] = None  # a cycle (`A = B; B = A`) is not a constant
        decls = self.decls.get(name)
        if not decls:
            value = API_CONSTANTS.get(name)
        else:
            values = set()
            for d in decls:
                if not d.const or d.value is None:
                    values.add(None)
                elif d.kind == "define":
                    values.add(self._define_value(d))
                else:
                    values.add(self.const_value(d.value))
            value = values.pop() if len(values) == 1 else None
        self._const_cache[name] = value
        return value

    def _define_value(self, d: Decl) -> int | None:
        text = self.text(d.value).strip() if d.value is not None else ""
        if _INT.match(text):
            return _int(text)
        if not text or "\\" in text:
            return None
        return self.const_text(text)

    def const_text(self, text: str) -> int | None:
        """The value of an expression given as text, over this kernel's constants (a #define's
        body; a buffer size with the tiling's fields written in by a transform), or None."""
        snippet = f"auto sage_define_value = ({text});".encode()
        tree = parse(snippet)
        decl = tree.root_node.named_children[0] if tree.root_node.named_child_count else None
        init = decl.child_by_field_name("declarator") if decl is not None else None
        value = init.child_by_field_name("value") if init is not None and init.type == "init_declarator" else None
        if value is None or tree.root_node.has_error:
            return None
        sub = _Snippet(self, snippet)
        return sub.const_value(value)

    def const_value(self, n: ts.Node | None) -> int | None:
        """The integer value of a compile-time constant expression, or None."""
        if n is None:
            return None
        t = n.type
        if t == "number_literal":
            text = self.text(n).replace("'", "")
            sign = -1 if text.startswith("-") else 1
            text = text.lstrip("+-")
            return sign * _int(text) if _INT.match(text) else None
        if t == "identifier":
            return self.const_name(self.text(n))
        if t in ("qualified_identifier", "type_identifier"):  # `Tiling::N`, `AscendC::ONE_BLK_SIZE`
            return self.const_name(self.text(n).split("::")[-1])
        if t == "parenthesized_expression":
            return self.const_value(n.named_children[0]) if n.named_child_count == 1 else None
        if t == "sizeof_expression":
            inner = n.child_by_field_name("type") or n.child_by_field_name("value")
            if inner is not None and inner.type == "parenthesized_expression" and inner.named_child_count == 1:
                inner = inner.named_children[0]
            return ELEMENT_BYTES.get(_strip_ns(self.text(inner))) if inner is not None else None
        if t == "cast_expression":
            return self.const_value(n.child_by_field_name("value"))
        if t == "call_expression":  # static_cast<uint32_t>(x), uint32_t(x)
            return self._const_cast_call(n)
        return self._const_operator(n)

    def _const_cast_call(self, n: ts.Node) -> int | None:
        """`static_cast<uint32_t>(x)`, `uint32_t(x)`: the value of x."""
        func = n.child_by_field_name("function")
        args = n.child_by_field_name("arguments")
        if func is None or args is None or args.named_child_count != 1:
            return None
        ftext = self.text(func)
        if ftext.startswith(("static_cast<", "std::size_t", "size_t")) or \
                ftext.split("::")[-1] in ELEMENT_BYTES or func.type == "primitive_type":
            return self.const_value(args.named_children[0])
        return None

    def _const_operator(self, n: ts.Node) -> int | None:
        """Unary, binary and conditional expressions over constants."""
        t = n.type
        op = n.child_by_field_name("operator")
        if t == "unary_expression" and op is not None:
            v = self.const_value(n.child_by_field_name("argument"))
            if v is None:
                return None
            return {"-": -v, "+": v, "~": ~v}.get(self.text(op))
        if t == "binary_expression" and op is not None:
            a = self.const_value(n.child_by_field_name("left"))
            if a is None:
                return None
            b = self.const_value(n.child_by_field_name("right"))
            if b is None:
                return None
            return _binary(self.text(op), a, b)
        if t == "conditional_expression":
            c = self.const_value(n.child_by_field_name("condition"))
            if c is None:
                return None
            return self.const_value(n.child_by_field_name("consequence" if c else "alternative"))
        return None

    # ---- loops ----

    def varying(self, loop: ts.Node) -> set[str]:
        """Names a loop changes: its induction variables, anything assigned, incremented or
        declared inside it."""
        key = loop.id
        if key in self._varying:
            return self._varying[key]
        names: set[str] = set()
        stack = [loop]
        while stack:
            n = stack.pop()
            stack.extend(n.children)
            t = n.type
            if t in ("assignment_expression", "update_expression"):
                target = n.child_by_field_name("left" if t == "assignment_expression" else "argument")
                name = self.ref_name(target) if target is not None else None
                if name:
                    names.add(name)
            elif t == "init_declarator":
                ident = _innermost_name(n.child_by_field_name("declarator"))
                if ident is not None:
                    names.add(self.text(ident))
            elif t == "for_range_loop":
                ident = _innermost_name(n.child_by_field_name("declarator"))
                if ident is not None:
                    names.add(self.text(ident))
        self._varying[key] = names
        return names

    def identifiers(self, n: ts.Node) -> set[str]:
        out: set[str] = set()
        stack = [n]
        while stack:
            c = stack.pop()
            if c.type == "identifier":
                out.add(self.text(c))
            stack.extend(c.children)
        return out


class _Snippet(KernelModel):
    """A #define's value parsed on its own, evaluated against the names of the file it came from."""

    def __init__(self, outer: KernelModel, src: bytes) -> None:  # no walk: the names live in `outer`
        self.src = src
        self.lines = src.split(b"\n")
        self._outer = outer

    def const_name(self, name: str) -> int | None:
        return self._outer.const_name(name)


def char_column(lines: list[bytes], row: int, byte_col: int) -> int:
    """1-based character column of a 0-based (row, byte column) point: reports count characters."""
    if row >= len(lines):
        return byte_col + 1
    return len(lines[row][:byte_col].decode("utf-8", errors="ignore")) + 1


def type_kind(type_text: str) -> str | None:
    base = type_text.split("<", 1)[0].split("::")[-1].strip()
    return {"LocalTensor": "local", "GlobalTensor": "global", "TQue": "queue", "TQueBind": "queue",
            "TSCM": "queue", "TBuf": "tbuf", "TPipe": "pipe", "TBufPool": "pool"}.get(base)


def queue_position(type_text: str) -> str | None:
    """VECIN/VECOUT/... of a `TQue<QuePosition::VECIN, 2>`; TBuf<> defaults to VECCALC."""
    kind = type_kind(type_text)
    m = _TEMPLATE_ARG.search(type_text)
    first = m.group(1).split(",")[0].strip() if m else ""
    if not first:
        return "VECCALC" if kind == "tbuf" else None
    return first.split("::")[-1]


def template_args(type_text: str) -> list[str]:
    m = _TEMPLATE_ARG.search(type_text)
    return [a.strip() for a in m.group(1).split(",")] if m else []


def _innermost_name(d: ts.Node | None) -> ts.Node | None:
    while d is not None and d.type not in ("identifier", "field_identifier"):
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in d.named_children if c.type in ("identifier", "field_identifier")), None)
        d = nxt
    return d


def _strip_ns(text: str) -> str:
    return " ".join(text.split()).replace("AscendC::", "").replace("const ", "").strip()


def _int(text: str) -> int:
    text = text.rstrip("uUlL")
    if text[:2] in ("0x", "0X"):
        return int(text, 16)
    if text[:2] in ("0b", "0B"):
        return int(text, 2)
    if len(text) > 1 and text.startswith("0"):
        return int(text, 8)
    return int(text)


def _binary(op: str, a: int, b: int) -> int | None:
    if op in ("/", "%") and b == 0:
        return None
    if op == "/":
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    if op == "%":
        q = _binary("/", a, b)
        return None if q is None else a - b * q
    if op in ("<<", ">>"):
        if not 0 <= b < 64:
            return None
        return a << b if op == "<<" else a >> b
    return {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b, "<": int(a < b),
            ">": int(a > b), "<=": int(a <= b), ">=": int(a >= b), "==": int(a == b), "!=": int(a != b),
            "&&": int(bool(a and b)), "||": int(bool(a or b))}.get(op)
