// What the advanced (high-level) APIs share: the sharedTmpBuffer contract, the per-instruction
// trace of an API that the device runs as a sequence of vector instructions, and the row
// reductions the SoftMax and normalization families perform.
//
// An advanced API computes its result directly here, rounding where the device's instruction
// sequence rounds (to T after each instruction, or to float where the documented
// implementation casts up first), and records one trace record per instruction it issues, so
// the cost model and the hot-line view see Exp, Div and the reductions as the device runs them.
#pragma once

#include <cstring>
#include <initializer_list>
#include <vector>

#include "vec.h"

namespace sage {
namespace sim {

// A sharedTmpBuffer below the documented minimum: the device's API would write past it into
// whatever follows in UB, so it is an out-of-bounds access at the caller's line. `need` comes
// from the same function the host tiling library returns (GetXxxMinTmpSize), `formula` says
// how it was computed.
template <typename U>
inline void tmp_check(const AscendC::LocalTensor<U>& tmp, uint64_t need, const char* api, const char* formula,
                      SrcLoc loc) {
    tmp.check(api, 0, loc);
    uint64_t have = uint64_t(tmp.GetSize()) * sizeof(U);
    if (have < need) {
        fail("ub-out-of-bounds", loc,
             "%s's sharedTmpBuffer holds %llu bytes, but the API needs at least %llu (%s), in block %d: on the "
             "device it would write its intermediates past the buffer's end. Size it with the host tiling "
             "function's minimum (or more), and give TBuf::Get / InitBuffer that many bytes",
             api, (unsigned long long)have, (unsigned long long)need, formula, blk().idx);
    }
    // The device uses `need` bytes of it.
    tmp.check(api, need / sizeof(U), loc);
}

// The same contract for the forms with and without a sharedTmpBuffer: without one, the API pops
// the free UB above every buffer the kernel carved, which must hold `need` bytes.
inline void tmp_or_free_check(const AscendC::LocalTensor<uint8_t>* tmp, uint64_t need, const char* api,
                              const char* formula, SrcLoc loc) {
    if (tmp) return tmp_check(*tmp, need, api, formula, loc);
    const uint64_t free = uint64_t(rt().ub_bytes) - ub_free_base();
    if (free < need) {
        fail("ub-out-of-bounds", loc,
             "%s without a sharedTmpBuffer works in the free UB above the kernel's buffers: it needs %llu bytes "
             "(%s) and %llu are left, in block %d. Leave that much UB free, or pass a sharedTmpBuffer",
             api, (unsigned long long)need, formula, (unsigned long long)free, blk().idx);
    }
}

// The trace of an API that runs as the listed vector instructions, each over `count` elements
// of `dtype` (the width it computes in), writing `w` and reading `r0`/`r1`.
inline void trace_steps(std::initializer_list<const char*> steps, const char* dtype, uint32_t elem_bytes,
                        uint64_t count, SrcLoc loc, UbRange w, UbRange r0 = {}, UbRange r1 = {}) {
    for (const char* s : steps) trace_instr(Pipe::V, s, dtype, uint32_t(count), count * elem_bytes, loc, w, r0, r1);
}

// The same steps once per chunk of at most `chunk` elements (what one fill of the temporary
// buffer holds; 0: one chunk): a larger buffer issues fewer, longer instructions.
inline void trace_chunks(std::initializer_list<const char*> steps, const char* dtype, uint32_t elem_bytes,
                         uint64_t count, uint64_t chunk, SrcLoc loc, UbRange w, UbRange r0 = {}, UbRange r1 = {}) {
    if (!rt().tracing) return;
    if (chunk == 0 || chunk > count) chunk = count;
    for (uint64_t at = 0; at < count; at += chunk) {
        trace_steps(steps, dtype, elem_bytes, count - at < chunk ? count - at : chunk, loc, w, r0, r1);
    }
}

// The sum of row[0..n) in float as the vector unit reduces a row: each 64-float repeat is added
// lane-wise into a running 64-lane partial (the vadd of a repeat-by-repeat reduction), then the
// 64 lanes are added neighbour by neighbour, level by level (WholeReduceSum's order), every partial a float.
inline float row_sum(const float* row, uint64_t n) {
    float lanes[64] = {0};
    for (uint64_t i = 0; i < n; ++i) lanes[i % 64] += row[i];
    for (uint32_t w = 32; w >= 1; w >>= 1) {
        for (uint32_t i = 0; i < w; ++i) lanes[i] = lanes[2 * i] + lanes[2 * i + 1];
    }
    return lanes[0];
}

// isReuseSource: the API kept its intermediates in this source, so it holds no data afterwards:
// refill it with the UB's stale pattern and count it unwritten (a later read is reported).
template <typename T>
inline void reuse_clobber(const AscendC::LocalTensor<T>& src, uint64_t count) {
    memset(src.data(), kUbStale, count * sizeof(T));
    ub_clear(src.range(count));
}

inline float row_max(const float* row, uint64_t n) {
    float m = -INFINITY;
    for (uint64_t i = 0; i < n; ++i) m = row[i] > m ? row[i] : m;
    return m;
}

}  // namespace sim
}  // namespace sage

namespace sage {
namespace sim {

// The element-wise advanced APIs: dst[i] = f(a[i], b[i]) (b[i] = 0 without b) over `count`
// elements, f working in float on values it rounds itself where the device rounds; the result is
// stored as T. The caller traces the instructions.
template <typename T, class F>
inline void adv_map(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a,
                    const AscendC::LocalTensor<T>* b, uint64_t count, SrcLoc loc, F f) {
    touch(loc);
    vec_src(a, api, count, loc);
    if (b) vec_src(*b, api, count, loc);
    vec_dst(dst, api, count, loc);
    T* d = dst.data();
    const T* x = a.data();
    const T* y = b ? b->data() : nullptr;
    for (uint64_t i = 0; i < count; ++i) d[i] = down<T>(f(float(x[i]), y ? float(y[i]) : 0.0f));
    ub_mark(dst.range(count));
}

}  // namespace sim
}  // namespace sage
