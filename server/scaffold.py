"""Scaffold a task around a bare kernel: host.py and reference.py generated from the entry's
signature (tree-sitter), for the person to complete. The reference raises until it is written,
so an evaluation says exactly what is left to do rather than passing on a guess."""

from __future__ import annotations

import re
from pathlib import Path

from sage_npu.npu_eval.signature import Entry, find_entries, parse

# Outputs by name when the kernel says so; otherwise the last GM parameter (x, y -> z).
_OUTPUT_NAME = re.compile(r"^(out|dst|result|output)\w*$", re.I)


def struct_fields(src: bytes, name: str) -> list[str]:
    """Field names of `struct name { ... }` in the kernel source, in order."""
    tree = parse(src)
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        stack.extend(n.children)
        if n.type in ("struct_specifier", "class_specifier"):
            tname = n.child_by_field_name("name")
            body = n.child_by_field_name("body")
            if tname is None or body is None or src[tname.start_byte:tname.end_byte].decode() != name:
                continue
            fields = []
            for f in body.named_children:
                if f.type != "field_declaration":
                    continue
                for d in f.children_by_field_name("declarator"):
                    while d is not None and d.type not in ("field_identifier", "identifier"):
                        d = d.child_by_field_name("declarator")
                    if d is not None:
                        fields.append(src[d.start_byte:d.end_byte].decode())
            return fields
    return []


def scaffold(kernel: Path) -> dict[str, str] | None:
    """{"host.py": text, "reference.py": text} for the kernel's first entry, or None."""
    src = kernel.read_bytes()
    entries = find_entries(src)
    if not entries:
        return None
    e = entries[0]
    tensors = [p for p in e.params if p.pointer and p.name not in ("workspace", "tiling")]
    outputs = [p.name for p in tensors if _OUTPUT_NAME.match(p.name)] or [tensors[-1].name] if tensors else []
    inputs = [p.name for p in tensors if p.name not in outputs]
    return {"host.py": _host(e, src, inputs, outputs), "reference.py": _reference(e, inputs)}


def _host(e: Entry, src: bytes, inputs: list[str], outputs: list[str]) -> str:
    args = []
    for p in e.params:
        if p.pointer and p.name in inputs + outputs:
            args.append(p.name)
        elif p.pointer and p.name == "workspace":
            args.append("torch.empty(0, dtype=torch.uint8)")
        elif p.pointer and p.name == "tiling":
            args.append(f"Tiling({_fields(struct_fields(src, e.tiling_type or ''))})")
        elif not p.pointer and (fields := struct_fields(src, p.type.split()[-1])):
            args.append(f"Tiling({_fields(fields)})")
        else:
            args.append(f"0  # {p.type} {p.name}")
    first = inputs[0] if inputs else "x"
    made = "\n".join(f"    {o} = torch.empty_like({first})  # the kernel writes it" for o in outputs)
    joined = ", ".join(args)
    return f'''"""How {e.qualified} is launched: tiling computed from shapes and dtypes only (scaffolded by
sage-npu from the kernel's signature; check the outputs and set every tiling field)."""

import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_DIM = 8


def launch({", ".join(inputs)}):
{made}
    args = [{joined}]
    return Launch(kernel="{e.qualified}", block_dim=BLOCK_DIM, args=args, outputs=[{", ".join(outputs)}])
'''


def _fields(names: list[str]) -> str:
    return ", ".join(f"{n}=0" for n in names)


def _reference(e: Entry, inputs: list[str]) -> str:
    made = ", ".join("torch.randn(8 * 2048, dtype=torch.float16)" for _ in inputs) or ""
    return f'''"""The PyTorch reference {e.qualified} is checked against (KernelBench format; scaffolded by
sage-npu: write forward(), and list tail shapes in get_input_groups())."""

import torch


class Model(torch.nn.Module):
    def forward(self, {", ".join(inputs)}):
        raise NotImplementedError("write the PyTorch computation {e.qualified} must match")


def get_inputs():
    return [{made}]


def get_init_inputs():
    return []
'''
