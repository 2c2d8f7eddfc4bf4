"""Kernel entries found by tree-sitter in every form real code declares them (DESIGN section 3)."""

from __future__ import annotations

from sage_npu.npu_eval.signature import find_entries

SOURCE = b"""\
#include "kernel_operator.h"
__aicore__ inline void helper(GM_ADDR x) {}
__global__ __vector__ void add_custom(__gm__ uint8_t* x, __gm__ uint8_t* y, uint32_t n) { }
namespace ops {
__global__ __aicore__ void neg(GM_ADDR x) {}
}
extern "C" __global__ __aicore__ void classic(GM_ADDR x, GM_ADDR tiling) { GET_TILING_DATA(t, tiling); }
template <int N, typename T>
__global__ __aicore__ void tmpl(GM_ADDR x) {}
"""


def test_every_entry_form_is_found_and_helpers_are_not():
    found = {e.qualified: e for e in find_entries(SOURCE)}
    assert list(found) == ["add_custom", "ops::neg", "classic", "tmpl"]
    plain = found["add_custom"]
    assert (plain.line, plain.extern_c, plain.template) == (3, False, None)
    assert [(p.type, p.name, p.pointer) for p in plain.params] == [
        ("uint8_t", "x", True), ("uint8_t", "y", True), ("uint32_t", "n", False)]
    assert found["classic"].extern_c and found["classic"].has_gm_tiling
    assert found["tmpl"].template == "<int N, typename T>" and found["tmpl"].line == 9
