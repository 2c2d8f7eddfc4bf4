// Constant initialisation of the cube's input memories (Fill / InitConstValue with
// InitConstValueParams, the Fill page under 矩阵搬入辅助配置接口) and LoadData2DParamsV2, the
// Ascend 950's 2D load, whose page says Atlas A2 (the 910B) does not support it: declared so a
// kernel with a 950 branch compiles, and an api-misuse at the call when the 910B runs it.
#pragma once

#include <type_traits>

#include "kernel_operator_mm_intf.h"

namespace AscendC {

template <typename T>
struct InitConstValueParams {
    __aicore__ InitConstValueParams() {}
    __aicore__ InitConstValueParams(const uint16_t repeatTimesIn, const uint16_t blockNumIn, const uint16_t dstGapIn,
                                    const T initValueIn)
        : repeatTimes(repeatTimesIn), blockNum(blockNumIn), dstGap(dstGapIn), initValue(initValueIn) {}
    __aicore__ InitConstValueParams(const uint16_t repeatTimesIn, const T initValueIn)
        : repeatTimes(repeatTimesIn), initValue(initValueIn) {}
    uint16_t repeatTimes = 0;  // iterations, [0, 32767]
    uint16_t blockNum = 0;     // blocks an iteration writes, [0, 32767]: 32 bytes in L1, 512 in L0A/L0B
    uint16_t dstGap = 0;       // blocks from one iteration's end to the next one's start, [0, 32767]
    T initValue = 0;
};

struct LoadData2DParamsV2 {
    __aicore__ LoadData2DParamsV2() {}
    __aicore__ LoadData2DParamsV2(const uint32_t mStartPositionIn, const uint32_t kStartPositionIn,
                                  const uint16_t mStepIn, const uint16_t kStepIn, const int32_t srcStrideIn,
                                  const uint16_t dstStrideIn, const bool ifTransposeIn, const uint8_t sidIn)
        : mStartPosition(mStartPositionIn), kStartPosition(kStartPositionIn), mStep(mStepIn), kStep(kStepIn),
          srcStride(srcStrideIn), dstStride(dstStrideIn), ifTranspose(ifTransposeIn), sid(sidIn) {}
    uint32_t mStartPosition = 0;
    uint32_t kStartPosition = 0;
    uint16_t mStep = 0;
    uint16_t kStep = 0;
    int32_t srcStride = 0;
    uint16_t dstStride = 0;
    bool ifTranspose = false;
    uint8_t sid = 0;
};

// Fills `dst` (L1: A1/B1/C1, 32-byte blocks on MTE2; L0A/L0B: 512-byte blocks on MTE1) with
// initValue: repeatTimes iterations of blockNum blocks, each iteration starting dstGap blocks
// after the previous one ended. repeatTimes or blockNum 0 does nothing.
template <typename T, typename U = T, typename std::enable_if<std::is_same<T, U>::value, bool>::type = true>
__aicore__ inline void Fill(const LocalTensor<T>& dst, const InitConstValueParams<U>& initConstValueParams,
                            SAGE_LOC) {
    using namespace sage::sim;
    static_assert(std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t> || std::is_same_v<T, half> ||
                      std::is_same_v<T, bfloat16_t> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> ||
                      std::is_same_v<T, float>,
                  "[dtype-unsupported] Fill (InitConstValueParams) on the 910B takes int16_t, uint16_t, half, "
                  "bfloat16_t, int32_t, uint32_t or float (its doc page)");
    touch(loc);
    const InitConstValueParams<U>& p = initConstValueParams;
    const Mem mem = detail::mem_of(dst);
    const bool l1 = mem == Mem::L1;
    detail::cube_operand(dst, l1 ? Mem::L1 : mem == Mem::L0B ? Mem::L0B : Mem::L0A, l1 ? 32 : 512, "Fill", "dst",
                         "A1/B1 (L1), A2 (L0A) or B2 (L0B)", loc);
    if (p.repeatTimes > 32767 || p.blockNum > 32767 || p.dstGap > 32767) {
        fail("api-misuse", loc,
             "Fill with repeatTimes %u, blockNum %u, dstGap %u, in block %d: InitConstValueParams takes each in "
             "[0, 32767]", unsigned(p.repeatTimes), unsigned(p.blockNum), unsigned(p.dstGap), blk().idx);
    }
    if (p.repeatTimes == 0 || p.blockNum == 0) return;
    const uint64_t block = l1 ? 32 : 512, run = uint64_t(p.blockNum) * block;
    const uint64_t step = run + uint64_t(p.dstGap) * block;
    detail::cube_span(dst, uint64_t(p.repeatTimes - 1) * step + run, "Fill", loc);
    for (uint32_t i = 0; i < p.repeatTimes; ++i) {
        T* at = reinterpret_cast<T*>(blk().ub + dst.addr_ + i * step);
        for (uint64_t e = 0; e < run / sizeof(T); ++e) at[e] = p.initValue;
        ub_mark({uint32_t(dst.addr_ + i * step), uint32_t(run)});
    }
    trace_instr(l1 ? Pipe::MTE2 : Pipe::MTE1, "Fill", dtype_name<T>(), uint32_t(p.repeatTimes * run / sizeof(T)),
                p.repeatTimes * run, loc, {dst.addr_, uint32_t(uint64_t(p.repeatTimes - 1) * step + run)});
}

// The earlier name of the same instruction (asc-devkit's kernel_operator_mm_intf.h keeps both).
template <typename T, typename U = T, typename std::enable_if<std::is_same<T, U>::value, bool>::type = true>
__aicore__ inline void InitConstValue(const LocalTensor<T>& dst, const InitConstValueParams<U>& initConstValueParams,
                                      SAGE_LOC) {
    Fill(dst, initConstValueParams, loc);
}

// LoadData with LoadData2DParamsV2: the LoadData_2D_V2 page lists Ascend 950 only.
template <typename T>
__aicore__ inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                const LoadData2DParamsV2& loadDataParams, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    (void)dst, (void)src, (void)loadDataParams;
    fail("api-misuse", loc,
         "LoadData with LoadData2DParamsV2 on %s, in block %d: its doc page (LoadData 2D V2) lists Ascend 950 "
         "only, Atlas A2 does not support it. On the 910B load L1 -> L0A/L0B with LoadData2DParams (per m- or "
         "k-block, ifTranspose for 2-byte types) or LoadDataWithTranspose, under `#if __NPU_ARCH__ == 2201`",
         chip_name(), blk().idx);
}

}  // namespace AscendC
