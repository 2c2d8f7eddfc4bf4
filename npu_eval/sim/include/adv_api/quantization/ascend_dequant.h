// AscendDequant (adv_api/quantization, asc-devkit include/adv_api/quantization/ascend_dequant.h):
// int32 -> half, bfloat16 or float, per channel (a deqScale tensor) or per tensor (a scalar).
//
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/量化操作/AscendDequant.md: src [m, n] (n int32
// elements a row, 32-byte aligned); in each row the first calCount elements are cast to float,
// multiplied in float by deqScale[0..calCount) (or the scalar) and cast to dstT, rounding to
// nearest even; dst rows are n rounded up to 32 bytes of dstT, and their elements past calCount
// are left as they were ("不确定的值": reading them is an uninitialized read). A uint64_t deqScale
// carries the float scale in its low 32 bits. DEQUANT_WITH_SINGLE_ROW (the default) reads
// {1, n, calCount} as {n / calCount, calCount, calCount} when calCount fills whole 32-byte blocks of
// dstT and divides n. The calCount forms dequantize the first calCount elements as one row. The
// temporary buffer (sharedTmpBuffer or the free UB) must hold GetAscendDequantMaxMinTmpSize's
// minimum for [m, n]. PER_TOKEN / PER_GROUP are Ascend 950 only.
#pragma once

#include <cstring>

#include "../../basic_api/kernel_operator_vec_vconv_intf.h"
#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "ascend_dequant_tiling.h"

namespace AscendC {

#ifndef SAGE_DEQUANT_MODE
#define SAGE_DEQUANT_MODE
enum class DeQuantMode : uint8_t {
    DEQUANT_WITH_SINGLE_ROW = 0,  // {1, m * n, n} is read as {m, n, n}
    DEQUANT_WITH_MULTI_ROW,       // {1, m * n, n} stays one row
};
#endif

struct DequantParams {
    uint32_t m;         // rows
    uint32_t n;         // elements a row (n * 4 bytes a multiple of 32)
    uint32_t calCount;  // elements of each row dequantized
};

struct AscendDeQuantConfig {
    bool hasOffset;
    int32_t kDim = 1;
};
enum class AscendDeQuantPolicy : int32_t { PER_TOKEN, PER_GROUP, PER_CHANNEL_PER_GROUP, PER_TOKEN_PER_GROUP };
struct AscendDeQuantParam {
    uint32_t m;
    uint32_t n;
    uint32_t calCount;
    uint32_t groupSize = 0;
};

namespace detail {

template <typename S>
inline float deq_scale_value(S s) {
    if constexpr (std::is_same<S, uint64_t>::value) {
        uint32_t lo = uint32_t(s);  // the float in the low 32 bits; the high bits are control fields
        float f;
        std::memcpy(&f, &lo, 4);
        return f;
    } else {
        return float(s);
    }
}

template <typename D, typename S>
constexpr bool dequant_pair_ok(bool tensor) {
    using sage::sim::one_of;
    if (std::is_same<D, half>::value) return tensor && std::is_same<S, uint64_t>::value;
    if (one_of<D, float, bfloat16_t>()) return one_of<S, float, bfloat16_t>();
    return false;
}

template <typename D, typename S, DeQuantMode mode>
inline void dequant_run(const LocalTensor<D>& dst, const LocalTensor<int32_t>& src, const LocalTensor<S>* scaleT,
                        S scale, const LocalTensor<uint8_t>* tmp, DequantParams p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    const DequantParams given = p;
    constexpr uint32_t dstPerBlock = 32 / sizeof(D);
    if (mode == DeQuantMode::DEQUANT_WITH_SINGLE_ROW && p.m == 1 && p.calCount != 0 &&
        p.calCount % dstPerBlock == 0 && p.n % p.calCount == 0) {
        p = {p.n / p.calCount, p.calCount, p.calCount};
    }
    if (p.n % 8 != 0 || p.calCount > p.n || (scaleT && p.calCount > scaleT->GetSize())) {
        fail("api-misuse", loc,
             "AscendDequant with DequantParams{m=%u, n=%u, calCount=%u}: n int32 elements must fill whole 32-byte "
             "blocks, and calCount be at most n and at most the deqScale tensor's %u elements (AscendDequant.md)",
             given.m, given.n, given.calCount, scaleT ? scaleT->GetSize() : 0u);
    }
    const uint32_t dstN = (p.n * uint32_t(sizeof(D)) + 31) / 32 * 32 / uint32_t(sizeof(D));
    vec_src(src, "AscendDequant", uint64_t(p.m) * p.n, loc);
    if (scaleT) vec_src(*scaleT, "AscendDequant", p.calCount, loc);
    vec_dst(dst, "AscendDequant", uint64_t(p.m) * dstN, loc);
    uint32_t maxTmp = 0, minTmp = 0;
    GetAscendDequantMaxMinTmpSize(TensorShape({int64_t(given.m), int64_t(given.n)}), 4, maxTmp, minTmp);
    advmath::Tmp t = advmath::take_tmp("AscendDequant", "GetAscendDequantMaxMinTmpSize", tmp, p.m * p.n, minTmp, loc);
    for (uint32_t r = 0; r < p.m; ++r) {
        const int32_t* s = src.data() + uint64_t(r) * p.n;
        D* d = dst.data() + uint64_t(r) * dstN;
        for (uint32_t i = 0; i < p.calCount; ++i) {
            const float k = deq_scale_value(scaleT ? scaleT->data()[i] : scale);
            const float prod = convert<float, int32_t>(s[i], RoundMode::CAST_RINT) * k;
            if constexpr (std::is_same<D, float>::value) {
                d[i] = prod;
            } else {
                d[i] = convert<D, float>(prod, RoundMode::CAST_RINT);  // to nearest even
            }
        }
        ub_mark(dst[r * dstN].range(p.calCount));
    }
    advmath::done(t);
    // Per row-tile of the buffer: Cast int32->float, Mul by the scale, Cast to dstT.
    const uint64_t rowsPerFill = std::max<uint64_t>(1, t.bytes / 4 / (p.n + 72));
    const uint64_t chunk = rowsPerFill * p.calCount, total = uint64_t(p.m) * p.calCount;
    if (scaleT) trace_chunks({"Cast"}, dtype_name<S>(), sizeof(S), p.calCount, 0, loc, t.range, scaleT->range(p.calCount));
    trace_chunks({"Cast", scaleT ? "Mul" : "Muls"}, "float", 4, total, chunk, loc, t.range, src.range(uint64_t(p.m) * p.n));
    if (!std::is_same<D, float>::value) trace_chunks({"Cast"}, "float", 4, total, chunk, loc, dst.range(uint64_t(p.m) * dstN), t.range);
}

}  // namespace detail

#define SAGE_DEQUANT_GATE(TENSOR)                                                                                   \
    static_assert(detail::dequant_pair_ok<dstT, scaleT>(TENSOR),                                                    \
                  "[dtype-unsupported] AscendDequant on Atlas A2 takes (dst, deqScale) = (half, uint64_t tensor), " \
                  "(float or bfloat16_t, float or bfloat16_t)");

template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
__aicore__ inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                     const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                     DequantParams params, SAGE_LOC) {
    SAGE_DEQUANT_GATE(true)
    detail::dequant_run<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT(), &sharedTmpBuffer, params, loc);
}

