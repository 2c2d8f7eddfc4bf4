"""host.py may only plan: the allow-list, on the host code people write and on what a model
smuggles (DESIGN section 6)."""

from __future__ import annotations

import textwrap

import pytest

from sage_npu.npu_eval.host_rules import check_host

GOOD = """\
import math
import torch

from sage_npu.npu_eval import Launch, Tiling

TILE = 1024


def _blocks(n):
    return max(1, min(8, math.ceil(n / TILE)))


def launch(input, other, model):  # parameters may shadow builtins
    n = input.numel()
    y = torch.empty_like(input)
    work = torch.zeros(64, dtype=torch.float32)
    flat = input.view(-1)
    t = Tiling(totalLength=n, tileLength=min(TILE, n), scale=float(model.value), rows=input.size(0))
    return Launch(kernel="k", block_dim=_blocks(flat.numel()), args=[input, other, y, work, t], outputs=[y])
"""


def test_a_plain_plan_passes():
    assert check_host(GOOD) == []


@pytest.mark.parametrize("source, line, words", [
    ("import numpy as np\n", 1, "imports numpy"),
    ("import os\n", 1, "imports os"),
    ("from pathlib import Path\n", 1, "imports from pathlib"),
    ("from . import helper\n", 1, "imports from ."),
    ("import torch\ndef launch(x):\n    y = torch.add(x, x)\n", 3, "torch.add"),
    ("import torch as t\ndef launch(x):\n    y = t.nn.functional.relu(x)\n", 3, "t.nn.functional.relu"),
    ("def launch(x):\n    y = x.clone()\n", 2, ".clone()"),
    ("def launch(x, y):\n    y.copy_(x.exp())\n", 2, ".copy_()"),
    ("def launch(x):\n    data = open('expected_0.bin', 'rb').read()\n", 2, "uses open"),
    ("def launch(x):\n    f = eval('1')\n", 2, "uses eval"),
    ("def launch(x):\n    return x.__class__\n", 2, "__class__"),
    ("def launch(x):\n    return getattr(x, 'add')(x)\n", 2, "uses getattr"),
])
def test_what_only_computes_or_reads_is_refused_at_its_line(source, line, words):
    found = check_host(source)
    assert found, source
    assert found[0].line == line
    assert any(words in v.message for v in found), [v.message for v in found]


def test_a_smuggled_answer_is_named():
    # What a model writes when it cannot make the kernel fast: compute on the host, copy into the output.
    smuggler = textwrap.dedent("""\
        import torch
        from sage_npu.npu_eval import Launch

        def launch(x, y):
            z = torch.empty_like(x)
            z.copy_(torch.add(x, y))
            return Launch(kernel="add_custom", block_dim=1, args=[x, y, z], outputs=[z])
        """)
    found = check_host(smuggler)
    assert [v.line for v in found] == [6, 6]
    messages = " | ".join(v.message for v in found)
    assert "torch.add()" in messages and ".copy_()" in messages


def test_a_syntax_error_is_one_violation_at_its_line():
    found = check_host("def launch(x:\n    pass\n")
    assert len(found) == 1 and found[0].line == 1 and "does not parse" in found[0].message
