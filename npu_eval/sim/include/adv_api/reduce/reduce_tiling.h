// Host tiling for the pattern reductions (asc-devkit include/adv_api/reduce/reduce_tiling.h):
// GetReduceSumMaxMinTmpSize, GetReduceMeanMaxMinTmpSize and the Max, Min, Prod, Any and All ones. Also included by reduce.h: the kernel
// checks its sharedTmpBuffer (or the free UB the framework form pops) against the same sizes.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/归约操作/<Api>接口/GetReduce<Api>MaxMinTmpSize.md
// (maximum = minimum; the pages give no formula: the sizes are the ones CANN's tiling computes,
// which follow the binary-tree halving the kernels run, see reduce.h).
#pragma once

#include <cstdint>
#include <vector>

#include "../utils/types.h"

namespace AscendC {

namespace reduce_sizes {

// Which temporary-space rule an API follows (Max/Min and the float Any/All share one).
enum class Rule : uint32_t { Compare, SumMean, AnyAllByte, Prod };

// The largest power of two <= n: the width the binary tree folds the tail onto.
inline uint32_t pow2_floor(uint32_t n) {
    uint32_t k = 1;
    while (n > 1) {
        k <<= 1;
        n >>= 1;
    }
    return k;
}

// The tree's first level width: the power of two <= n, halved when n is that power itself
// (the first Add then adds the two halves).
inline uint32_t first_level(uint32_t n, uint32_t halve_if) {
    uint32_t k = pow2_floor(n);
    if (k == n && halve_if > 1) k >>= 1;
    return k;
}

inline uint32_t align_up(uint32_t v, uint32_t to) { return (v + to - 1) / to * to; }

// Bytes of temporary space for a {first, last} source (row pitch: last padded to 32 bytes).
inline uint32_t tmp_bytes(Rule rule, uint32_t first, uint32_t last, uint32_t typeSize, bool ra, bool reuse) {
    if (rule == Rule::AnyAllByte && !ra) {  // uint8 AR: a half copy of a row plus one block per row
        return align_up(last, 32) * 2 + first * 32;
    }
    if (rule == Rule::Prod && reuse) return ra ? 0 : 256;
    if (reuse) return 0;
    if (ra) {  // RA: the first tree level, k rows of the padded row
        uint32_t k = first_level(first, first);
        uint32_t rowBytes = rule == Rule::SumMean ? align_up(last, 8) * 4 : align_up(last * typeSize, 32);
        return k * rowBytes;
    }
    if (rule == Rule::SumMean) return last <= 64 ? 0 : first * first_level(last, first) * 4;
    if (rule == Rule::Prod) {
        uint32_t k = first_level(last, first);
        return ((k > 8 ? k : 8) + first * 8) * 4 + 256;
    }
    // Compare rule (Max/Min, float Any/All): one block or one repeat of partials per row.
    const uint32_t perBlk = 32 / typeSize, perRep = 256 / typeSize;
    if (last <= perBlk) return 0;
    return first * (last < perRep ? perBlk : perRep) * typeSize;
}

inline uint32_t type_size(TensorDataType t) {
    return t == ge::DT_FLOAT || t == ge::DT_INT32 ? 4u : t == ge::DT_FLOAT16 ? 2u : 1u;
}

// The host functions' shared body: the real ones assert (and return without writing) on a shape
// that is not 2-D, a pattern other than AR/RA, isSrcInnerPad false, an empty axis or a dtype the
// API does not take on this chip.
inline void host(Rule rule, const TensorShape& shape, TensorDataType dt, ReducePattern pattern, bool pad, bool reuse,
                 bool dtypeOk, uint32_t& maxValue, uint32_t& minValue) {
    const std::vector<int64_t> dims = shape.GetDims();
    if (!dtypeOk || dims.size() != 2 || !pad || (pattern != ReducePattern::AR && pattern != ReducePattern::RA)) return;
    if (dims[0] <= 0 || dims[1] <= 0) return;
    maxValue = minValue = tmp_bytes(rule, uint32_t(dims[0]), uint32_t(dims[1]), type_size(dt),
                                    pattern == ReducePattern::RA, reuse);
}

}  // namespace reduce_sizes

// One host function per API: its temporary-space rule and the dtypes it takes on Atlas A2.
#define SAGE_REDUCE_HOST(NAME, RULE, DTYPES_OK)                                                                   \
    inline void NAME(const TensorShape& srcShape, const TensorDataType dataType, ReducePattern pattern,           \
                     bool isSrcInnerPad, bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {            \
        using reduce_sizes::Rule;                                                                                 \
        reduce_sizes::host(RULE, srcShape, dataType, pattern, isSrcInnerPad, isReuseSource, DTYPES_OK, maxValue,  \
                           minValue);                                                                             \
    }
#define SAGE_F32 (dataType == ge::DT_FLOAT)
#define SAGE_BYTE_RULE (dataType == ge::DT_UINT8 ? Rule::AnyAllByte : Rule::Compare)
SAGE_REDUCE_HOST(GetReduceSumMaxMinTmpSize, Rule::SumMean, SAGE_F32)
SAGE_REDUCE_HOST(GetReduceMeanMaxMinTmpSize, Rule::SumMean, SAGE_F32)
SAGE_REDUCE_HOST(GetReduceProdMaxMinTmpSize, Rule::Prod, SAGE_F32)
SAGE_REDUCE_HOST(GetReduceMaxMaxMinTmpSize, Rule::Compare, SAGE_F32 || dataType == ge::DT_FLOAT16)
SAGE_REDUCE_HOST(GetReduceMinMaxMinTmpSize, Rule::Compare, SAGE_F32 || dataType == ge::DT_FLOAT16)
SAGE_REDUCE_HOST(GetReduceAnyMaxMinTmpSize, SAGE_BYTE_RULE, SAGE_F32 || dataType == ge::DT_UINT8)
SAGE_REDUCE_HOST(GetReduceAllMaxMinTmpSize, SAGE_BYTE_RULE, SAGE_F32 || dataType == ge::DT_UINT8)
#undef SAGE_F32
#undef SAGE_BYTE_RULE
#undef SAGE_REDUCE_HOST

}  // namespace AscendC
