// Broadcast (adv_api/pad), and its CANN 8 spelling BroadCast:
//   Broadcast / BroadCast<T, dim, axis, isReuseSource = false>(dst, src, dstShape[dim], srcShape[dim], [tmp])
//       numpy broadcasting for dim 1 ([1] -> [n]) and dim 2 (axis 0: [1, N] -> [M, N]; axis 1: [M, 1] -> [M, N]).
//
// What the device computes (asc-devkit impl/adv_api/detail/pad/broadcast/broadcast_common_impl.h,
// BroadCastCompute, the same at the first commit and at HEAD): srcShape counts only through its
// element count. Equal counts copy, a one-element source fills, and otherwise dim 2 reads
// dstShape alone: axis 1 repeats src[r] along row r of [dstShape[0], dstShape[1]], axis 0
// repeats src[0..dstShape[1]) in every row. No check compares srcShape with the doc's rule (the
// source 1 along `axis`), so a call against it runs: it is an api-misuse warning at the call,
// and the result is the device's. dim 1 with neither count is logged as an error on the device
// and writes nothing: an error here.
//
// The real implementation runs several vector instructions through a temporary buffer; this one
// writes the result directly and records one vector instruction, which is what the cost model needs.
#pragma once

#include "../../sage_sim/vec.h"

namespace AscendC {

namespace detail {

template <int32_t dim>
inline bool broadcast_shapes_documented(const uint32_t dstShape[dim], const uint32_t srcShape[dim], int32_t axis) {
    if (dim == 1) return srcShape[0] == 1;
    return axis == 0 ? srcShape[0] == 1 && srcShape[1] == dstShape[1] : srcShape[1] == 1 && srcShape[0] == dstShape[0];
}

template <typename T, int32_t dim, int32_t axis>
inline void broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(dim == 1 || dim == 2, "[dtype-unsupported] Broadcast supports dim = 1 or 2 on this chip");
    static_assert(axis == 0 || (dim == 2 && axis == 1), "[dtype-unsupported] Broadcast: axis must be 0 (or 1 with dim 2)");
    touch(loc);
    uint64_t rows = dim == 2 ? dstShape[0] : 1, cols = dim == 2 ? dstShape[1] : dstShape[0];
    uint64_t n_dst = rows * cols;
    uint64_t src_count = dim == 2 ? uint64_t(srcShape[0]) * srcShape[1] : srcShape[0];
    if (!broadcast_shapes_documented<dim>(dstShape, srcShape, axis)) {
        if (dim == 1 && src_count != 1 && src_count != n_dst) {
            fail("api-misuse", loc, "Broadcast<dim=1> from [%u] to [%u]: the source must be [1]; the device logs an "
                 "error and writes nothing", srcShape[0], dstShape[0]);
        }
        report("api-misuse", Severity::Warning, loc,
               "Broadcast<dim=%d, axis=%d> from [%u%s%u] to [%u%s%u]: the doc page wants the source 1 along axis %d "
               "and equal to the destination elsewhere; the device reads only the destination shape (%s), so the "
               "result is not a numpy broadcast of the source", dim, axis, srcShape[0], dim == 2 ? ", " : "",
               dim == 2 ? srcShape[1] : 0u, dstShape[0], dim == 2 ? ", " : "", dim == 2 ? dstShape[1] : 0u, axis,
               src_count == n_dst ? "equal element counts: a copy"
               : src_count == 1 ? "a one-element source: a fill"
               : axis == 1 ? "row r repeats src[r]" : "every row repeats src[0..cols)");
    }
    // The elements the device reads: all of them for a copy, one for a fill, else one per row
    // (axis 1) or per column (axis 0).
    uint64_t n_src = src_count == n_dst ? n_dst : src_count == 1 ? 1 : (axis == 1 ? rows : cols);
    vec_src(src, "Broadcast", n_src, loc);
    vec_dst(dst, "Broadcast", n_dst, loc);
    const T* s = src.data();
    T* d = dst.data();
    for (uint64_t r = 0; r < rows; ++r) {
        for (uint64_t c = 0; c < cols; ++c) {
            uint64_t i = r * cols + c;
            d[i] = src_count == n_dst ? s[i] : src_count == 1 ? s[0] : (axis == 1 ? s[r] : s[c]);
        }
    }
    ub_mark(dst.range(n_dst));
    trace_instr(Pipe::V, "Broadcast", dtype_name<T>(), uint32_t(n_dst), n_dst * sizeof(T), loc, dst.range(n_dst),
                src.range(n_src));
}

}  // namespace detail

template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
__aicore__ inline void Broadcast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                                 const uint32_t dstShape[dim], const uint32_t srcShape[dim],
                                 LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC) {
    (void)sharedTmpBuffer;
    detail::broadcast<T, dim, axis>(dstLocal, srcLocal, dstShape, srcShape, loc);
}

template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
__aicore__ inline void Broadcast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                                 const uint32_t dstShape[dim], const uint32_t srcShape[dim], SAGE_LOC) {
    detail::broadcast<T, dim, axis>(dstLocal, srcLocal, dstShape, srcShape, loc);
}

// The CANN 8 spelling.
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
__aicore__ inline void BroadCast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                                 const uint32_t dstShape[dim], const uint32_t srcShape[dim],
                                 LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC) {
    (void)sharedTmpBuffer;
    detail::broadcast<T, dim, axis>(dstLocal, srcLocal, dstShape, srcShape, loc);
}

template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
__aicore__ inline void BroadCast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                                 const uint32_t dstShape[dim], const uint32_t srcShape[dim], SAGE_LOC) {
    detail::broadcast<T, dim, axis>(dstLocal, srcLocal, dstShape, srcShape, loc);
}

}  // namespace AscendC
