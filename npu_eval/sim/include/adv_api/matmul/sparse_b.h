// The Matmul's 4:2 sparse B (SparseMatmulType, SetSparseIndex; the 4:2 稀疏矩阵乘 guide page and the
// SetSparseIndex page) on the basic API's sparse path: B's dense half (N rows of K / 2 int8, ISTRANS
// true) and its index go GM -> L1 per chunk of K, LoadDataWithSparse moves both to L0B and the
// sparse index buffer, MmadWithSparse picks A's columns by the index (docs/cube.md).
//
// The index in GM (the sample's gen_data: the N x K / 8 byte matrix in NZ with 16 x 8 fractals) is
// 128-byte fractals, fractal (kb, nb) for 64 of K and 16 columns at (kb * up(N, 16) / 16 + nb) * 128:
// the Zn order LoadDataWithSparse reads, so a chunk's fractals copy as k-block rows of n16 fractals.
#pragma once

#include <type_traits>

#include "../../basic_api/kernel_operator_data_copy_intf.h"
#include "../../basic_api/kernel_operator_mm_intf.h"
#include "../../sage_sim/coop.h"
#include "matmul_config.h"

namespace AscendC {
namespace matmul_detail {

// SetSparseIndex's limits (its page and the guide's): a SparseMatmulType B, the MDL template, pure
// cube mode (a mixed kernel's Matmul is a client on the AIV, which refuses it).
template <class B_TYPE>
inline void sparse_index_allowed(bool mdl, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    if constexpr (!is_sparse_v<B_TYPE>) {
        fail("api-misuse", loc, "Matmul SetSparseIndex with a B that is not a SparseMatmulType, in block %d: declare "
             "B as SparseMatmulType<TPosition::GM, TPosition::GM, CubeFormat::ND, int8_t, true>", blk().idx);
    } else {
        static_assert(B_TYPE::indexPosition == TPosition::GM, "SparseMatmulType: the index lies in GM only");
        if (!mdl)
            fail("api-misuse", loc, "Matmul SetSparseIndex outside the MDL template, in block %d: the sparse matmul "
                 "runs with CFG_MDL only (the SetSparseIndex page)", blk().idx);
        if (coop().active && coop().mixed)
            fail("api-misuse", loc, "Matmul SetSparseIndex in a mixed kernel, in block %d: the sparse matmul runs in "
                 "pure cube mode only (the SetSparseIndex page: a cube kernel, its Matmul defined cube-only; "
                 "a mixed kernel's Matmul client refuses it)", blk().idx);
    }
}

// What a sparse Matmul needs before it computes (the guide's limits).
inline void sparse_ready(bool transB, bool indexSet, int32_t m, int32_t n, int32_t k, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (!indexSet)
        fail("api-misuse", loc, "Matmul with a SparseMatmulType B before SetSparseIndex, in block %d: the sparse "
             "matmul reads B's index from it", blk().idx);
    if (!transB)
        fail("api-misuse", loc, "Matmul with a SparseMatmulType B not transposed, in block %d: the sparse B is N x "
             "K / 2 (ISTRANS true and SetTensorB(gm, true): the guide's only form)", blk().idx);
    if (m <= 0 || n <= 0 || k <= 0)
        fail("api-misuse", loc, "Matmul sparse with M %d, N %d, K %d, in block %d: none may be 0 (the guide)", m, n,
             k, blk().idx);
}

// The index fractals of columns n0 .. n0 + cols and K k0 .. k0 + kLen, GM -> L1 (MTE2) in the Zn
// order of B's dense fractals there (fractal (kc, nr) at kc * n16 + nr).
inline void copy_sparse_index(const LocalTensor<uint8_t>& dst, const GlobalTensor<uint8_t>& src, uint32_t n0,
                              uint32_t cols, uint32_t k0, uint32_t kLen, int32_t orgN, sage::sim::SrcLoc loc) {
    const uint32_t n16 = (cols + 15) / 16, all16 = (uint32_t(orgN) + 15) / 16, kBlocks = (kLen + 63) / 64;
    DataCopyParams p(uint16_t(kBlocks), uint16_t(n16 * 4), uint16_t((all16 - n16) * 4), 0);  // 128 B = 4 blocks
    DataCopy(dst, src[(uint64_t(k0 / 64) * all16 + n0 / 16) * 128], p, loc);
}

// L1 -> L0B: k1 rows (64 of K each) of n16 dense fractals from row kf of the chunk, with their index.
inline void load_sparse_b(const LocalTensor<int8_t>& b2, const LocalTensor<int8_t>& b1,
                          const LocalTensor<uint8_t>& index1, uint32_t kf, uint32_t k1, uint32_t n16,
                          sage::sim::SrcLoc loc) {
    for (uint32_t kc = 0; kc < k1; ++kc)
        LoadDataWithSparse(b2[kc * n16 * 512], b1, index1,
                           LoadData2dParams(uint16_t((kf + kc) * n16), uint8_t(n16), 1, 0, 0, false, 0), loc);
}
template <class T, class U>
inline void load_sparse_b(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<U>&, uint32_t, uint32_t,
                          uint32_t, sage::sim::SrcLoc) {
    static_assert(std::is_same_v<T, int8_t>, "SparseMatmulType: B is int8_t only (the 4:2 sparse guide)");
}

// MmadWithSparse takes its bias from the BiasTable's start (cmatrixSource); the Matmul's C2 buffer
// is there when it is the kernel's only one.
template <class T>
inline void sparse_bias_at_start(const LocalTensor<T>& c2, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (c2.addr_ != mem_base(Mem::BT))
        fail("api-misuse", loc, "Matmul sparse with a bias whose BiasTable buffer is not at the table's start, in "
             "block %d: the sparse multiply adds the bias from there (free the kernel's own C2 buffers first)",
             blk().idx);
}

}  // namespace matmul_detail
}  // namespace AscendC
