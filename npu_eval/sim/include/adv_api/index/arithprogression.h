// Arange (adv_api/index, asc-devkit include/adv_api/index/arithprogression.h; ArithProgression is
// its older name): dst[i] = firstValue + i * diffValue for i < count.
//
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/索引计算/Arange-94.md (实现原理): the scalar
// unit writes the first 32-byte block (firstValue + diffValue * i in T; half computes it in
// float), then Adds extends it a block at a time (each block = the previous one + diffValue * (32 /
// sizeof(T))) up to one 256-byte repeat, then a repeat at a time (+ diffValue * (256 / sizeof(T))).
// So element i carries the rounding of every add before it, as on the device, not firstValue + i *
// diffValue rounded once; and the last Adds writes whole 32-byte blocks, past count up to the next
// block. diffValue must be >= 0 and count > 0. int16_t, half, int32_t and float on Atlas A2.
#pragma once

#include "../../sage_sim/adv.h"
#include "arithprogression_tiling.h"

namespace AscendC {

namespace detail {

template <typename T>
inline T arange_step(T diff, int32_t n) {
    if constexpr (std::is_integral<T>::value) {
        return T(int64_t(diff) * n);
    } else {
        return sage::sim::down<T>(float(diff) * float(n));
    }
}

template <typename T>
inline T arange_add(T a, T b) {
    if constexpr (std::is_integral<T>::value) {
        return sage::sim::down<T>(int64_t(a) + int64_t(b));  // the integer ALU wraps
    } else {
        return sage::sim::down<T>(float(a) + float(b));
    }
}

template <typename T>
inline void arange_run(const LocalTensor<T>& dst, T first, T diff, int32_t count, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    if (count <= 0 || float(diff) < 0.0f) {
        fail("api-misuse", loc, "Arange with count %d and diffValue %g: count must be > 0 and diffValue >= 0 (Arange-94.md)",
             count, double(float(diff)));
    }
    constexpr int32_t blk = 32 / sizeof(T), rep = 256 / sizeof(T);
    // The last block-aligned write reaches the end of count's last 32-byte block.
    const int32_t written = count <= blk ? count : (count + blk - 1) / blk * blk;
    vec_dst(dst, "Arange", uint64_t(written), loc);
    T* d = dst.data();
    const int32_t base = count < blk ? count : blk;
    for (int32_t i = 0; i < base; ++i) {
        if constexpr (std::is_same<T, half>::value) {
            d[i] = down<half>(float(first) + float(diff) * float(i));
        } else if constexpr (std::is_integral<T>::value) {
            d[i] = down<T>(int64_t(first) + int64_t(diff) * i);
        } else {
            d[i] = T(first + diff * T(i));
        }
    }
    const T blkStep = arange_step(diff, blk), repStep = arange_step(diff, rep);
    for (int32_t i = blk; i < std::min(written, rep); ++i) d[i] = arange_add(d[i - blk], blkStep);
    for (int32_t i = rep; i < written; ++i) d[i] = arange_add(d[i - rep], repStep);
    ub_mark(dst.range(uint64_t(written)));
    trace_instr(Pipe::S, "SetValue", dtype_name<T>(), uint32_t(base), uint64_t(base) * sizeof(T), loc, dst.range(base));
    if (written > blk) {
        const int32_t blocks = (std::min(written, rep) - blk) / blk;
        for (int32_t b = 0; b < blocks; ++b) trace_steps({"Adds"}, dtype_name<T>(), sizeof(T), blk, loc, dst.range(written));
        for (int32_t at = rep; at < written; at += rep) {
            trace_steps({"Adds"}, dtype_name<T>(), sizeof(T), std::min(rep, written - at), loc, dst.range(written));
        }
    }
}

}  // namespace detail

template <typename T>
__aicore__ inline void Arange(const LocalTensor<T>& dst, const T firstValue, const T diffValue, const int32_t count,
                              SAGE_LOC) {
    static_assert(sage::sim::one_of<T, int16_t, half, int32_t, float>(),
                  "[dtype-unsupported] Arange takes int16_t, half, int32_t or float on Atlas A2");
    detail::arange_run<T>(dst, firstValue, diffValue, count, loc);
}

template <typename T>
__aicore__ inline void ArithProgression(const LocalTensor<T>& dstLocal, const T firstValue, const T diffValue,
                                        const int32_t count, SAGE_LOC) {
    Arange<T>(dstLocal, firstValue, diffValue, count, loc);
}

}  // namespace AscendC
