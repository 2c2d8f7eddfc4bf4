"""What host.py returns: a `Launch` of one kernel entry, with `Tiling` structs set by name.

host.py imports these from `sage_npu.npu_eval`; they must stay light (no torch import here)
because the plan worker loads them before it runs the user's host code.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any


class Tiling:
    """A tiling struct, fields set by name; the compiler does the layout.

    `Tiling(totalLength=1024, tileNum=8)` becomes the entry parameter's struct when it is
    passed by value, or a struct placed in global memory when the parameter is a `GM_ADDR`
    read with `GET_TILING_DATA` (its type from the kernel's `REGISTER_TILING_DEFAULT`, or
    `Tiling(type="Name", ...)`).
    """

    def __init__(self, type: str | None = None, **fields: int | float | bool) -> None:  # noqa: A002
        self.type = type
        self.fields = dict(fields)
        caller = inspect.stack(context=0)[1]
        self.file, self.line = caller.filename, caller.lineno

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.fields.items())
        return f"Tiling({'type=' + repr(self.type) + ', ' if self.type else ''}{inner})"


@dataclass
class Launch:
    """One launch of a kernel entry: `kernel<<<block_dim>>>(*args)`.

    `args` follow the entry's parameter order: a tensor becomes a GM buffer, a `Tiling` the
    tiling struct, an int or float a scalar. `outputs` are compared, in order, with the
    reference outputs. `tiling_key` is the key the kernel's `TILING_KEY_IS(k)` branches test
    (what CANN's host tiling sets with `SetTilingKey`); it may differ between trials, the same
    build serving them all. None leaves it 0.
    """

    kernel: str
    block_dim: int
    args: list[Any]
    outputs: list[Any]
    tolerance: float | None = None
    defines: dict[str, str | int | float] = field(default_factory=dict)
    chip: str | None = None
    tiling_key: int | None = None
    file: str = ""
    line: int = 0

    def __post_init__(self) -> None:
        if not self.file:
            caller = inspect.stack(context=0)[2]
            self.file, self.line = caller.filename, caller.lineno
