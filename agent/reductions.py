"""A sum reduced the slow way, rewritten the fast way (docs/advisor.md, perf-slow-reduction).

asc-devkit's reduction best practice: over 2 to 8 repeats of float (16 of half) a WholeReduceSum
whose repeat sums a second WholeReduceSum adds up is slower than BlockReduceSum (one sum per
32-byte block, eight per repeat) followed by one WholeReduceSum over those block sums. This
transform makes that change in the kernel's text, with the arguments the API documentation gives
(CANN 8 names: `WholeReduceSum<T>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride,
srcRepStride)`, `BlockReduceSum<T>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride,
srcRepStride)` with the repeat before the mask and dstRepStride counting one repeat's eight sums).
It proposes only what it can read: constant masks and repeats, the first pass over full repeats
with its sums side by side, and the second pass reading exactly them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sage_npu.agent.episode import Candidate
from sage_npu.npu_eval.analysis.model import ELEMENT_BYTES, Call, KernelModel

if TYPE_CHECKING:
    from sage_npu.agent.transforms import Sources
    from sage_npu.npu_eval.chips import ChipProfile

WHOLE = "WholeReduceSum"
BLOCK = "BlockReduceSum"
REPEAT_BYTES = 256
BLOCK_SUMS_PER_REPEAT = 8  # one per 32-byte block
TAGS = ("advisor", "perf-slow-reduction", "reduction")


def _element_bytes(call: Call) -> int | None:
    """The element size the call's template argument names (`WholeReduceSum<float>`)."""
    return ELEMENT_BYTES.get(call.template_args[0].split("::")[-1]) if len(call.template_args) == 1 else None


def _reads_the_sums(m: KernelModel, first: Call, second: Call, repeats: int) -> bool:
    """Whether `second` is one repeat over exactly the `repeats` sums `first` wrote."""
    return (second.function is first.function and second.loops == first.loops
            and _element_bytes(second) == _element_bytes(first)
            and "".join(m.text(second.args[1]).split()) == "".join(m.text(first.args[0]).split())
            and m.const_value(second.args[2]) == repeats and m.const_value(second.args[3]) == 1)


def _pair(m: KernelModel, first: Call) -> tuple[Call, int] | None:
    """The second WholeReduceSum of a slow pair starting at `first`, and the first's repeats."""
    size = _element_bytes(first)
    if size not in (2, 4) or len(first.args) != 7:
        return None
    per_repeat = REPEAT_BYTES // size
    repeats = m.const_value(first.args[3])
    # full repeats (a partial block's sum would leave another block unwritten), sums side by side,
    # and few enough repeats that their block sums fit one repeat of the second pass
    if repeats is None or not 2 <= repeats <= per_repeat // BLOCK_SUMS_PER_REPEAT \
            or m.const_value(first.args[2]) != per_repeat or m.const_value(first.args[4]) != 1:
        return None
    later = [c for c in m.calls if c.name == WHOLE and len(c.args) == 7 and c.node.start_byte > first.node.end_byte]
    second = min(later, key=lambda c: c.node.start_byte, default=None)
    if second is None or not _reads_the_sums(m, first, second, repeats):
        return None
    return second, repeats


def _rewritten(m: KernelModel, first: Call, second: Call, repeats: int) -> str:
    """The kernel with `first` as BlockReduceSum over its repeats and `second` over the block sums."""
    func = first.node.child_by_field_name("function")
    assert func is not None  # a call the model read has its function
    name_at = m.src.rindex(WHOLE.encode(), func.start_byte, func.end_byte)
    a = first.args
    edits = [
        (name_at, name_at + len(WHOLE), BLOCK),
        (a[2].start_byte, a[3].end_byte, f"{m.text(a[3])}, {m.text(a[2])}"),  # the repeat before the mask
        (a[4].start_byte, a[4].end_byte, "1"),                                # eight sums per repeat, side by side
        (second.args[2].start_byte, second.args[2].end_byte, str(repeats * BLOCK_SUMS_PER_REPEAT)),
        (second.args[5].start_byte, second.args[5].end_byte, "1"),            # the block sums are contiguous
    ]
    text = m.src
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new.encode() + text[end:]
    return text.decode("utf-8")


def block_then_whole_reduce(src: Sources, chip: ChipProfile, line: int | None = None) -> list[Candidate]:
    """Each slow pair (at `line`, the first WholeReduceSum's, when given) rewritten as BlockReduceSum
    then one WholeReduceSum. The second pass then reads eight times as many sums: the buffer
    between them must hold them, which the candidate's evaluation checks (the emulator faults on
    a write past a tensor)."""
    m = KernelModel(src.kernel)
    out = []
    for first in (c for c in m.calls if c.name == WHOLE):
        if line is not None and first.node.start_point[0] + 1 != line:
            continue
        found = _pair(m, first)
        if found is not None:
            second, repeats = found
            out.append(Candidate("block-then-whole-reduce", f"BlockReduceSum then one WholeReduceSum over "
                                 f"{repeats * BLOCK_SUMS_PER_REPEAT} block sums instead of two WholeReduceSum passes "
                                 f"(line {first.node.start_point[0] + 1})",
                                 {src.kernel_name: _rewritten(m, first, second, repeats)}, TAGS))
    return out
