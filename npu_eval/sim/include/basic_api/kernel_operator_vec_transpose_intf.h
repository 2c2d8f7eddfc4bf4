// Transposes (kernel_operator_vec_transpose_intf.h):
//   Transpose(dst, src)   one 16 x 16 matrix of 16-bit elements: dst[i][j] = src[j][i]
//   TransDataTo5HD        the 16-address form, 16-bit elements: per repeat, element j of dst
//                         block i is element i of src block j
#pragma once

#include <vector>

#include "../sage_sim/vec.h"

namespace AscendC {

enum class TransposeType : uint8_t {
    TRANSPOSE_TYPE_NONE,
    TRANSPOSE_NZ2ND_0213,
    TRANSPOSE_NZ2NZ_0213,
    TRANSPOSE_NZ2NZ_012_WITH_N,
    TRANSPOSE_NZ2ND_012_WITH_N,
    TRANSPOSE_NZ2ND_012_WITHOUT_N,
    TRANSPOSE_NZ2NZ_012_WITHOUT_N,
    TRANSPOSE_ND2ND_ONLY,
    TRANSPOSE_ND_UB_GM,
    TRANSPOSE_GRAD_ND_UB_GM,
    TRANSPOSE_ND2ND_B16,
    TRANSPOSE_NCHW2NHWC,
    TRANSPOSE_NHWC2NCHW,
};

struct TransDataTo5HDParams {
    bool dstHighHalf = false;
    bool srcHighHalf = false;
    uint8_t repeatTimes = 1;
    uint16_t dstRepStride = 0;
    uint16_t srcRepStride = 0;
    constexpr __aicore__ TransDataTo5HDParams() = default;
    constexpr __aicore__ TransDataTo5HDParams(const bool dstHighHalfIn, const bool srcHighHalfIn,
                                              const uint8_t repeatTimesIn, const uint16_t dstRepStrideIn,
                                              const uint16_t srcRepStrideIn)
        : dstHighHalf(dstHighHalfIn), srcHighHalf(srcHighHalfIn), repeatTimes(repeatTimesIn),
          dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
};

struct TransposeParamsExt {
    uint16_t nSize = 0;
    uint16_t cSize = 0;
    uint16_t hSize = 0;
    uint16_t wSize = 0;
    TransposeType transposeType = TransposeType::TRANSPOSE_ND2ND_B16;
    constexpr __aicore__ TransposeParamsExt() = default;
    constexpr __aicore__ TransposeParamsExt(const uint16_t nSizeIn, const uint16_t cSizeIn, const uint16_t hSizeIn,
                                            const uint16_t wSizeIn, const TransposeType transposeTypeIn)
        : nSize(nSizeIn), cSize(cSizeIn), hSize(hSizeIn), wSize(wSizeIn), transposeType(transposeTypeIn) {}
};

constexpr int32_t NCHW_CONV_ADDR_LIST_SIZE = 16;

template <typename T>
__aicore__ inline void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, SAGE_LOC) {
    constexpr bool ok = ::sage::sim::one_of<T, half, int16_t, uint16_t>();
    SAGE_DTYPE_GATE("Transpose", T, ok, "half, int16_t, uint16_t (one 16 x 16 matrix)")
    if constexpr (ok) {
        using namespace sage::sim;
        touch(loc);
        vec_src(src, "Transpose", 256, loc);
        vec_dst(dst, "Transpose", 256, loc);
        T tmp[256];
        const T* s = src.data();
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 16; ++j) tmp[i * 16 + j] = s[j * 16 + i];
        memcpy(static_cast<void*>(dst.data()), tmp, sizeof tmp);
        vec_done(dst, "Transpose", 256, loc, src.range(256));
    }
}

// Repeat r reads src block j at srcList[j] + r * srcRepStride blocks and writes dst block i at
// dstList[i] + r * dstRepStride blocks (strides in 32-byte blocks).
template <typename T>
__aicore__ inline void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                                      const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE],
                                      const TransDataTo5HDParams& nchwconvParams, SAGE_LOC) {
    constexpr bool known = ::sage::sim::one_of<T, int8_t, uint8_t, int16_t, uint16_t, half, float, int32_t, uint32_t>();
    SAGE_DTYPE_GATE("TransDataTo5HD", T, known, "int8_t, uint8_t, int16_t, uint16_t, half, float, int32_t, uint32_t")
    static_assert(!known || sizeof(T) == 2,
                  "TransDataTo5HD: the emulator implements the 16-bit form (half, int16_t, uint16_t) only so far; "
                  "the 8- and 32-bit forms are not emulated yet");
    if constexpr (known && sizeof(T) == 2) {
        using namespace sage::sim;
        touch(loc);
        const char* api = "TransDataTo5HD";
        const uint32_t reps = nchwconvParams.repeatTimes;
        const uint64_t ds = uint64_t(nchwconvParams.dstRepStride) * 16, ss = uint64_t(nchwconvParams.srcRepStride) * 16;
        for (int j = 0; j < 16; ++j) {
            uint64_t need = reps ? (reps - 1) * ss + 16 : 0;
            vec_src(srcList[j], api, need, loc);
            vec_dst(dstList[j], api, reps ? (reps - 1) * ds + 16 : 0, loc);
        }
        std::vector<T> blocks(size_t(reps) * 256);
        for (uint32_t r = 0; r < reps; ++r)
            for (int j = 0; j < 16; ++j) memcpy(&blocks[(r * 16 + j) * 16], srcList[j].data() + r * ss, 32);
        for (uint32_t r = 0; r < reps; ++r) {
            for (int i = 0; i < 16; ++i) {
                T* d = dstList[i].data() + r * ds;
                for (int j = 0; j < 16; ++j) d[j] = blocks[(r * 16 + j) * 16 + i];
                ub_mark(UbRange{uint32_t(dstList[i].addr_ + r * ds * 2), 32});
            }
        }
        trace_instr(Pipe::V, api, dtype_name<T>(), reps * 256, uint64_t(reps) * 512, loc,
                    dstList[0].range(reps ? (reps - 1) * ds + 16 : 0), srcList[0].range(reps ? (reps - 1) * ss + 16 : 0));
    }
}

}  // namespace AscendC
