// Reductions (kernel_operator_vec_reduce_intf.h), CANN 8 and CANN 9 names:
//   ReduceSum / ReduceMax / ReduceMin            whole tensor -> dst[0] (Max/Min: index in dst[1])
//   WholeReduceSum/Max/Min  = ReduceRepeat<T>     one result per repeat
//   BlockReduceSum/Max/Min  = ReduceDataBlock<T>  one result per 32-byte block (8 per repeat)
//   PairReduceSum           = ReducePairElem<SUM> one result per adjacent pair
//   RepeatReduceSum, GetReduceMaxMinCount / GetReduceRepeatMaxMinSpr, GetAccVal / GetReduceRepeatSumSpr
//
// Summation order is the documented one: inside a repeat (and inside a block) the unit adds
// neighbours pairwise, level by level, rounding every partial sum to T (a half partial past
// 65504 becomes inf in Inf/NaN mode, 65504 in saturation mode). Across repeats, ReduceSum
// reduces the per-repeat sums the same way again, 128 (half) or 64 (float) at a time, as the
// reference implementation's second step does. Max/Min keep the first index of the extreme.
#pragma once

#include <vector>

#include "../sage_sim/vec.h"

namespace AscendC {

enum class ReduceType { NONE = -1, SUM = 0, MAX, MIN };

}  // namespace AscendC

