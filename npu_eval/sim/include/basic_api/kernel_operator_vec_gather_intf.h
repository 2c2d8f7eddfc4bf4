// Gathers by offset:
//   Gather      dst[i] = element at byte offset srcOffset[i] (+ srcBaseOffset) of src
//   Gatherb     whole 32-byte blocks at byte offsets
#pragma once

#include <vector>

#include "../sage_sim/vec.h"

namespace AscendC {

struct GatherRepeatParams {
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
    __aicore__ GatherRepeatParams() {}
    __aicore__ GatherRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
};

#define SAGE_GATHER_OK (::sage::sim::one_of<T, half, bfloat16_t, uint16_t, int16_t, float, uint32_t, int32_t>())
#define SAGE_GATHER_LIST "half, bfloat16_t, uint16_t, int16_t, float, uint32_t, int32_t"

namespace detail {
// dst element (r, k) <- src bytes at srcBaseOffset + srcOffset[r * epr + k]; dst element (r, k)
// sits at r * dstRepStride blocks + k.
template <typename T>
inline void gather_elems(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                         uint32_t srcBaseOffset, const sage::sim::Repeats& m, uint32_t dstRepStride,
                         sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const char* api = "Gather";
    src.check(api, 0, loc);
    uint64_t src_bytes = uint64_t(src.size_) * sizeof(T);
    if (srcBaseOffset % sizeof(T) != 0 || srcBaseOffset >= src_bytes) {
        fail("ub-out-of-bounds", loc,
             "Gather with srcBaseOffset %u, in block %d: it must be a multiple of sizeof(T) = %u and below the "
             "src tensor's %llu bytes",
             srcBaseOffset, blk().idx, uint32_t(sizeof(T)), (unsigned long long)src_bytes);
    }
    Lay ld{blk_shift<T>(), 1, dstRepStride};
    uint64_t off_ext = 0, dst_ext = 0;
    m.each([&](uint32_t r, uint32_t k) {
        off_ext = std::max<uint64_t>(off_ext, uint64_t(r) * m.epr + k + 1);
        dst_ext = std::max<uint64_t>(dst_ext, ld.off(r, k) + 1);
    });
    srcOffset.check(api, off_ext, loc, true);
    dst.check(api, dst_ext, loc);
    const uint32_t* offs = srcOffset.data();
    const uint8_t* base = reinterpret_cast<const uint8_t*>(src.data()) + srcBaseOffset;
    const uint8_t* init = blk().ub_init + src.addr_ + srcBaseOffset;
    const uint64_t room = src_bytes - srcBaseOffset;  // bytes from the base to the end of src
    const uint8_t* off_init = blk().ub_init + srcOffset.addr_;
    T* d = dst.data();
    bool uninit = false;
    std::vector<std::pair<uint64_t, T>> writes;
    m.each([&](uint32_t r, uint32_t k) {
        uint64_t i = uint64_t(r) * m.epr + k;
        if (!off_init[i * 4] && !uninit) {
            uninit = true;
            report("uninitialized-read", Severity::Warning, loc,
                   "Gather reads srcOffset[%llu], which nothing wrote since its buffer was allocated (block %d)",
                   (unsigned long long)i, blk().idx);
        }
        uint32_t o = offs[i];
        if (uint64_t(o) + sizeof(T) > room) {
            fail("ub-out-of-bounds", loc,
                 "Gather: srcOffset[%llu] = %u bytes (+ srcBaseOffset %u) reads past the end of src, which holds "
                 "%llu bytes (%u elements), in block %d. srcOffset holds byte offsets: element j of src is at "
                 "j * sizeof(T) = j * %u",
                 (unsigned long long)i, o, srcBaseOffset, (unsigned long long)src_bytes, src.size_, blk().idx,
                 uint32_t(sizeof(T)));
        }
        if (!uninit && !init[o]) {
            uninit = true;
            report("uninitialized-read", Severity::Warning, loc,
                   "Gather reads src byte %u, which nothing wrote since its buffer was allocated (block %d)",
                   srcBaseOffset + o, blk().idx);
        }
        T v;
        memcpy(&v, base + o, sizeof(T));
        writes.emplace_back(ld.off(r, k), v);
    });
    // All reads happen before any write, as the unit reads its operands first.
    uint8_t* dinit = blk().ub_init + dst.addr_;
    for (auto& w : writes) {
        d[w.first] = w.second;
        memset(dinit + w.first * sizeof(T), 1, sizeof(T));
    }
    trace_instr(Pipe::V, api, dtype_name<T>(), uint32_t(m.active()), uint64_t(m.repeats) * 256, loc,
                dst.range(dst_ext), srcOffset.range(off_ext), src.range(src.size_));
}
}  // namespace detail

template <typename T>
__aicore__ inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                              const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseOffset,
                              const uint64_t mask, const uint8_t repeatTime, const uint16_t dstRepStride, SAGE_LOC) {
    SAGE_DTYPE_GATE("Gather", T, SAGE_GATHER_OK, SAGE_GATHER_LIST)
    if constexpr (SAGE_GATHER_OK) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_len(sage::sim::elems_per_repeat<T>(), true, mask, repeatTime);
        detail::gather_elems(dst, src, srcOffset, srcBaseOffset, m, dstRepStride, loc);
    }
}
template <typename T>
__aicore__ inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                              const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseOffset,
                              const uint64_t mask[], const uint8_t repeatTime, const uint16_t dstRepStride,
                              SAGE_LOC) {
    SAGE_DTYPE_GATE("Gather", T, SAGE_GATHER_OK, SAGE_GATHER_LIST)
    if constexpr (SAGE_GATHER_OK) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_array(sage::sim::elems_per_repeat<T>(), true, mask, repeatTime);
        detail::gather_elems(dst, src, srcOffset, srcBaseOffset, m, dstRepStride, loc);
    }
}
// dst[i] = element at byte offset srcBaseOffset + srcOffset[i] of src, i < count.
template <typename T>
__aicore__ inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                              const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseOffset,
                              const uint32_t count, SAGE_LOC) {
    SAGE_DTYPE_GATE("Gather", T, SAGE_GATHER_OK, SAGE_GATHER_LIST)
    if constexpr (SAGE_GATHER_OK) {
        using namespace sage::sim;
        touch(loc);
        Repeats m;
        m.epr = elems_per_repeat<T>();
        m.counter = true;
        m.count = count;
        m.repeats = (count + m.epr - 1) / m.epr;
        detail::gather_elems(dst, src, srcOffset, srcBaseOffset, m, DEFAULT_REPEAT_STRIDE, loc);
        count_form_done();
    }
}

