"""Read kernel entries (`__global__` functions) from an Ascend C source with tree-sitter.

tree-sitter-cpp does not know Ascend C's qualifiers or `<<<>>>` launches, so they are
blanked with same-length spaces first: byte offsets, lines and columns still match the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter as ts
import tree_sitter_cpp

_QUALIFIERS = re.compile(
    rb"\b(__global__|__aicore__|__gm__|__ubuf__|__vector__|__cube__|__inline__)\b|\b__mix__\s*\([^)]*\)"
)
# A `<<<blockDim, l2ctrl, stream>>>` launch configuration (program mode finds launches by it).
LAUNCH_CONFIG = re.compile(rb"<<<[^;]*?>>>")
_REGISTER_TILING = re.compile(r"REGISTER_TILING_DEFAULT\s*\(\s*([A-Za-z_][\w:]*)\s*\)")


def blank_ascendc(src: bytes) -> bytes:
    """Replace Ascend C extensions with spaces of the same length (newlines kept)."""

    def spaces(m: re.Match) -> bytes:
        return bytes(b if b in b"\n" else 0x20 for b in m.group())

    return LAUNCH_CONFIG.sub(spaces, _QUALIFIERS.sub(spaces, src))


@lru_cache(maxsize=1)
def _parser() -> ts.Parser:
    return ts.Parser(ts.Language(tree_sitter_cpp.language()))


def parse(src: bytes) -> ts.Tree:
    return _parser().parse(blank_ascendc(src))


@dataclass
class Param:
    type: str
    name: str
    pointer: bool = False  # a GM address (GM_ADDR or T*): takes a tensor


@dataclass
class Entry:
    name: str               # unqualified
    qualified: str          # with namespaces: "ops::add"
    line: int               # 1-based line of the name
    column: int             # 1-based
    params: list[Param]
    template: str | None = None  # the template parameter list text, if a template
    extern_c: bool = False
    tiling_type: str | None = None  # from REGISTER_TILING_DEFAULT(T) in the body
    has_gm_tiling: bool = False     # uses GET_TILING_DATA
    body_line: int = 0              # 1-based line of the body's first statement: where a debugger enters it
    notes: list[str] = field(default_factory=list)


def _text(src: bytes, node: ts.Node) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def find_entries(src: bytes) -> list[Entry]:
    tree = parse(src)
    entries: list[Entry] = []

    def visit(node: ts.Node, namespaces: list[str], extern_c: bool, template: str | None) -> None:
        for child in node.children:
            if child.type == "namespace_definition":
                name = child.child_by_field_name("name")
                body = child.child_by_field_name("body")
                if body is not None:
                    visit(body, namespaces + ([_text(src, name)] if name else []), extern_c, None)
            elif child.type == "linkage_specification":
                body = child.child_by_field_name("body")
                if body is not None:
                    if body.type == "function_definition":
                        handle(body, child, namespaces, True, None)
                    else:
                        visit(body, namespaces, True, None)
            elif child.type == "template_declaration":
                params = child.child_by_field_name("parameters")
                for sub in child.children:
                    if sub.type == "function_definition":
                        handle(sub, child, namespaces, extern_c, _text(src, params) if params else "<>")
            elif child.type == "function_definition":
                handle(child, child, namespaces, extern_c, template)
            elif child.type in ("declaration_list", "preproc_ifdef", "preproc_if", "preproc_else",
                                "preproc_elif"):
                visit(child, namespaces, extern_c, template)

    def handle(fn: ts.Node, outer: ts.Node, namespaces: list[str], extern_c: bool, template: str | None):
        decl = fn.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        if decl is None:
            return
        # Only __global__ functions are entries; the qualifier was blanked in the parse, so look for
        # it in the original bytes before the declarator. The blanked qualifiers of a plain entry
        # (`__global__ __vector__ void f`) lie before the node's start: look back to the previous node.
        prev = outer.prev_sibling
        head = src[(prev.end_byte if prev is not None else 0):decl.start_byte]
        if b"__global__" not in head:
            return
        name_node = decl.child_by_field_name("declarator")
        if name_node is None:
            return
        name = _text(src, name_node)
        params = []
        plist = decl.child_by_field_name("parameters")
        for p in plist.named_children if plist else []:
            if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
                continue
            pdecl = p.child_by_field_name("declarator")
            pname = _text(src, pdecl).lstrip("*& ").strip() if pdecl else ""
            ptype = _text(src, p)[: (pdecl.start_byte - p.start_byte) if pdecl else None].strip()
            ptype = " ".join(ptype.split())
            pointer = (pdecl is not None and pdecl.type == "pointer_declarator") or ptype == "GM_ADDR"
            params.append(Param(type=ptype, name=pname, pointer=pointer))
        body_node = fn.child_by_field_name("body")
        body = _text(src, body_node) if body_node is not None else ""
        m = _REGISTER_TILING.search(body)
        first = next((c for c in body_node.named_children if c.type != "comment"), None) if body_node else None
        entries.append(Entry(
            name=name.split("::")[-1],
            qualified="::".join(namespaces + [name]),
            line=name_node.start_point[0] + 1,
            column=name_node.start_point[1] + 1,
            params=params,
            template=template,
            extern_c=extern_c,
            tiling_type=m.group(1) if m else None,
            has_gm_tiling="GET_TILING_DATA" in body,
            body_line=(first or body_node or name_node).start_point[0] + 1,
        ))

    visit(tree.root_node, [], False, None)
    return entries


def match_entry(entries: list[Entry], kernel: str) -> Entry | None:
    """The entry a Launch(kernel=...) names: "add_custom", "ops::add" or "ops::add<256>"."""
    base = kernel.split("<", 1)[0].strip()
    for e in entries:
        if base in (e.qualified, e.name) or e.qualified.endswith("::" + base):
            return e
    return None
