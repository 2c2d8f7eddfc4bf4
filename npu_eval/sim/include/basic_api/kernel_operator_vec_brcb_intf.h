// Brcb: spread each of 8 elements over a 32-byte block.
#pragma once

#include "../sage_sim/vec.h"
#include "kernel_common.h"

namespace AscendC {

struct BrcbRepeatParams {
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint16_t dstBlkStride = 1;
    __aicore__ BrcbRepeatParams() = default;
    __aicore__ BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
};

// Each repeat reads 8 consecutive elements of src and fills one 32-byte block of dst with
// each: block j of repeat r at (r * dstRepStride + j * dstBlkStride) * 32 bytes.
template <typename T>
__aicore__ inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
                            const BrcbRepeatParams& repeatParams, SAGE_LOC) {
    constexpr bool ok = sizeof(T) == 2 || sizeof(T) == 4;
    SAGE_DTYPE_GATE("Brcb", T, ok, "16- or 32-bit types: half, bfloat16_t, int16_t, uint16_t, float, int32_t, uint32_t")
    if constexpr (ok) {
        using namespace sage::sim;
        touch(loc);
        constexpr uint32_t epb = 32 / sizeof(T);
        // The documented special case: a block stride of 0 behaves as 1.
        uint32_t bs = repeatParams.dstBlkStride ? repeatParams.dstBlkStride : 1;
        uint32_t rs = repeatParams.dstRepStride;
        uint64_t n_src = uint64_t(repeatTime) * 8;
        uint64_t ext = 0;
        if (repeatTime) ext = (uint64_t(repeatTime - 1) * rs + 7ull * bs + 1) * epb;
        vec_src(src, "Brcb", n_src, loc);
        dst.check("Brcb", ext, loc);
        T* d = dst.data();
        const T* s = src.data();
        uint8_t* init = blk().ub_init + dst.addr_;
        for (uint32_t r = 0; r < repeatTime; ++r) {
            for (uint32_t j = 0; j < 8; ++j) {
                const T v = s[r * 8 + j];
                uint64_t base = (uint64_t(r) * rs + uint64_t(j) * bs) * epb;
                for (uint32_t e = 0; e < epb; ++e) d[base + e] = v;
                memset(init + base * sizeof(T), 1, 32);
            }
        }
        trace_instr(Pipe::V, "Brcb", dtype_name<T>(), uint32_t(n_src * epb), n_src * 32, loc, dst.range(ext),
                    src.range(n_src));
    }
}

}  // namespace AscendC
