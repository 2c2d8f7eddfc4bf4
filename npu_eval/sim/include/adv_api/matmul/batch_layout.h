// Where batch j of a batched Matmul's A, B or C lies in GM (IterateBatch / IterateNBatch, asc-devkit
// docs IterateBatch.md): the layouts of MatmulType's LayoutMode, with the axes the host tiling's
// SetALayout/SetBLayout/SetCLayout record (ALayoutInfoB/S/N/G/D ...). One matrix is S x D; the
// batches run over B, N and G (flattened, G fastest):
// - BSNGD [B, S, N, G, D]: batch (b, ng) at b*S*N*G*D + ng*D, rows N*G*D apart;
// - SBNGD [S, B, N, G, D]: batch j at j*D, rows B*N*G*D apart;
// - BNGS1S2 [B, N, G, S, D]: batch j at j*S*D, rows D apart;
// - NORMAL (BMNK) and NONE: batch j at j * the matrix's elements (or matrixStride), rows as SetOrgShape's.
#pragma once

#include <cstdint>

#include "matmul_config.h"

namespace AscendC::matmul_detail {

struct LayoutInfo {
    int32_t b, s, n, g, d;
};
struct BatchView {
    uint64_t offset;  // elements from the tensor's start to the batch's first element
    uint32_t stride;  // elements between the batch matrix's rows
};

// rows/stride: the stored matrix's rows and row stride for NORMAL; matrixStride: IterateBatch's (0: none).
constexpr BatchView batch_view(LayoutMode layout, LayoutInfo x, uint32_t j, uint32_t rows, uint32_t stride,
                               uint32_t matrixStride) {
    const uint64_t ng = uint64_t(x.n) * x.g;
    switch (layout) {
        case LayoutMode::BSNGD:
            return {(j / ng) * uint64_t(x.s) * ng * x.d + (j % ng) * x.d, uint32_t(ng * x.d)};
        case LayoutMode::SBNGD:
            return {uint64_t(j) * x.d, uint32_t(uint64_t(x.b) * ng * x.d)};
        case LayoutMode::BNGS1S2:
            return {uint64_t(j) * x.s * x.d, uint32_t(x.d)};
        default:
            return {uint64_t(j) * (matrixStride ? matrixStride : uint64_t(rows) * stride), stride};
    }
}

}  // namespace AscendC::matmul_detail