namespace sage {
namespace sim {

using AscendC::ReduceOrder;
using AscendC::ReduceType;

// Pairwise sum of v[0..n) (n a power of two), every partial rounded to T.
template <typename T>
inline float tree_sum(float* v, uint32_t n) {
    for (; n > 1; n >>= 1) {
        for (uint32_t i = 0; i < n / 2; ++i) v[i] = round_as<T>(v[2 * i] + v[2 * i + 1]);
    }
    return v[0];
}

// The per-repeat sums, reduced again one repeat's worth (epr) at a time, as ReduceSum's second
// step does (0 for none).
template <typename T>
inline float reduce_partials(std::vector<float>& partial, uint32_t epr) {
    float v[128];
    while (partial.size() > 1) {
        std::vector<float> next;
        for (size_t i = 0; i < partial.size(); i += epr) {
            for (uint32_t k = 0; k < epr; ++k) v[k] = i + k < partial.size() ? partial[i + k] : 0.0f;
            next.push_back(tree_sum<T>(v, epr));
        }
        partial.swap(next);
    }
    return partial.empty() ? 0.0f : partial[0];
}

// ReduceSum's order over x[0..n) in counter mode: a pairwise tree per repeat of epr, then the
// partials the same way (the advanced APIs that sum with ReduceSum or RepeatReduceSum use it).
template <typename T>
inline float repeat_tree_sum(const float* x, uint64_t n, uint32_t epr) {
    float v[128];
    std::vector<float> partial;
    for (uint64_t at = 0; at < n; at += epr) {
        for (uint32_t k = 0; k < epr; ++k) v[k] = at + k < n ? x[at + k] : 0.0f;
        partial.push_back(tree_sum<T>(v, epr));
    }
    return reduce_partials<T>(partial, epr);
}

inline bool better(ReduceType kind, float a, float best) { return kind == ReduceType::MAX ? a > best : a < best; }

// Stores an index in a T slot as the device does: the integer's low bits, T-sized.
template <typename T>
inline T index_bits(uint32_t idx) {
    T out;
    if constexpr (sizeof(T) == 2) {
        uint16_t b = uint16_t(idx);
        memcpy(&out, &b, 2);
    } else {
        memcpy(&out, &idx, 4);
    }
    return out;
}

// One repeat's elements, inactive ones as 0 (they do not change a sum).
template <typename T>
inline uint32_t gather_repeat(const Repeats& m, uint32_t r, const T* s, Lay l, float* v, bool* on) {
    uint64_t w[2];
    m.repeat_bits(r, &w[0], &w[1]);
    uint32_t n = 0;
    for (uint32_t k = 0; k < m.epr; ++k) {
        on[k] = (w[k >> 6] >> (k & 63)) & 1;
        v[k] = on[k] ? float(s[l.off(r, k)]) : 0.0f;
        n += on[k];
    }
    return n;
}

// WholeReduceSum/Max/Min and ReduceRepeat.
template <typename T>
inline void whole_reduce(const char* api, ReduceType kind, const AscendC::LocalTensor<T>& dst,
                         const AscendC::LocalTensor<T>& src, const Repeats& m, int32_t dstRepStride,
                         int32_t srcBlkStride, int32_t srcRepStride, ReduceOrder order, SrcLoc loc) {
    Lay ls = lay<T>(uint32_t(srcBlkStride), uint32_t(srcRepStride));
    uint64_t es = masked_check(src, m, ls, api, loc, "src");
    masked_check_init(src, m, ls, api, loc);
    const bool pair = kind != ReduceType::SUM &&
                      (order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE);
    const uint32_t out = pair ? 2 : 1;
    const uint64_t step = uint64_t(dstRepStride < 0 ? 0 : dstRepStride) * out;
    uint64_t ed = m.repeats ? (m.repeats - 1) * step + out : 0;
    dst.check(api, ed, loc, false);
    T* d = dst.data();
    const T* s = src.data();
    float v[128];
    bool on[128];
    double acc = 0;
    bool have_best = false;
    float best_all = 0;
    uint32_t best_all_idx = 0;
    for (uint32_t r = 0; r < m.repeats; ++r) {
        if (!gather_repeat(m, r, s, ls, v, on)) continue;
        T* o = d + r * step;
        if (kind == ReduceType::SUM) {
            float sum = tree_sum<T>(v, m.epr);
            o[0] = down<T>(sum);
            acc += sum;
            ub_mark(UbRange{uint32_t(dst.addr_ + r * step * sizeof(T)), uint32_t(sizeof(T))});
            continue;
        }
        uint32_t bi = 0;
        bool have = false;
        for (uint32_t k = 0; k < m.epr; ++k) {
            if (on[k] && (!have || better(kind, v[k], v[bi]))) bi = k, have = true;
        }
        T val = down<T>(v[bi]), idx = index_bits<T>(bi);
        switch (order) {
            case ReduceOrder::ORDER_VALUE_INDEX: o[0] = val, o[1] = idx; break;
            case ReduceOrder::ORDER_INDEX_VALUE: o[0] = idx, o[1] = val; break;
            case ReduceOrder::ORDER_ONLY_VALUE: o[0] = val; break;
            default: o[0] = idx; break;
        }
        ub_mark(UbRange{uint32_t(dst.addr_ + r * step * sizeof(T)), uint32_t(out * sizeof(T))});
        if (!have_best || better(kind, v[bi], best_all)) {
            have_best = true;
            best_all = v[bi];
            best_all_idx = r * m.epr + bi;
        }
    }
    auto& regs = vregs();
    if (kind == ReduceType::SUM) regs.acc = acc;
    regs.maxmin_value = best_all;
    regs.maxmin_index = best_all_idx;
    masked_trace(dst, ed, api, m, loc, src.range(es));
}

// BlockReduceSum/Max/Min and ReduceDataBlock: 8 results per repeat, one per 32-byte block.
template <typename T>
inline void block_reduce(const char* api, ReduceType kind, const AscendC::LocalTensor<T>& dst,
                         const AscendC::LocalTensor<T>& src, const Repeats& m, int32_t dstRepStride,
                         int32_t srcBlkStride, int32_t srcRepStride, SrcLoc loc) {
    constexpr uint32_t epb = 32 / sizeof(T);
    Lay ls = lay<T>(uint32_t(srcBlkStride), uint32_t(srcRepStride));
    uint64_t es = masked_check(src, m, ls, api, loc, "src");
    masked_check_init(src, m, ls, api, loc);
    const uint64_t step = uint64_t(dstRepStride < 0 ? 0 : dstRepStride) * 8;
    uint64_t ed = m.repeats ? (m.repeats - 1) * step + 8 : 0;
    dst.check(api, ed, loc, false);
    T* d = dst.data();
    const T* s = src.data();
    float v[128];
    bool on[128];
    for (uint32_t r = 0; r < m.repeats; ++r) {
        if (!gather_repeat(m, r, s, ls, v, on)) continue;
        for (uint32_t b = 0; b < 8; ++b) {
            float* bv = v + b * epb;
            bool* bon = on + b * epb;
            bool any = false;
            uint32_t bi = 0;
            for (uint32_t e = 0; e < epb; ++e) {
                if (bon[e] && (!any || better(kind, bv[e], bv[bi]))) bi = e;
                any |= bon[e];
            }
            if (!any) continue;
            uint64_t o = r * step + b;
            d[o] = down<T>(kind == ReduceType::SUM ? tree_sum<T>(bv, epb) : bv[bi]);
            ub_mark(UbRange{uint32_t(dst.addr_ + o * sizeof(T)), uint32_t(sizeof(T))});
        }
    }
    masked_trace(dst, ed, api, m, loc, src.range(es));
}

// PairReduceSum and ReducePairElem: element 2j + element 2j+1, half a repeat of results.
template <typename T>
inline void pair_reduce(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                        const Repeats& m, int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride,
                        SrcLoc loc) {
    Lay ls = lay<T>(uint32_t(srcBlkStride), uint32_t(srcRepStride));
    uint64_t es = masked_check(src, m, ls, api, loc, "src");
    masked_check_init(src, m, ls, api, loc);
    const uint32_t half_epr = m.epr / 2;
    const uint64_t step = uint64_t(dstRepStride < 0 ? 0 : dstRepStride) * half_epr;
    uint64_t ed = m.repeats ? (m.repeats - 1) * step + half_epr : 0;
    dst.check(api, ed, loc, false);
    T* d = dst.data();
    const T* s = src.data();
    float v[128];
    bool on[128];
    for (uint32_t r = 0; r < m.repeats; ++r) {
        if (!gather_repeat(m, r, s, ls, v, on)) continue;
        for (uint32_t j = 0; j < half_epr; ++j) {
            if (!on[2 * j] && !on[2 * j + 1]) continue;
            uint64_t o = r * step + j;
            d[o] = down<T>(v[2 * j] + v[2 * j + 1]);
            ub_mark(UbRange{uint32_t(dst.addr_ + o * sizeof(T)), uint32_t(sizeof(T))});
        }
    }
    masked_trace(dst, ed, api, m, loc, src.range(es));
}

// ReduceSum/Max/Min over the active elements of every repeat: the value in dst[0], for
// Max/Min with calIndex the index in dst[1] (r * srcRepStride blocks + position in the repeat).
template <typename T>
inline void reduce_all(const char* api, ReduceType kind, const AscendC::LocalTensor<T>& dst,
                       const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<T>& tmp, const Repeats& m,
                       uint32_t srcRepStride, bool calIndex, SrcLoc loc) {
    Lay ls = lay<T>(1, srcRepStride);
    uint64_t es = masked_check(src, m, ls, api, loc, "src");
    masked_check_init(src, m, ls, api, loc);
    tmp.check(api, 0, loc);
    const uint32_t out = kind != ReduceType::SUM && calIndex ? 2 : 1;
    dst.check(api, out, loc, false);
    const T* s = src.data();
    float v[128];
    bool on[128];
    std::vector<float> partial;
    bool have = false;
    float best = 0;
    uint32_t best_idx = 0;
    const uint32_t per_rep = srcRepStride * (32 / sizeof(T));
    for (uint32_t r = 0; r < m.repeats; ++r) {
        if (!gather_repeat(m, r, s, ls, v, on)) continue;
        if (kind == ReduceType::SUM) {
            partial.push_back(tree_sum<T>(v, m.epr));
            continue;
        }
        for (uint32_t k = 0; k < m.epr; ++k) {
            if (on[k] && (!have || better(kind, v[k], best))) {
                have = true;
                best = v[k];
                best_idx = r * per_rep + k;
            }
        }
    }
    T* d = dst.data();
    if (kind == ReduceType::SUM) {
        float sum = reduce_partials<T>(partial, m.epr);
        d[0] = down<T>(sum);
        vregs().acc = sum;
    } else {
        d[0] = down<T>(best);
        if (calIndex) d[1] = index_bits<T>(best_idx);
    }
    ub_mark(UbRange{dst.addr_, uint32_t(out * sizeof(T))});
    trace_instr(Pipe::V, api, dtype_name<T>(), uint32_t(m.active()), uint64_t(m.repeats) * 256, loc, dst.range(out),
                src.range(es));
}

inline Repeats counted(uint32_t epr, uint64_t count) {
    Repeats m;
    m.epr = epr;
    m.counter = true;
    m.count = count;
    m.repeats = uint32_t((count + epr - 1) / epr);
    return m;
}

}  // namespace sim
}  // namespace sage

