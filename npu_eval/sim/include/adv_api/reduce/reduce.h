// The pattern reductions (adv_api/reduce/reduce.h), Atlas A2 (910B) forms, from asc-devkit
// docs/zh/api/SIMD-API/高阶API/归约操作/<Api>接口/<Api>.md:
//
//   ReduceXxx<T, Pattern::Reduce::AR | RA, isReuseSource = false>(dst, src, [sharedTmpBuffer,] srcShape, srcInnerPad)
//       srcShape = {first, last}: `first` rows of `last` elements, each row padded to 32 bytes in UB
//       (srcInnerPad must be true on 910B). AR reduces each row (dst holds `first` values), RA each
//       column (dst holds `last`).
//   ReduceSum, ReduceMean, ReduceProd: float.  ReduceMax, ReduceMin: half, float.
//   ReduceAny, ReduceAll: float or uint8_t, inputs 0 or 1 (logical or / and).
//
// Order and precision. Max, Min, Any and All are exact in any order. ReduceSum, ReduceMean and ReduceProd run as a
// binary tree in float, the one the host tiling's sizes describe (reduce_tiling.h): the part past
// the largest power of two k <= n is folded onto the first k (one Add), then the width is halved
// (Add of the two halves) level by level; an AR row ends, once 64 wide or less, in
// WholeReduceSum's neighbour-pair tree (sage_sim/adv.h row_sum), ReduceProd halves down to one. ReduceMean
// multiplies the sum by the float 1/n (Muls). So a long row's sum differs from a sequential float
// sum (and from float64 torch) in its last bits.
//
// isReuseSource: the device keeps its intermediates in src, so after the call src holds no data:
// here it is refilled with the UB's stale pattern and counts as unwritten (a later read of it is
// reported).
#pragma once

#include <cmath>
#include <type_traits>
#include <vector>

#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "../../sage_sim/vec.h"
#include "reduce_tiling.h"

