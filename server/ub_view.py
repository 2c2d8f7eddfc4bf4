"""The Unified Buffer view an Ascend C engineer checks first: what each buffer of a class takes
and their total against the chip's UB, from the static analysis's constant sizes (a size the
source computes at run time is shown as written). Shown on hover over InitBuffer and as a code
lens on the kernel."""

from __future__ import annotations

from sage_npu.npu_eval.analysis import BufferUse, UbUsage


def _size(n: int) -> str:
    return f"{n / 1024:g} KB" if n >= 1024 and n % 256 == 0 else f"{n} B"


def _share(u: UbUsage) -> str:
    return f"{_size(u.known_bytes)} of {_size(u.ub_bytes)} on {u.chip}, {100 * u.known_bytes / u.ub_bytes:.0f}%"


def lens_title(u: UbUsage) -> str:
    """One line: `UB (KernelAdd): 48 KB of 192 KB on 910B2, 25% | inQueueX 2 x 8 KB, ...`."""
    parts = ", ".join(f"{b.name} {b.count if b.count is not None else '?'} x "
                      f"{_size(b.each_bytes) if b.each_bytes is not None else 'run-time size'}" for b in u.buffers)
    if u.sized_at_run_time == len(u.buffers):
        head = f"UB ({u.scope}): {len(u.buffers)} buffers sized at run time, {_size(u.ub_bytes)} on {u.chip}"
    elif u.sized_at_run_time:
        head = f"UB ({u.scope}): {_share(u)} known, {u.sized_at_run_time} sized at run time"
    else:
        head = f"UB ({u.scope}): {_share(u)}"
    warn = " - over the reserved top" if u.safe_bytes < u.known_bytes <= u.ub_bytes else \
        " - does not fit" if u.known_bytes > u.ub_bytes else ""
    return f"{head}{warn} | {parts}"


def _row(b: BufferUse) -> str:
    count = str(b.count) if b.count is not None else "?"
    each = f"{b.each_bytes} B" if b.each_bytes is not None else f"`{b.size}`"
    total = f"{b.bytes} B" if b.bytes is not None else "at run time"
    return f"| `{b.name}` (line {b.line}) | {count} | {each} | {total} |"


def hover_markdown(u: UbUsage) -> str:
    """A table of the class's buffers and the total against the chip's UB."""
    lines = [f"**Unified Buffer of `{u.scope}` on {u.chip}**", "",
             "| buffer | count | bytes each (32 B blocks) | bytes |", "|---|---|---|---|", *map(_row, u.buffers), ""]
    total = f"**Total**: {u.known_bytes} B of {u.ub_bytes} B usable ({100 * u.known_bytes / u.ub_bytes:.1f}%)"
    if u.sized_at_run_time:
        total += f" plus {u.sized_at_run_time} buffer(s) sized at run time"
    lines.append(total + f"; past {u.safe_bytes} B is the top some CANN versions reserve.")
    return "\n".join(lines)


def usage_at(usages: list[UbUsage], line: int) -> UbUsage | None:
    """The usage with a buffer set up on `line` (1-based)."""
    return next((u for u in usages if any(b.line == line for b in u.buffers)), None)
