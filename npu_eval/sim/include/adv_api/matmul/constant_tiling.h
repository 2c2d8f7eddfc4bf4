// The Matmul API's constant (compile-time) tiling (asc-devkit include/adv_api/matmul/tiling.h's
// MatmulApiStaticTiling and constant_tiling.h's GetMatmulApiTiling): a kernel builds a
// MatmulApiStaticTiling from a MatmulConfig carrying MatmulShapeParams (GetMMConfig) and passes it
// as the Matmul's MM_CFG; REGIST_MATMUL_OBJ may then give a null TCubeTiling.
//
// GetMatmulApiTiling fills the fields by sage-npu's host rule (matmul_tiling.h, docs/cube.md "The
// Matmul API"), on the shape and base block the config fixes: stepM = stepN = 1, stepKa = stepKb
// and depthA1 = depthB1 from the rule's L1 step (l1_steps), dbL0A/dbL0B 2 when two base tiles fit
// L0A/L0B, dbL0C 1. With no singleCore shape only the base block is constant.
//
// What a Matmul uses (static_tiling below): a constant field (>= 0) overrides the runtime
// TCubeTiling's, except M/N/Ka/Kb, which a runtime tiling keeps (they are the singleCore shape in
// a constant tiling; the kernel sets the real ones with SetOrgShape). isBias in a constant tiling
// (MatmulConfig::enableSetBias, true by default) reserves the bias buffers; the bias is added
// only after SetBias.
#pragma once

#include <cstdint>

#include "../../kernel_tiling/kernel_tiling.h"
#include "matmul_config.h"
#include "matmul_tiling.h"

#define SAGE_STATIC_TILING_FIELD(name) int32_t name = -1;
struct MatmulApiStaticTiling {
    SAGE_TCUBE_TILING_FIELDS(SAGE_STATIC_TILING_FIELD)
    MatmulConfig cfg = CFG_NORM;
};
#undef SAGE_STATIC_TILING_FIELD

namespace AscendC {

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE>
__aicore__ constexpr MatmulApiStaticTiling GetMatmulApiTiling(const MatmulConfig& mmCFG,
                                                              int32_t l1Size = SAGE_CHIP_L1_BYTES) {
    MatmulApiStaticTiling t;
    t.cfg = mmCFG;
    // sizes in half-bytes (int4b_t; a sparse B's dense half), its index 2 bits a dense value
    constexpr int64_t nibA = matmul_detail::operand_nibbles<A_TYPE>(), nibB = matmul_detail::operand_nibbles<B_TYPE>();
    constexpr bool sparse = matmul_detail::is_sparse_v<B_TYPE>;
    const int32_t bm = int32_t(mmCFG.basicM), bn = int32_t(mmCFG.basicN), bk = int32_t(mmCFG.basicK);
    if (bm == 0 || bn == 0 || bk == 0) return t;  // nothing constant: the runtime tiling decides
    t.baseM = bm, t.baseN = bn, t.baseK = bk;
    t.dbL0A = bm * bk * nibA <= SAGE_CHIP_L0A_BYTES ? 2 : 1;
    t.dbL0B = bn * bk * nibB <= SAGE_CHIP_L0B_BYTES ? 2 : 1;
    t.isBias = mmCFG.enableSetBias ? 1 : 0;
    if (mmCFG.singleCoreM == 0 || mmCFG.singleCoreN == 0 || mmCFG.singleCoreK == 0) return t;
    t.M = t.singleCoreM = int32_t(mmCFG.singleCoreM);
    t.N = t.singleCoreN = int32_t(mmCFG.singleCoreN);
    t.Ka = t.Kb = t.singleCoreK = int32_t(mmCFG.singleCoreK);
    const int64_t bias = t.isBias ? int64_t(bn) * 4 : 0;
    const int64_t slice = (int64_t(bm) * bk * nibA + int64_t(bn) * bk * nibB) / 2 + (sparse ? int64_t(bn) * bk / 8 : 0);
    const auto l1 = matmul_tiling::l1_steps(matmul_tiling::ceil_div(t.singleCoreK, bk), slice, bias, l1Size);
    t.stepM = 1, t.stepN = 1, t.stepKa = t.stepKb = l1.step, t.depthA1 = t.depthB1 = l1.depth;
    t.iterateOrder = mmCFG.iterateOrder == IterateOrder::ORDER_N ? 1 : 0;
    t.dbL0C = 1, t.shareMode = 0, t.shareUbSize = 0, t.transLength = 0;
    t.shareL1Size = int32_t(l1.depth * slice + bias);
    t.shareL0CSize = bm * bn * 4;
    return t;
}

namespace matmul_detail {

constexpr const MatmulConfig& config_of(const MatmulConfig& c) { return c; }
constexpr const MatmulConfig& config_of(const MatmulApiStaticTiling& t) { return t.cfg; }
constexpr bool is_static(const MatmulConfig&) { return false; }
constexpr bool is_static(const MatmulApiStaticTiling&) { return true; }

// The tiling a Matmul runs: the runtime one (nullptr: none) under the constant fields (see top).
inline TCubeTiling static_tiling(const MatmulConfig&, const TCubeTiling* runtime) { return *runtime; }
inline TCubeTiling static_tiling(const MatmulApiStaticTiling& s, const TCubeTiling* runtime) {
    TCubeTiling t = runtime ? *runtime : TCubeTiling{};
#define SAGE_OVERRIDE(name) \
    if (s.name >= 0) t.name = s.name;
    const TCubeTiling keep = t;
    SAGE_TCUBE_TILING_FIELDS(SAGE_OVERRIDE)
#undef SAGE_OVERRIDE
    if (runtime != nullptr) t.M = keep.M, t.N = keep.N, t.Ka = keep.Ka, t.Kb = keep.Kb;
    if (t.usedCoreNum <= 0) t.usedCoreNum = 1;
    return t;
}

}  // namespace matmul_detail
}  // namespace AscendC
