// Broadcast (adv_api/pad), and its CANN 8 spelling BroadCast:
//   Broadcast / BroadCast<T, dim, axis, isReuseSource = false>(dst, src, dstShape[dim], srcShape[dim], [tmp])
//       numpy broadcasting for dim 1 ([1] -> [n]) and dim 2 (axis 0: [1, N] -> [M, N]; axis 1: [M, 1] -> [M, N]).
//
// The real implementation runs several vector instructions through a temporary buffer; this one
// writes the result directly and records one vector instruction, which is what the cost model needs.
#pragma once

#include "../../sage_sim/vec.h"

namespace AscendC {

namespace detail {

template <typename T, int32_t dim, int32_t axis>
inline void broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(dim == 1 || dim == 2, "[dtype-unsupported] Broadcast supports dim = 1 or 2 on this chip");
    static_assert(axis == 0 || (dim == 2 && axis == 1), "[dtype-unsupported] Broadcast: axis must be 0 (or 1 with dim 2)");
    touch(loc);
    uint64_t rows = dim == 2 ? dstShape[0] : 1, cols = dim == 2 ? dstShape[1] : dstShape[0];
    bool ok = dim == 1 ? srcShape[0] == 1
                       : (axis == 0 ? srcShape[0] == 1 && srcShape[1] == dstShape[1]
                                    : srcShape[1] == 1 && srcShape[0] == dstShape[0]);
    if (!ok) {
        fail("ub-out-of-bounds", loc,
             "Broadcast<dim=%d, axis=%d> from [%u%s%u] to [%u%s%u]: the source must be 1 along axis %d and equal "
             "to the destination elsewhere", dim, axis, srcShape[0], dim == 2 ? ", " : "", dim == 2 ? srcShape[1] : 0u,
             dstShape[0], dim == 2 ? ", " : "", dim == 2 ? dstShape[1] : 0u, axis);
    }
    uint64_t n_src = dim == 1 ? 1 : uint64_t(srcShape[0]) * srcShape[1];
    uint64_t n_dst = rows * cols;
    vec_src(src, "Broadcast", n_src, loc);
    vec_dst(dst, "Broadcast", n_dst, loc);
    const T* s = src.data();
    T* d = dst.data();
    for (uint64_t r = 0; r < rows; ++r) {
        for (uint64_t c = 0; c < cols; ++c) {
            d[r * cols + c] = dim == 1 ? s[0] : (axis == 0 ? s[c] : s[r]);
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