namespace AscendC {

#define SAGE_RED_GATE(API) SAGE_DTYPE_GATE(API, T, (::sage::sim::one_of<T, half, float>()), "half, float")
#define SAGE_RED_OK (::sage::sim::one_of<T, half, float>())

// ---------------------------------------------------------------- ReduceSum / ReduceMax / ReduceMin

template <typename T, bool isSetMask = true>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const int32_t count, SAGE_LOC) {
    SAGE_RED_GATE("ReduceSum")
    if constexpr (SAGE_RED_OK) {
        using namespace sage::sim;
        touch(loc);
        uint64_t n = count_arg(count, "ReduceSum", loc);
        if (!isSetMask && vregs().counter) n = vregs().mask_lo;
        reduce_all("ReduceSum", ReduceType::SUM, dst, src, sharedTmpBuffer, counted(elems_per_repeat<T>(), n), 8,
                   false, loc);
        if (isSetMask) count_form_done();
    }
}

#define SAGE_REDUCE_MAXMIN(NAME, KIND)                                                                           \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                            \
                                const LocalTensor<T>& sharedTmpBuffer, const int32_t count, bool calIndex = 0,   \
                                SAGE_LOC) {                                                                      \
        SAGE_RED_GATE(#NAME)                                                                                     \
        if constexpr (SAGE_RED_OK) {                                                                             \
            using namespace sage::sim;                                                                           \
            touch(loc);                                                                                          \
            uint64_t n = count_arg(count, #NAME, loc);                                                           \
            reduce_all(#NAME, KIND, dst, src, sharedTmpBuffer, counted(elems_per_repeat<T>(), n), 8, calIndex,   \
                       loc);                                                                                     \
            count_form_done();                                                                                   \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                            \
                                const LocalTensor<T>& sharedTmpBuffer, const int32_t mask,                       \
                                const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = 0,         \
                                SAGE_LOC) {                                                                      \
        SAGE_RED_GATE(#NAME)                                                                                     \
        if constexpr (SAGE_RED_OK) {                                                                             \
            using namespace sage::sim;                                                                           \
            touch(loc);                                                                                          \
            auto m = repeats_from_len(elems_per_repeat<T>(), true, uint64_t(mask < 0 ? 0 : mask),                \
                                      uint32_t(repeatTime < 0 ? 0 : repeatTime));                                \
            reduce_all(#NAME, KIND, dst, src, sharedTmpBuffer, m, uint32_t(srcRepStride), calIndex, loc);        \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                            \
                                const LocalTensor<T>& sharedTmpBuffer, const uint64_t mask[],                    \
                                const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = 0,         \
                                SAGE_LOC) {                                                                      \
        SAGE_RED_GATE(#NAME)                                                                                     \
        if constexpr (SAGE_RED_OK) {                                                                             \
            using namespace sage::sim;                                                                           \
            touch(loc);                                                                                          \
            auto m = repeats_from_array(elems_per_repeat<T>(), true, mask,                                       \
                                        uint32_t(repeatTime < 0 ? 0 : repeatTime));                              \
            reduce_all(#NAME, KIND, dst, src, sharedTmpBuffer, m, uint32_t(srcRepStride), calIndex, loc);        \
        }                                                                                                        \
    }

SAGE_REDUCE_MAXMIN(ReduceMax, ReduceType::MAX)
SAGE_REDUCE_MAXMIN(ReduceMin, ReduceType::MIN)
#undef SAGE_REDUCE_MAXMIN

template <typename T>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const int32_t mask, const int32_t repeatTime,
                                 const int32_t srcRepStride, SAGE_LOC) {
    SAGE_RED_GATE("ReduceSum")
    if constexpr (SAGE_RED_OK) {
        using namespace sage::sim;
        touch(loc);
        auto m = repeats_from_len(elems_per_repeat<T>(), true, uint64_t(mask < 0 ? 0 : mask),
                                  uint32_t(repeatTime < 0 ? 0 : repeatTime));
        reduce_all("ReduceSum", ReduceType::SUM, dst, src, sharedTmpBuffer, m, uint32_t(srcRepStride), false, loc);
    }
}
template <typename T>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const uint64_t mask[],
                                 const int32_t repeatTime, const int32_t srcRepStride, SAGE_LOC) {
    SAGE_RED_GATE("ReduceSum")
    if constexpr (SAGE_RED_OK) {
        using namespace sage::sim;
        touch(loc);
        auto m = repeats_from_array(elems_per_repeat<T>(), true, mask, uint32_t(repeatTime < 0 ? 0 : repeatTime));
        reduce_all("ReduceSum", ReduceType::SUM, dst, src, sharedTmpBuffer, m, uint32_t(srcRepStride), false, loc);
    }
}

// ---------------------------------------------------------------- per-repeat reductions

// CANN 9: ReduceRepeat<ReduceType::SUM/MAX/MIN, T>(dst, src, mask, repeat, dstRepStride, srcBlkStride,
// srcRepStride[, order]). dstRepStride counts one repeat's results (1 element, or a (value,
// index) pair).
template <ReduceType reduceType, typename T, typename U, bool isSetMask = true>
__aicore__ inline void ReduceRepeat(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask,
                                    const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                    const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX,
                                    SAGE_LOC) {
    static_assert(std::is_same<T, U>::value, "[dtype-unsupported] ReduceRepeat needs dst and src of one dtype");
    SAGE_RED_GATE("ReduceRepeat")
    if constexpr (SAGE_RED_OK && std::is_same<T, U>::value) {
        using namespace sage::sim;
        touch(loc);
        auto m = repeats_from_len(elems_per_repeat<T>(), isSetMask, uint64_t(mask < 0 ? 0 : mask),
                                  uint32_t(repeatTime < 0 ? 0 : repeatTime));
        whole_reduce("ReduceRepeat", reduceType, dst, src, m, dstRepStride, srcBlkStride, srcRepStride, order, loc);
    }
}
template <ReduceType reduceType, typename T, typename U, bool isSetMask = true>
__aicore__ inline void ReduceRepeat(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t mask[],
                                    const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                    const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX,
                                    SAGE_LOC) {
    static_assert(std::is_same<T, U>::value, "[dtype-unsupported] ReduceRepeat needs dst and src of one dtype");
    SAGE_RED_GATE("ReduceRepeat")
    if constexpr (SAGE_RED_OK && std::is_same<T, U>::value) {
        using namespace sage::sim;
        touch(loc);
        auto m = repeats_from_array(elems_per_repeat<T>(), isSetMask, mask, uint32_t(repeatTime < 0 ? 0 : repeatTime));
        whole_reduce("ReduceRepeat", reduceType, dst, src, m, dstRepStride, srcBlkStride, srcRepStride, order, loc);
    }
}

// CANN 8: WholeReduceSum/Max/Min<T, isSetMask>(dst, src, mask, repeat, dstRepStride, srcBlkStride, srcRepStride).
#define SAGE_WHOLE_REDUCE(NAME, KIND, ORDER_PARAM, ORDER_ARG)                                                    \
    template <typename T, bool isSetMask = true>                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,        \
                                const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride, \
                                const int32_t srcRepStride ORDER_PARAM, SAGE_LOC) {                              \
        SAGE_RED_GATE(#NAME)                                                                                     \
        if constexpr (SAGE_RED_OK) {                                                                             \
            using namespace sage::sim;                                                                           \
            touch(loc);                                                                                          \
            auto m = repeats_from_len(elems_per_repeat<T>(), isSetMask, uint64_t(mask < 0 ? 0 : mask),           \
                                      uint32_t(repeatTime < 0 ? 0 : repeatTime));                                \
            whole_reduce(#NAME, KIND, dst, src, m, dstRepStride, srcBlkStride, srcRepStride, ORDER_ARG, loc);     \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],     \
                                const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride, \
                                const int32_t srcRepStride ORDER_PARAM, SAGE_LOC) {                              \
        SAGE_RED_GATE(#NAME)                                                                                     \
        if constexpr (SAGE_RED_OK) {                                                                             \
            using namespace sage::sim;                                                                           \
            touch(loc);                                                                                          \
            auto m = repeats_from_array(elems_per_repeat<T>(), isSetMask, mask,                                  \
                                        uint32_t(repeatTime < 0 ? 0 : repeatTime));                              \
            whole_reduce(#NAME, KIND, dst, src, m, dstRepStride, srcBlkStride, srcRepStride, ORDER_ARG, loc);     \
        }                                                                                                        \
    }

#define SAGE_ORDER_PARAM , ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX
SAGE_WHOLE_REDUCE(WholeReduceSum, ReduceType::SUM, , ReduceOrder::ORDER_ONLY_VALUE)
SAGE_WHOLE_REDUCE(WholeReduceMax, ReduceType::MAX, SAGE_ORDER_PARAM, order)
SAGE_WHOLE_REDUCE(WholeReduceMin, ReduceType::MIN, SAGE_ORDER_PARAM, order)
#undef SAGE_ORDER_PARAM
#undef SAGE_WHOLE_REDUCE

// The older spelling of WholeReduceSum with a continuous mask and a dst block stride the
// unit ignores.
template <typename T, bool isSetMask = true>
__aicore__ inline void RepeatReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                                       const int32_t mask, const int32_t dstBlkStride, const int32_t srcBlkStride,
                                       const int32_t dstRepStride, const int32_t srcRepStride, SAGE_LOC) {
    SAGE_RED_GATE("RepeatReduceSum")
    if constexpr (SAGE_RED_OK) {
        using namespace sage::sim;
        touch(loc);
        (void)dstBlkStride;
        auto m = repeats_from_len(elems_per_repeat<T>(), isSetMask, uint64_t(mask < 0 ? 0 : mask),
                                  uint32_t(repeatTime < 0 ? 0 : repeatTime));
        whole_reduce("RepeatReduceSum", ReduceType::SUM, dst, src, m, dstRepStride, srcBlkStride, srcRepStride,
                     ReduceOrder::ORDER_ONLY_VALUE, loc);
    }
}

// CANN 9 ReduceDataBlock<ReduceType>(dst, src, mask, repeat, ...); CANN 8 BlockReduceSum/Max/Min
// take the repeat BEFORE the mask. dstRepStride counts one repeat's 8 results.
template <ReduceType reduceType, typename T, typename U, bool isSetMask = true>
__aicore__ inline void ReduceDataBlock(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask,
                                       const int32_t repeatTime, const int32_t dstRepStride,
                                       const int32_t srcBlkStride, const int32_t srcRepStride, SAGE_LOC) {
    static_assert(std::is_same<T, U>::value, "[dtype-unsupported] ReduceDataBlock needs dst and src of one dtype");
    SAGE_RED_GATE("ReduceDataBlock")
    if constexpr (SAGE_RED_OK && std::is_same<T, U>::value) {
        using namespace sage::sim;
        touch(loc);
        auto m = repeats_from_len(elems_per_repeat<T>(), isSetMask, uint64_t(mask < 0 ? 0 : mask),
                                  uint32_t(repeatTime < 0 ? 0 : repeatTime));
        block_reduce("ReduceDataBlock", reduceType, dst, src, m, dstRepStride, srcBlkStride, srcRepStride, loc);
    }
}
template <ReduceType reduceType, typename T, typename U, bool isSetMask = true>
__aicore__ inline void ReduceDataBlock(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t mask[],
                                       const int32_t repeatTime, const int32_t dstRepStride,
                                       const int32_t srcBlkStride, const int32_t srcRepStride, SAGE_LOC) {
    static_assert(std::is_same<T, U>::value, "[dtype-unsupported] ReduceDataBlock needs dst and src of one dtype");
    SAGE_RED_GATE("ReduceDataBlock")
    if constexpr (SAGE_RED_OK && std::is_same<T, U>::value) {
        using namespace sage::sim;
        touch(loc);
        auto m = repeats_from_array(elems_per_repeat<T>(), isSetMask, mask, uint32_t(repeatTime < 0 ? 0 : repeatTime));
        block_reduce("ReduceDataBlock", reduceType, dst, src, m, dstRepStride, srcBlkStride, srcRepStride, loc);
    }
}

#define SAGE_BLOCK_REDUCE(NAME, KIND)                                                                            \
    template <typename T, bool isSetMask = true>                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,  \
                                const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,      \
                                const int32_t srcRepStride, SAGE_LOC) {                                          \
        SAGE_RED_GATE(#NAME)                                                                                     \
        if constexpr (SAGE_RED_OK) {                                                                             \
            using namespace sage::sim;                                                                           \
            touch(loc);                                                                                          \
            auto m = repeats_from_len(elems_per_repeat<T>(), isSetMask, uint64_t(mask < 0 ? 0 : mask),           \
                                      uint32_t(repeatTime < 0 ? 0 : repeatTime));                                \
            block_reduce(#NAME, KIND, dst, src, m, dstRepStride, srcBlkStride, srcRepStride, loc);               \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,  \
                                const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,   \
                                const int32_t srcRepStride, SAGE_LOC) {                                          \
        SAGE_RED_GATE(#NAME)                                                                                     \
        if constexpr (SAGE_RED_OK) {                                                                             \
            using namespace sage::sim;                                                                           \
            touch(loc);                                                                                          \
            auto m = repeats_from_array(elems_per_repeat<T>(), isSetMask, mask,                                  \
                                        uint32_t(repeatTime < 0 ? 0 : repeatTime));                              \
            block_reduce(#NAME, KIND, dst, src, m, dstRepStride, srcBlkStride, srcRepStride, loc);               \
        }                                                                                                        \
    }
SAGE_BLOCK_REDUCE(BlockReduceSum, ReduceType::SUM)
SAGE_BLOCK_REDUCE(BlockReduceMax, ReduceType::MAX)
SAGE_BLOCK_REDUCE(BlockReduceMin, ReduceType::MIN)
#undef SAGE_BLOCK_REDUCE

// CANN 8 PairReduceSum(dst, src, repeat, mask, ...); CANN 9 ReducePairElem<ReduceType::SUM>(dst,
// src, mask, repeat, ...). dstRepStride counts one repeat's results (half a repeat).
template <typename T, bool isSetMask = true>
__aicore__ inline void PairReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                                     const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,
                                     const int32_t srcRepStride, SAGE_LOC) {
    SAGE_RED_GATE("PairReduceSum")
    if constexpr (SAGE_RED_OK) {
        using namespace sage::sim;
        touch(loc);
        auto m = repeats_from_len(elems_per_repeat<T>(), isSetMask, uint64_t(mask < 0 ? 0 : mask),
                                  uint32_t(repeatTime < 0 ? 0 : repeatTime));
        pair_reduce("PairReduceSum", dst, src, m, dstRepStride, srcBlkStride, srcRepStride, loc);
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void PairReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                                     const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,
                                     const int32_t srcRepStride, SAGE_LOC) {
    SAGE_RED_GATE("PairReduceSum")
    if constexpr (SAGE_RED_OK) {
        using namespace sage::sim;
        touch(loc);
        auto m = repeats_from_array(elems_per_repeat<T>(), isSetMask, mask, uint32_t(repeatTime < 0 ? 0 : repeatTime));
        pair_reduce("PairReduceSum", dst, src, m, dstRepStride, srcBlkStride, srcRepStride, loc);
    }
}
template <ReduceType reduceType, typename T, typename U, bool isSetMask = true>
__aicore__ inline void ReducePairElem(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride,
                                      const int32_t srcBlkStride, const int32_t srcRepStride, SAGE_LOC) {
    static_assert(std::is_same<T, U>::value && reduceType == ReduceType::SUM,
                  "[dtype-unsupported] ReducePairElem takes ReduceType::SUM with dst and src of one dtype");
    SAGE_RED_GATE("ReducePairElem")
    if constexpr (SAGE_RED_OK && std::is_same<T, U>::value) {
        using namespace sage::sim;
        touch(loc);
        auto m = repeats_from_len(elems_per_repeat<T>(), isSetMask, uint64_t(mask < 0 ? 0 : mask),
                                  uint32_t(repeatTime < 0 ? 0 : repeatTime));
        pair_reduce("ReducePairElem", dst, src, m, dstRepStride, srcBlkStride, srcRepStride, loc);
    }
}
template <ReduceType reduceType, typename T, typename U, bool isSetMask = true>
__aicore__ inline void ReducePairElem(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t mask[],
                                      const int32_t repeatTime, const int32_t dstRepStride,
                                      const int32_t srcBlkStride, const int32_t srcRepStride, SAGE_LOC) {
    static_assert(std::is_same<T, U>::value && reduceType == ReduceType::SUM,
                  "[dtype-unsupported] ReducePairElem takes ReduceType::SUM with dst and src of one dtype");
    SAGE_RED_GATE("ReducePairElem")
    if constexpr (SAGE_RED_OK && std::is_same<T, U>::value) {
        using namespace sage::sim;
        touch(loc);
        auto m = repeats_from_array(elems_per_repeat<T>(), isSetMask, mask, uint32_t(repeatTime < 0 ? 0 : repeatTime));
        pair_reduce("ReducePairElem", dst, src, m, dstRepStride, srcBlkStride, srcRepStride, loc);
    }
}

// ---------------------------------------------------------------- reduce special registers

// The extreme the last WholeReduceMax/Min (ReduceRepeat MAX/MIN) found over all its repeats,
// and its position (repeat * elements-per-repeat + position in the repeat) as integer bits.
template <typename T>
__aicore__ inline void GetReduceRepeatMaxMinSpr(T& maxMinValue, T& maxMinIndex, SAGE_LOC) {
    sage::sim::touch(loc);
    maxMinValue = T(sage::sim::vregs().maxmin_value);
    maxMinIndex = sage::sim::index_bits<T>(sage::sim::vregs().maxmin_index);
}
template <typename T>
__aicore__ inline void GetReduceRepeatMaxMinSpr(T& maxMinValue, SAGE_LOC) {
    sage::sim::touch(loc);
    maxMinValue = T(sage::sim::vregs().maxmin_value);
}
template <typename T>
__aicore__ inline void GetReduceMaxMinCount(T& maxMinValue, T& maxMinIndex, SAGE_LOC) {
    GetReduceRepeatMaxMinSpr(maxMinValue, maxMinIndex, loc);
}
template <typename T>
__aicore__ inline void GetReduceMaxMinCount(T& maxMinValue, SAGE_LOC) {
    GetReduceRepeatMaxMinSpr(maxMinValue, loc);
}
// The sum the last WholeReduceSum or ReduceSum accumulated.
template <typename T>
__aicore__ inline T GetReduceRepeatSumSpr(SAGE_LOC) {
    sage::sim::touch(loc);
    return T(float(sage::sim::vregs().acc));
}
template <typename T>
__aicore__ inline T GetAccVal(SAGE_LOC) {
    return GetReduceRepeatSumSpr<T>(loc);
}

#undef SAGE_RED_GATE
#undef SAGE_RED_OK

}  // namespace AscendC