// Block gather: block j of repeat r of dst (at r * dstRepStride + j * dstBlkStride blocks) is the
// 32 bytes of src at byte offset offset[r * 8 + j] (a multiple of 32).
template <typename T>
__aicore__ inline void Gatherb(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                               const LocalTensor<uint32_t>& offset, const uint8_t repeatTime,
                               const GatherRepeatParams& repeatParams, SAGE_LOC) {
    constexpr bool ok = sizeof(T) == 2 || sizeof(T) == 4;
    SAGE_DTYPE_GATE("Gatherb", T, ok, "16- or 32-bit types (uint16_t, uint32_t and their same-width types)")
    if constexpr (ok) {
        using namespace sage::sim;
        touch(loc);
        const char* api = "Gatherb";
        constexpr uint32_t epb = 32 / sizeof(T);
        uint64_t n_off = uint64_t(repeatTime) * 8;
        vec_src(offset, api, n_off, loc);
        src.check(api, 0, loc);
        uint64_t src_bytes = uint64_t(src.size_) * sizeof(T);
        uint32_t bs = repeatParams.dstBlkStride, rs = repeatParams.dstRepStride;
        uint64_t ext = repeatTime ? (uint64_t(repeatTime - 1) * rs + 7ull * bs + 1) * epb : 0;
        dst.check(api, ext, loc);
        const uint32_t* offs = offset.data();
        std::vector<uint8_t> blocks(n_off * 32);
        for (uint64_t i = 0; i < n_off; ++i) {
            uint32_t o = offs[i];
            if (o % 32 != 0 || uint64_t(o) + 32 > src_bytes) {
                fail("ub-out-of-bounds", loc,
                     "Gatherb: offset[%llu] = %u bytes, but it must be a multiple of 32 and leave a whole 32-byte "
                     "block inside src (%llu bytes), in block %d",
                     (unsigned long long)i, o, (unsigned long long)src_bytes, blk().idx);
            }
            ub_check_init(UbRange{src.addr_ + o, 32}, api, loc);
            memcpy(&blocks[i * 32], reinterpret_cast<const uint8_t*>(src.data()) + o, 32);
        }
        uint8_t* d = reinterpret_cast<uint8_t*>(dst.data());
        for (uint32_t r = 0; r < repeatTime; ++r) {
            for (uint32_t j = 0; j < 8; ++j) {
                uint64_t at = (uint64_t(r) * rs + uint64_t(j) * bs) * 32;
                memcpy(d + at, &blocks[(r * 8 + j) * 32], 32);
                ub_mark(UbRange{uint32_t(dst.addr_ + at), 32});
            }
        }
        trace_instr(Pipe::V, api, dtype_name<T>(), uint32_t(n_off * epb), n_off * 32, loc, dst.range(ext),
                    offset.range(n_off), src.range(src.size_));
    }
}

#undef SAGE_GATHER_OK
#undef SAGE_GATHER_LIST

}  // namespace AscendC