template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
__aicore__ inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                     const LocalTensor<scaleT>& deqScale, DequantParams params, SAGE_LOC) {
    SAGE_DEQUANT_GATE(true)
    detail::dequant_run<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT(), nullptr, params, loc);
}

template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
__aicore__ inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                     const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                     const uint32_t calCount, SAGE_LOC) {
    SAGE_DEQUANT_GATE(true)
    detail::dequant_run<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT(), &sharedTmpBuffer,
                                            {1, calCount, calCount}, loc);
}

template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
__aicore__ inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                     const LocalTensor<scaleT>& deqScale, const uint32_t calCount, SAGE_LOC) {
    SAGE_DEQUANT_GATE(true)
    detail::dequant_run<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT(), nullptr,
                                            {1, calCount, calCount}, loc);
}

template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
__aicore__ inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                     const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                     SAGE_LOC) {
    SAGE_DEQUANT_GATE(true)
    const uint32_t n = srcTensor.GetSize();
    detail::dequant_run<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT(), &sharedTmpBuffer, {1, n, n}, loc);
}

template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
__aicore__ inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                     const LocalTensor<scaleT>& deqScale, SAGE_LOC) {
    SAGE_DEQUANT_GATE(true)
    const uint32_t n = srcTensor.GetSize();
    detail::dequant_run<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT(), nullptr, {1, n, n}, loc);
}

template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
__aicore__ inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                     const scaleT deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                     DequantParams params, SAGE_LOC) {
    SAGE_DEQUANT_GATE(false)
    detail::dequant_run<dstT, scaleT, mode>(dstTensor, srcTensor, nullptr, deqScale, &sharedTmpBuffer, params, loc);
}

template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
__aicore__ inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                     const scaleT deqScale, DequantParams params, SAGE_LOC) {
    SAGE_DEQUANT_GATE(false)
    detail::dequant_run<dstT, scaleT, mode>(dstTensor, srcTensor, nullptr, deqScale, nullptr, params, loc);
}

#undef SAGE_DEQUANT_GATE

}  // namespace AscendC