namespace AscendC {

namespace Pattern {
namespace Reduce {
struct AR {};
struct RA {};
}  // namespace Reduce
}  // namespace Pattern

namespace detail {

enum class RedOp { Sum, Average, Prod, Max, Min, Any, All };

struct RedInfo {
    const char* api;
    const char* host_fn;
    reduce_sizes::Rule rule;
    const char* fold;   // the element-wise instruction of the tree levels
    const char* whole;  // the instruction that ends an AR row (nullptr: none)
};

inline RedInfo red_info(RedOp op, bool byte) {
    using R = reduce_sizes::Rule;
    switch (op) {
        case RedOp::Sum: return {"ReduceSum", "GetReduceSumMaxMinTmpSize", R::SumMean, "Add", "WholeReduceSum"};
        case RedOp::Average: return {"ReduceMean", "GetReduceMeanMaxMinTmpSize", R::SumMean, "Add", "WholeReduceSum"};
        case RedOp::Prod: return {"ReduceProd", "GetReduceProdMaxMinTmpSize", R::Prod, "Mul", nullptr};
        case RedOp::Max: return {"ReduceMax", "GetReduceMaxMaxMinTmpSize", R::Compare, "Max", "WholeReduceMax"};
        case RedOp::Min: return {"ReduceMin", "GetReduceMinMaxMinTmpSize", R::Compare, "Min", "WholeReduceMin"};
        case RedOp::Any:
            return {"ReduceAny", "GetReduceAnyMaxMinTmpSize", byte ? R::AnyAllByte : R::Compare, "Max",
                    "WholeReduceMax"};
        case RedOp::All:
            return {"ReduceAll", "GetReduceAllMaxMinTmpSize", byte ? R::AnyAllByte : R::Compare, "Min",
                    "WholeReduceMin"};
    }
    return {};
}

inline float red_apply(RedOp op, float a, float b) {
    switch (op) {
        case RedOp::Sum:
        case RedOp::Average: return a + b;
        case RedOp::Prod: return a * b;
        case RedOp::Max:
        case RedOp::Any: return a > b ? a : b;
        case RedOp::Min:
        case RedOp::All: return a < b ? a : b;
    }
    return a;
}

// Reduces w[0..n) in place by the binary tree described above; `stop`: the width at which the
// tree hands over to WholeReduceSum (64), or 1.
inline float red_tree(RedOp op, std::vector<float>& w, uint32_t n, uint32_t stop) {
    uint32_t width = n;
    if (n > stop) {
        uint32_t k = reduce_sizes::pow2_floor(n);
        if (k == n) k >>= 1;
        for (uint32_t j = 0; j + k < n; ++j) w[j] = red_apply(op, w[j], w[j + k]);
        width = k;
        while (width > stop) {
            width >>= 1;
            for (uint32_t j = 0; j < width; ++j) w[j] = red_apply(op, w[j], w[j + width]);
        }
    }
    if (op == RedOp::Sum || op == RedOp::Average) return sage::sim::row_sum(w.data(), width);
    float r = w[0];
    for (uint32_t j = 1; j < width; ++j) r = red_apply(op, r, w[j]);
    return r;
}

// The vector instructions the tree issues over `lines` independent reductions of n each.
inline void red_trace(const RedInfo& info, const char* dt, uint32_t esize, bool ar, uint32_t lines, uint32_t n,
                      sage::sim::SrcLoc loc, sage::sim::UbRange w, sage::sim::UbRange r) {
    using namespace sage::sim;
    const uint32_t stop = ar && info.whole ? 64 : 1;
    uint32_t width = n;
    if (n > stop) {
        uint32_t k = reduce_sizes::pow2_floor(n);
        if (k == n) k >>= 1;
        trace_steps({info.fold}, dt, esize, uint64_t(lines) * (n - k), loc, w, r);
        for (width = k; width > stop;) {
            width >>= 1;
            trace_steps({info.fold}, dt, esize, uint64_t(lines) * width, loc, w, w);
        }
    }
    if (ar && info.whole) trace_steps({info.whole}, dt, esize, uint64_t(lines) * width, loc, w, r);
}

template <typename T>
inline void reduce_run(RedOp op, bool ra, bool reuse, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                       const LocalTensor<uint8_t>* tmp, const uint32_t srcShape[], bool srcInnerPad,
                       sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const RedInfo info = red_info(op, std::is_same<T, uint8_t>::value);
    touch(loc);
    if (!srcInnerPad) {
        fail("api-misuse", loc,
             "%s with srcInnerPad false: on Atlas A2 it must be true, the rows padded to 32 bytes in UB "
             "(inner = (n * sizeof(T) + 31) / 32 * 32 / sizeof(T))", info.api);
    }
    const uint32_t first = srcShape[0], last = srcShape[1];
    if (first == 0 || last == 0) {
        fail("api-misuse", loc, "%s with srcShape {%u, %u}: both axes must be at least 1", info.api, first, last);
    }
    const uint32_t pitch = reduce_sizes::align_up(last, 32 / uint32_t(sizeof(T)));
    const uint32_t need = reduce_sizes::tmp_bytes(info.rule, first, last, sizeof(T), ra, reuse);
    advmath::take_tmp(info.api, info.host_fn, tmp, first * last, need, loc);
    const uint64_t total = uint64_t(first) * pitch;
    const uint32_t outs = ra ? last : first, n = ra ? first : last;
    vec_src(src, info.api, total, loc);
    vec_dst(dst, info.api, outs, loc);
    const T* s = src.data();
    T* d = dst.data();
    std::vector<float> w(n);
    const uint32_t stop = (!ra && (op == RedOp::Sum || op == RedOp::Average)) ? 64 : 1;
    for (uint32_t o = 0; o < outs; ++o) {
        for (uint32_t i = 0; i < n; ++i) w[i] = float(s[ra ? uint64_t(i) * pitch + o : uint64_t(o) * pitch + i]);
        float v = red_tree(op, w, n, stop);
        if (op == RedOp::Average) v *= 1.0f / float(int32_t(n));
        d[o] = T(v);
    }
    ub_mark(dst.range(outs));
    red_trace(info, dtype_name<T>(), sizeof(T), !ra, ra ? last : first, n, loc, dst.range(outs), src.range(total));
    if (op == RedOp::Average) trace_steps({"Muls"}, dtype_name<T>(), sizeof(T), outs, loc, dst.range(outs));
    if (reuse) reuse_clobber(src, total);
}

template <class pattern>
constexpr bool red_pattern_ok() {
    return std::is_same<pattern, Pattern::Reduce::AR>::value || std::is_same<pattern, Pattern::Reduce::RA>::value;
}

}  // namespace detail

// One pair of overloads per API (with a sharedTmpBuffer; the framework form takes it from free UB).
#define SAGE_REDUCE_API(NAME, OP, DTYPES_OK, DTYPES)                                                               \
    template <class T, class pattern, bool isReuseSource = false>                                                  \
    __aicore__ inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                 \
                                const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t srcShape[],            \
                                bool srcInnerPad, SAGE_LOC) {                                                      \
        static_assert(DTYPES_OK, "[dtype-unsupported] " #NAME " takes " DTYPES " on Atlas A2");                    \
        static_assert(detail::red_pattern_ok<pattern>(), #NAME " takes Pattern::Reduce::AR or RA");                \
        detail::reduce_run<T>(detail::RedOp::OP, std::is_same<pattern, Pattern::Reduce::RA>::value, isReuseSource, \
                              dstTensor, srcTensor, &sharedTmpBuffer, srcShape, srcInnerPad, loc);                 \
    }                                                                                                              \
    template <class T, class pattern, bool isReuseSource = false>                                                  \
    __aicore__ inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                 \
                                const uint32_t srcShape[], bool srcInnerPad, SAGE_LOC) {                           \
        static_assert(DTYPES_OK, "[dtype-unsupported] " #NAME " takes " DTYPES " on Atlas A2");                    \
        static_assert(detail::red_pattern_ok<pattern>(), #NAME " takes Pattern::Reduce::AR or RA");                \
        detail::reduce_run<T>(detail::RedOp::OP, std::is_same<pattern, Pattern::Reduce::RA>::value, isReuseSource, \
                              dstTensor, srcTensor, nullptr, srcShape, srcInnerPad, loc);                          \
    }

#define SAGE_RED_F32 std::is_same<T, float>::value
#define SAGE_RED_F16_F32 (std::is_same<T, half>::value || std::is_same<T, float>::value)
#define SAGE_RED_F32_U8 (std::is_same<T, float>::value || std::is_same<T, uint8_t>::value)
SAGE_REDUCE_API(ReduceSum, Sum, SAGE_RED_F32, "float")
SAGE_REDUCE_API(ReduceMean, Average, SAGE_RED_F32, "float")
SAGE_REDUCE_API(ReduceProd, Prod, SAGE_RED_F32, "float")
SAGE_REDUCE_API(ReduceMax, Max, SAGE_RED_F16_F32, "half or float")
SAGE_REDUCE_API(ReduceMin, Min, SAGE_RED_F16_F32, "half or float")
SAGE_REDUCE_API(ReduceAny, Any, SAGE_RED_F32_U8, "float or uint8_t")
SAGE_REDUCE_API(ReduceAll, All, SAGE_RED_F32_U8, "float or uint8_t")
#undef SAGE_RED_F32
#undef SAGE_RED_F16_F32
#undef SAGE_RED_F32_U8
#undef SAGE_REDUCE_API

}  // namespace AscendC
