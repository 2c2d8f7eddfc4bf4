// The Matmul API's host tiling (asc-devkit include/adv_api/matmul/matmul_tiling.h and
// matmul_tiling_base.h): matmul_tiling::MatmulApiTiling (one core), MultiCoreMatmulTiling (SetDim
// cores) and BatchMatmulTiling fill a TCubeTiling for the kernel's Matmul object.
//
// The tiling rule sage-npu implements (documented in docs/cube.md "The Matmul API"; step 0 and step 1
// are the split-MN path and the core split CANN's 910B tiling makes, in sage-npu's own code; steps 2-4
// are sage-npu's own) on the chip profile's memory sizes, or SetBufferSpace's:
//   0. Split-MN (MultiCoreMatmulTiling, SetOrgShape without SetShape, M >= 128, M x N > 26214 per
//      core; core_split.h split_mn_applies): cores, base block and L1 steps by CANN's multi-core rule
//      (SplitMnBase, split_l1_steps), in place of steps 1-3.
//   1. Cores (MultiCoreMatmulTiling): core_split.h's search for mDim x nDim (x kDim with
//      EnableMultiCoreSplitK), in 16-row/column units of M and N; singleCoreM = ceil(M16 * 16 / mDim),
//      singleCoreN likewise, singleCoreK = ceil(K16 / kDim) 32-byte units; usedCoreNum = mDim * nDim *
//      kDim. SetSingleShape's sizes are kept as given.
//   2. Base block: baseM = min(singleCoreM rounded up to 16, 128), baseN = min(singleCoreN rounded up
//      to 16 (32 for int8, 64 for int4), 256); a C in the UB (VECIN, VECCALC, VECOUT) keeps baseM *
//      baseN * sizeof(C) <= half the UB (SetBufferSpace's ubSize), halving baseN, then baseM; baseK
//      the largest multiple of kAlign (16 elements, 32 for int8, 64 for int4 and for a sparse B;
//      sizes count int4 as half a byte) up to singleCoreK rounded up to kAlign with both L0A and L0B
//      double-buffered (dbL0A = dbL0B = 2: 2 * baseM * baseK * sizeof(A) <= L0A and
//      2 * baseN * baseK * sizeof(B) <= L0B);
//      baseM * baseN * 4 <= L0C (dbL0C = 1) and, with a bias, baseN * 4 <= the BiasTable.
//   3. L1: stepM = stepN = 1; stepKa = stepKb = the largest factor s of ceil(singleCoreK / baseK)
//      (CANN's tiling also rounds its K step down to a factor: no short last L1 load) whose buffers
//      fit L1: depth = 2s (double-buffered) when s does not cover K, else s; depthA1 = depthB1 = depth;
//      depth * (baseM + baseN) * baseK * sizeof(A) + a bias's baseN * 4 <= L1.
//      With SetSparse(true) (int8, 4:2 sparse B) B's buffers hold its dense half (baseK / 2 of
//      each column) plus the index, baseK / 8 bytes a column, in L1.
//   4. iterateOrder 0 (ORDER_M: along M first, then N).
// GetTiling returns -1 when no tiling fits or a type is not one the cube multiplies.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>  // host code prints GetTiling's failure with std::cout, as with CANN's header
#include <map>
#include <vector>

#include "../../kernel_tiling/kernel_tiling.h"
#include "../../tiling/platform/platform_ascendc.h"
#include "core_split.h"

namespace matmul_tiling {

enum class DataType : int32_t {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_UINT16 = 7,
    DT_UINT32 = 8,
    DT_INT64 = 9,
    DT_UINT64 = 10,
    DT_DOUBLE = 11,
    DT_BOOL = 12,
    DT_BF16 = 27,
    DT_UNDEFINED = 28,
    DT_INT4 = 29,
    DT_BFLOAT16 = 33,
    DT_HIFLOAT8 = 34,
    DT_FLOAT8_E4M3FN = 35,
    DT_FLOAT8_E5M2 = 36,
    DT_FLOAT4_E2M1 = 37,
    DT_FLOAT8_E8M0 = 38,
    DT_FLOAT4_E1M2 = 39,
    DT_MAX = 40,
};

enum class TPosition : int32_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM,
                                 SHM = SPM, TSCM, MAX };
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR = ND, COLUMN_MAJOR = 8 };
enum class MatrixTraverse : int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };
enum class MatrixMadType : int32_t { NORMAL = 0, HF32 = 1, MXMODE = 2 };
enum class DequantType : int32_t { SCALAR = 0, TENSOR = 1 };
enum class ScheduleType : int32_t { INNER_PRODUCT = 0, OUTER_PRODUCT = 1, N_BUFFER_33 = 2 };

struct MatTilingType {
    TPosition pos = TPosition::GM;
    CubeFormat type = CubeFormat::ND;
    DataType dataType = DataType::DT_FLOAT;
    bool isTrans = false;
    bool isDB = false;
};

struct MatmulConfigParams {
    int32_t mmConfigType;
    bool enableL1CacheUB;
    ScheduleType scheduleType;
    MatrixTraverse traverse;
    bool enVecND2NZ;
    MatmulConfigParams(int32_t mmConfigTypeIn = 1, bool enableL1CacheUBIn = false,
                       ScheduleType scheduleTypeIn = ScheduleType::INNER_PRODUCT,
                       MatrixTraverse traverseIn = MatrixTraverse::NOSET, bool enVecND2NZIn = false)
        : mmConfigType(mmConfigTypeIn), enableL1CacheUB(enableL1CacheUBIn), scheduleType(scheduleTypeIn),
          traverse(traverseIn), enVecND2NZ(enVecND2NZIn) {}
};

// Half-bytes (nibbles) of an element of a type the cube multiplies (0: one it does not); int4
// packs two elements a byte, so sizes count nibbles and halve them into bytes.
inline int32_t cube_dtype_nibbles(DataType t) {
    switch (t) {
        case DataType::DT_FLOAT: case DataType::DT_INT32: return 8;
        case DataType::DT_FLOAT16: case DataType::DT_BF16: case DataType::DT_BFLOAT16: return 4;
        case DataType::DT_INT8: case DataType::DT_UINT8: return 2;
        case DataType::DT_INT4: return 1;
        default: return 0;
    }
}
// Elements of a fractal row (32 bytes) the base block's K and N round to: 16 for 2- and 4-byte
// types, 32 for int8, 64 for int4 (the transposing loads move squares of that many).
inline int32_t cube_align(int32_t nibbles) { return nibbles > 0 && nibbles <= 2 ? 64 / nibbles : 16; }

constexpr int32_t ceil_div(int64_t a, int64_t b) { return int32_t((a + b - 1) / b); }
constexpr int32_t round_up(int64_t a, int64_t b) { return int32_t((a + b - 1) / b * b); }

// Step 3 of the rule, shared with the kernel's constant tiling (constant_tiling.h): the largest
// factor stepK of kIter whose A1 + B1 buffers fit L1, double-buffered (depth 2 * stepK) unless one step
// covers K. `slice` is the bytes of one baseK slice of A and B; step 0 when none fits.
struct L1Steps {
    int32_t step;
    int32_t depth;
};
constexpr L1Steps l1_steps(int32_t kIter, int64_t slice, int64_t bias, int64_t l1) {
    L1Steps best{0, 0};
    for (int32_t s = 1; s <= kIter; ++s) {
        const int32_t d = s < kIter ? 2 * s : s;
        if (d * slice + bias > l1) break;
        if (kIter % s == 0) best = {s, d};  // a factor of K's slices: no short last L1 load
    }
    return best;
}

// The 910B's L1 steps for the multi-core split of a shape given by SetOrgShape alone (core_split.h
// split_mn_applies): by L1's size, not K's. Each of A and B double-buffered takes as many base blocks as
// half of L1 holds (B's half counting 128 more bytes); when both do not fit L1 less a bias's baseN * 4,
// the narrower side halves; step = depth / 2, cut back (K past one step) until a step of K is a whole
// 512 bytes (256 bytes up to 512, when a baseK slice divides it), then the larger step a multiple of
// the smaller. `aBytes`, `bBytes`: one base block of A and of B in L1; `kBytes`: baseK's bytes.
struct SplitL1 {
    int32_t stepKa, stepKb, depthA1, depthB1;
};
inline int32_t split_step_k(int32_t step, int32_t kBytes, int32_t baseK, int32_t singleK) {
    if (int64_t(step) * baseK >= singleK) return step;
    const int32_t unit = step * kBytes > 512 ? 512 : step * kBytes > 256 ? 256 : 0;
    if (unit == 0 || step * kBytes % unit == 0 || unit % kBytes != 0) return step;
    while (step * kBytes % unit != 0 && step > 1) --step;
    return step;
}
inline SplitL1 split_l1_steps(int64_t l1, int64_t aSlots, int64_t bSlots, int64_t aBytes, int64_t bBytes,
                              int64_t bias, bool aNarrower, int32_t kBytes, int32_t baseK, int32_t singleK) {
    int64_t da = aSlots, db = bSlots;
    if (da * aBytes + db * bBytes > l1 - bias) (aNarrower ? da : db) /= 2;
    int32_t sa = split_step_k(int32_t(da / 2), kBytes, baseK, singleK);
    int32_t sb = split_step_k(int32_t(db / 2), kBytes, baseK, singleK);
    if (sa >= sb && sb != 0) sa = sa / sb * sb;
    else if (sa != 0) sb = sb / sa * sa;
    return {sa, sb, 2 * sa, 2 * sb};
}

class MatmulApiTilingBase {
public:
    MatmulApiTilingBase() { ResetBuffers(); }
    explicit MatmulApiTilingBase(const platform_ascendc::PlatformAscendC&) { ResetBuffers(); }
    virtual ~MatmulApiTilingBase() = default;

    int32_t SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false) {
        aType_ = {pos, type, dataType, isTrans, false};
        return 0;
    }
    int32_t SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false) {
        bType_ = {pos, type, dataType, isTrans, false};
        return 0;
    }
    int32_t SetCType(TPosition pos, CubeFormat type, DataType dataType) {
        cType_ = {pos, type, dataType, false, false};
        return 0;
    }
    int32_t SetBiasType(TPosition pos, CubeFormat type, DataType dataType) {
        biasType_ = {pos, type, dataType, false, false};
        return 0;
    }
    int32_t SetDequantType(DequantType dequantType) {
        deqType = dequantType;
        return 0;
    }
    virtual int32_t SetShape(int32_t m, int32_t n, int32_t k) {
        singleM = m, singleN = n, singleK = k;
        return 0;
    }
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn) { return SetOrgShape(orgMIn, orgNIn, orgKIn, orgKIn); }
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKaIn, int32_t orgKbIn) {
        orgM = orgMIn, orgN = orgNIn, orgKa = orgKaIn, orgKb = orgKbIn;
        return 0;
    }
    int32_t SetBatchNum(int32_t batch) {
        batchNum = batch;
        return 0;
    }
    // A batched Matmul's layouts (IterateBatch; kernel side batch_layout.h): the B, S, N, G, D axes of
    // A, B and C (C's S is S1, its D is S2), copied into TCubeTiling's ALayoutInfoB... fields.
    int32_t SetALayout(int32_t b, int32_t s, int32_t n, int32_t g, int32_t d) { return Layout(aLayout_, b, s, n, g, d); }
    int32_t SetBLayout(int32_t b, int32_t s, int32_t n, int32_t g, int32_t d) { return Layout(bLayout_, b, s, n, g, d); }
    int32_t SetCLayout(int32_t b, int32_t s, int32_t n, int32_t g, int32_t d) { return Layout(cLayout_, b, s, n, g, d); }
    // NORMAL (BMNK) layout: batchA M x K and batchB K x N matrices, one after another.
    int32_t SetBatchInfoForNormal(int32_t batchA, int32_t batchB, int32_t m, int32_t n, int32_t k) {
        Layout(aLayout_, batchA, m, 1, 1, k);
        Layout(bLayout_, batchB, k, 1, 1, n);
        Layout(cLayout_, std::max(batchA, batchB), m, 1, 1, n);
        if (singleM <= 0) singleM = m, singleN = n, singleK = k;
        return 0;
    }
    int32_t EnableBias(bool isBiasIn = false) {
        isBias = isBiasIn;
        return 0;
    }
    int32_t SetBias(bool isBiasIn = false) { return EnableBias(isBiasIn); }
    // Fixes the base block (each -1 left to the rule).
    int32_t SetFixSplit(int32_t baseMIn = -1, int32_t baseNIn = -1, int32_t baseKIn = -1) {
        fixM_ = baseMIn, fixN_ = baseNIn, fixK_ = baseKIn;
        return 0;
    }
    // The bytes the tiling may use; -1 keeps the chip's size.
    int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1, int32_t btSize = -1) {
        ResetBuffers();
        if (l1Size > 0) l1_ = l1Size;
        if (l0CSize > 0) l0c_ = l0CSize;
        if (ubSize > 0) ub_ = ubSize;
        if (btSize > 0) bt_ = btSize;
        return 0;
    }
    int32_t SetTraverse(MatrixTraverse traverse) {
        traverse_ = traverse;
        return 0;
    }
    // The 4:2 sparse matmul (SparseMatmulType B with SetSparseIndex on the kernel side): B's buffers
    // hold its dense half and the index. Before GetTiling (the SetSparse page).
    int32_t SetSparse(bool isSparseIn = false) {
        isSparse_ = isSparseIn;
        return 0;
    }
    int32_t SetMadType(MatrixMadType madType) {
        madType_ = madType;
        return 0;
    }
    int32_t SetDoubleBuffer(bool, bool, bool, bool, bool = true, bool = true) { return 0; }
    void SetMatmulConfigParams(int32_t mmConfigTypeIn = 1, bool enableL1CacheUBIn = false,
                               ScheduleType scheduleTypeIn = ScheduleType::INNER_PRODUCT,
                               MatrixTraverse traverseIn = MatrixTraverse::NOSET, bool enVecND2NZIn = false) {
        SetMatmulConfigParams(MatmulConfigParams(mmConfigTypeIn, enableL1CacheUBIn, scheduleTypeIn, traverseIn,
                                                 enVecND2NZIn));
    }
    void SetMatmulConfigParams(const MatmulConfigParams& configParams) {
        if (configParams.traverse != MatrixTraverse::NOSET) traverse_ = configParams.traverse;
        schedule_ = configParams.scheduleType;
    }
    int32_t GetBaseM() const { return baseM; }
    int32_t GetBaseN() const { return baseN; }
    int32_t GetBaseK() const { return baseK; }
    virtual int64_t GetTiling(AscendC::tiling::TCubeTiling& tiling) = 0;

    AscendC::tiling::TCubeTiling tiling_;
    MatTilingType aType_, bType_, cType_, biasType_;
    bool isBias = false;
    int32_t orgM = 0, orgN = 0, orgKa = 0, orgKb = 0;
    int32_t batchNum = 0;
    int32_t singleM = 0, singleN = 0, singleK = 0;
    int32_t singleCoreM = 0, singleCoreN = 0, singleCoreK = 0;
    int32_t baseM = 0, baseN = 0, baseK = 0;
    DequantType deqType = DequantType::SCALAR;
    MatrixTraverse traverse_ = MatrixTraverse::FIRSTM;
    MatrixMadType madType_ = MatrixMadType::NORMAL;
    ScheduleType schedule_ = ScheduleType::INNER_PRODUCT;

protected:
    int32_t l1_ = 0, l0a_ = 0, l0b_ = 0, l0c_ = 0, ub_ = 0, bt_ = 0;
    int32_t fixM_ = -1, fixN_ = -1, fixK_ = -1;
    bool isSparse_ = false;
    bool splitMn_ = false;  // core_split.h's split_mn_applies: base block and L1 by the 910B's split-MN rule
    int32_t aLayout_[5] = {}, bLayout_[5] = {}, cLayout_[5] = {};

    static int32_t Layout(int32_t (&dst)[5], int32_t b, int32_t s, int32_t n, int32_t g, int32_t d) {
        if (b <= 0 || s <= 0 || n <= 0 || g <= 0 || d <= 0) {
            std::fprintf(stderr, "matmul_tiling: a layout's axes must be positive (got %d, %d, %d, %d, %d)\n", b, s,
                         n, g, d);
            return -1;
        }
        dst[0] = b, dst[1] = s, dst[2] = n, dst[3] = g, dst[4] = d;
        return 0;
    }

    void ResetBuffers() {
        l1_ = SAGE_CHIP_L1_BYTES, l0a_ = SAGE_CHIP_L0A_BYTES, l0b_ = SAGE_CHIP_L0B_BYTES;
        l0c_ = SAGE_CHIP_L0C_BYTES, ub_ = SAGE_CHIP_UB_BYTES, bt_ = SAGE_CHIP_BT_BYTES;
    }
    bool Fail(const char* why) const {
        std::fprintf(stderr, "matmul_tiling: GetTiling failed: %s\n", why);
        return false;
    }
    // Step 2's caps of the base block for an m x n part (SetFixSplit's when set). A C that goes to the
    // UB keeps its block to half the UB: the kernel holds the block it gets and the one it makes of it
    // (matmul_async_iterate's two queues of baseM x baseN); baseN halves (256 -> 128 keeps the
    // Fixpipe's rows 512-byte aligned, the tiling-strategy page's two blocks), then baseM.
    void BaseCaps(int32_t m, int32_t n, int32_t& bm, int32_t& bn) const {
        const int32_t nAlign = cube_align(std::max(cube_dtype_nibbles(aType_.dataType), 1));
        bm = fixM_ > 0 ? fixM_ : std::min(round_up(m, 16), 128);
        bn = fixN_ > 0 ? fixN_ : std::min(round_up(n, nAlign), 256);
        const bool cInUb = cType_.pos == TPosition::VECIN || cType_.pos == TPosition::VECCALC ||
                           cType_.pos == TPosition::VECOUT;
        const int64_t cBytes = std::max(cube_dtype_nibbles(cType_.dataType) / 2, 1);
        while (cInUb && int64_t(bm) * bn * cBytes > ub_ / 2) {
            if (fixN_ <= 0 && bn / 2 >= nAlign && bn / 2 % nAlign == 0) bn /= 2;
            else if (fixM_ <= 0 && bm / 2 >= 16 && bm / 2 % 16 == 0) bm /= 2;
            else break;
        }
    }
    // The split-MN path's base block (CANN's basic block of a multi-core split): 128 x 256 (256 x 128
    // with both A and B transposed; baseM 256 on a 256 KB L0C) x 128 bytes of K, SetFixSplit's M and N.
    void SplitMnBase(int32_t nib) {
        const bool both = aType_.isTrans && bType_.isTrans;
        baseM = fixM_ > 0 ? fixM_ : both || l0c_ == 262144 ? 256 : 128;
        baseN = fixN_ > 0 ? fixN_ : both ? 128 : 256;
        baseK = 256 / nib;
    }
    // Steps 2 to 4 of the rule for singleCoreM/N/K already set; false (and a line on stderr) when
    // nothing fits.
    bool Blocks() {
        const int32_t nib = cube_dtype_nibbles(aType_.dataType);
        if (nib == 0 || cube_dtype_nibbles(bType_.dataType) != nib) return Fail("A and B must be one cube input type");
        if (singleCoreM <= 0 || singleCoreN <= 0 || singleCoreK <= 0) return Fail("SetShape needs m, n, k > 0");
        if (isSparse_ && nib != 2) return Fail("SetSparse(true) needs int8 A and B (the 4:2 sparse matmul)");
        // 4:2 sparse: K in whole 64s, so each slice's dense half of B is whole 32-byte fractals
        const int32_t kAlign = isSparse_ ? 64 : cube_align(nib), nAlign = cube_align(nib);
        // B's bytes per element in nibbles: the dense half only when sparse
        const int32_t nibB = isSparse_ ? nib / 2 : nib;
        if (splitMn_) {
            SplitMnBase(nib);
        } else {
            BaseCaps(singleCoreM, singleCoreN, baseM, baseN);
        }
        if (isBias && baseN * 4 > bt_) baseN = bt_ / 4 / nAlign * nAlign;
        while (int64_t(baseM) * baseN * 4 > l0c_ && baseN > nAlign) baseN -= nAlign;
        if (int64_t(baseM) * baseN * 4 > l0c_) return Fail("baseM x baseN floats do not fit L0C");
        if (splitMn_) {  // SplitMnBase's 128 bytes of K
        } else if (fixK_ > 0) {
            baseK = fixK_;
        } else {  // L0A and L0B double-buffered: 2 * base * baseK * nibbles / 2 bytes each
            const int64_t byA = l0a_ / (int64_t(baseM) * nib), byB = l0b_ / (int64_t(baseN) * nibB);
            baseK = int32_t(std::min<int64_t>({byA, byB, round_up(singleCoreK, kAlign)}) / kAlign * kAlign);
        }
        if (baseK <= 0) return Fail("no baseK fits L0A and L0B");
        const int64_t bias = isBias ? int64_t(baseN) * 4 : 0;
        const int64_t aSlice = SliceBytes(baseM, 0, baseK, nib, nibB), bSlice = SliceBytes(0, baseN, baseK, nib, nibB);
        SplitL1 l1{0, 0, 0, 0};
        if (splitMn_) {
            l1 = split_l1_steps(l1_, int64_t(l1_ / 2 / baseM / baseK) * 8 / (nib * 4),
                                int64_t((l1_ + 256) / 2 / baseN / baseK) * 8 / (nib * 4), aSlice, bSlice, bias,
                                baseM <= baseN, baseK * nib / 2, baseK, singleCoreK);
        } else {
            const L1Steps st = l1_steps(ceil_div(singleCoreK, baseK), aSlice + bSlice, bias, l1_);
            l1 = {st.step, st.step, st.depth, st.depth};
        }
        if (l1.stepKa == 0 || l1.stepKb == 0) return Fail("one baseK slice of A and B does not fit L1");
        auto& t = tiling_;
        t.baseM = baseM, t.baseN = baseN, t.baseK = baseK;
        t.singleCoreM = singleCoreM, t.singleCoreN = singleCoreN, t.singleCoreK = singleCoreK;
        t.stepM = 1, t.stepN = 1, t.stepKa = l1.stepKa, t.stepKb = l1.stepKb;
        t.depthA1 = l1.depthA1, t.depthB1 = l1.depthB1;
        t.dbL0A = 2, t.dbL0B = 2, t.dbL0C = 1;
        t.iterateOrder = traverse_ == MatrixTraverse::FIRSTN ? 1 : 0;
        t.isBias = isBias ? 1 : 0;
        t.shareMode = 0;
        t.shareL1Size = int32_t(l1.depthA1 * aSlice + l1.depthB1 * bSlice + bias);
        if (schedule_ == ScheduleType::N_BUFFER_33 && !NBuffer33Steps(nib, nibB, bias)) return false;
        t.shareL0CSize = baseM * baseN * 4;
        t.shareUbSize = 0;
        t.batchM = 1, t.batchN = 1, t.singleBatchM = 1, t.singleBatchN = 1;
        t.BatchNum = batchNum;
        t.ALayoutInfoB = aLayout_[0], t.ALayoutInfoS = aLayout_[1], t.ALayoutInfoN = aLayout_[2];
        t.ALayoutInfoG = aLayout_[3], t.ALayoutInfoD = aLayout_[4];
        t.BLayoutInfoB = bLayout_[0], t.BLayoutInfoS = bLayout_[1], t.BLayoutInfoN = bLayout_[2];
        t.BLayoutInfoG = bLayout_[3], t.BLayoutInfoD = bLayout_[4];
        t.CLayoutInfoB = cLayout_[0], t.CLayoutInfoS1 = cLayout_[1], t.CLayoutInfoN = cLayout_[2];
        t.CLayoutInfoG = cLayout_[3], t.CLayoutInfoS2 = cLayout_[4];
        return true;
    }
    // ScheduleType::N_BUFFER_33 (the policy page's limits): all of K in at most 3 baseK slices
    // (stepKa = stepKb = their count), A's stepM (<= 3) x stepKa base blocks held in L1 and B's
    // stepKb blocks double-buffered, fewer block rows when L1 does not hold them.
    bool NBuffer33Steps(int32_t nib, int32_t nibB, int64_t bias) {
        auto& t = tiling_;
        const int32_t kIter = ceil_div(singleCoreK, baseK);
        if (kIter > 3) return Fail("N_BUFFER_33 needs singleCoreK within 3 baseK slices (raise baseK)");
        const int64_t a = SliceBytes(baseM, 0, baseK, nib, nibB), b = SliceBytes(0, baseN, baseK, nib, nibB);
        for (int32_t m = std::min(3, ceil_div(singleCoreM, baseM)); m >= 1; --m) {
            const int32_t depthB = a * m * kIter + b * 2 * kIter + bias <= l1_ ? 2 * kIter : kIter;
            if (a * m * kIter + b * depthB + bias > l1_) continue;
            t.stepM = m, t.stepKa = kIter, t.stepKb = kIter, t.depthA1 = m * kIter, t.depthB1 = depthB;
            t.shareL1Size = int32_t(a * m * kIter + b * depthB + bias);
            return true;
        }
        return Fail("N_BUFFER_33: stepKa base blocks of A and B do not fit L1");
    }
    // The L1 bytes of one baseK slice of A and B (element sizes in nibbles); a sparse B adds its
    // index, 2 bits per dense value (the dense half of baseK), so baseK / 8 bytes a column.
    int64_t SliceBytes(int32_t bm, int32_t bn, int32_t bk, int32_t nib, int32_t nibB) const {
        const int64_t idx = isSparse_ ? int64_t(bn) * bk / 8 : 0;
        return (int64_t(bm) * bk * nib + int64_t(bn) * bk * nibB) / 2 + idx;
    }
    // The whole shape and the original shape (SetOrgShape's, else SetShape's).
    bool Shapes() {
        // SetShape's -1 (or no SetShape): the original shape's size
        if (singleM <= 0) singleM = orgM;
        if (singleN <= 0) singleN = orgN;
        if (singleK <= 0) singleK = orgKa;
        if (singleM <= 0 || singleN <= 0 || singleK <= 0) return Fail("SetShape(m, n, k) needs each > 0");
        auto& t = tiling_;
        t.M = orgM > 0 ? orgM : singleM;
        t.N = orgN > 0 ? orgN : singleN;
        t.Ka = orgKa > 0 ? orgKa : singleK;
        t.Kb = orgKb > 0 ? orgKb : singleK;
        return true;
    }
};

// One core computes the whole SetShape(m, n, k).
class MatmulApiTiling : public MatmulApiTilingBase {
public:
    MatmulApiTiling() = default;
    explicit MatmulApiTiling(const platform_ascendc::PlatformAscendC& p) : MatmulApiTilingBase(p) {}
    int64_t GetTiling(AscendC::tiling::TCubeTiling& tiling) override {
        tiling_ = AscendC::tiling::TCubeTiling{};
        if (!Shapes()) return -1;
        singleCoreM = singleM, singleCoreN = singleN, singleCoreK = singleK;
        if (!Blocks()) return -1;
        tiling_.usedCoreNum = 1;
        tiling = tiling_;
        return 0;
    }
};

// SetDim(cores) cores, split over M and N by step 1 of the rule.
class MultiCoreMatmulTiling : public MatmulApiTilingBase {
public:
    MultiCoreMatmulTiling() = default;
    explicit MultiCoreMatmulTiling(const platform_ascendc::PlatformAscendC& p)
        : MatmulApiTilingBase(p), dim_(int32_t(p.GetCoreNumAic())) {}
    int32_t SetDim(int32_t dim) {
        dim_ = dim;
        return 0;
    }
    int32_t SetSingleShape(int32_t singleMIn = -1, int32_t singleNIn = -1, int32_t singleKIn = -1) {
        fixSingleM_ = singleMIn, fixSingleN_ = singleNIn, fixSingleK_ = singleKIn;
        return 0;
    }
    int32_t SetSingleRange(int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1) {
        return 0;
    }
    int32_t SetAlignSplit(int32_t, int32_t, int32_t) { return 0; }
    // Split K over the cores too (step 1 of the rule with kDim); the kernel accumulates the cores'
    // parts of C into GM with enAtomic 1, C cleared first. No bias then (the EnableMultiCoreSplitK page).
    void EnableMultiCoreSplitK(bool flag) { splitK_ = flag; }
    void SetSplitK(bool flag) { splitK_ = flag; }
    int32_t GetSingleShape(int32_t& shapeM, int32_t& shapeN, int32_t& shapeK) const {
        shapeM = singleCoreM, shapeN = singleCoreN, shapeK = singleCoreK;
        return 0;
    }
    int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) const {
        dim = used_, mDim = mDim_, nDim = nDim_;
        return 0;
    }
    int64_t GetTiling(AscendC::tiling::TCubeTiling& tiling) override {
        tiling_ = AscendC::tiling::TCubeTiling{};
        const bool shapeGiven = singleM > 0 || singleN > 0;  // SetShape's M or N (CANN's singleM != -1)
        if (!Shapes()) return -1;
        // CANN's split-MN scenario (A and B in GM; SetSingleShape, a K split, N_BUFFER_33 and a sparse B
        // keep the search)
        const bool fixed = fixSingleM_ > 0 || fixSingleN_ > 0 || fixSingleK_ > 0;
        splitMn_ = !shapeGiven && !fixed && !splitK_ && !isSparse_ && schedule_ != ScheduleType::N_BUFFER_33 &&
                   aType_.pos == TPosition::GM && bType_.pos == TPosition::GM &&
                   core_split::split_mn_applies(singleM, singleN, dim_);
        if (dim_ <= 0) {
            Fail("SetDim needs at least one core");
            return -1;
        }
        if (splitK_ && isBias) {
            Fail("EnableMultiCoreSplitK with a bias: each core's part of K would add it (the page allows none)");
            return -1;
        }
        Split();
        if (!Blocks()) return -1;
        tiling_.usedCoreNum = used_;
        tiling = tiling_;
        return 0;
    }

private:
    int32_t dim_ = SAGE_CHIP_CUBE_CORES;
    int32_t fixSingleM_ = -1, fixSingleN_ = -1, fixSingleK_ = -1;
    int32_t used_ = 1, mDim_ = 1, nDim_ = 1, kDim_ = 1;
    bool splitK_ = false;

    // Step 1 of the rule (core_split.h): with SetSingleShape its M/N/K as given (parts past the cores
    // are the kernel's to walk); else the search's mDim x nDim (x kDim), each core ceil(M16 / mDim)
    // x ceil(N16 / nDim) elements of the shape rounded up to 16 (K likewise with a K split). An NZ A or
    // B, or an NZ C, rounds a core's N (M with a transposed A) up to 256 bytes while the last core
    // keeps a part.
    void Split() {
        const int32_t m16 = ceil_div(singleM, 16), n16 = ceil_div(singleN, 16);
        const int32_t kUnit = 64 / std::max(cube_dtype_nibbles(aType_.dataType), 1), k16 = ceil_div(singleK, kUnit);
        const bool fixed = fixSingleM_ > 0 || fixSingleN_ > 0 || fixSingleK_ > 0;
        core_split::SplitDims d = fixed ? core_split::SplitDims{} : SearchDims(m16, n16, k16);
        int32_t sm = d.m > 1 ? ceil_div(int64_t(m16) * 16, d.m) : singleM;
        int32_t sn = d.n > 1 ? ceil_div(int64_t(n16) * 16, d.n) : singleN;
        const int32_t sk = d.k > 1 ? ceil_div(k16, d.k) * kUnit : singleK;
        AlignParts(m16, n16, sk, d, sm, sn);
        if (fixSingleM_ > 0) sm = fixSingleM_;
        if (fixSingleN_ > 0) sn = fixSingleN_;
        singleCoreM = sm, singleCoreN = sn, singleCoreK = fixSingleK_ > 0 ? fixSingleK_ : sk;
        mDim_ = ceil_div(singleM, sm), nDim_ = ceil_div(singleN, sn);
        kDim_ = splitK_ ? ceil_div(singleK, singleCoreK) : 1;
        used_ = fixed ? std::min(mDim_ * nDim_ * kDim_, dim_) : d.m * d.n * d.k;
    }
    core_split::SplitDims SearchDims(int32_t m16, int32_t n16, int32_t k16) const {
        if (dim_ <= 1) return {};
        const int32_t aBits = std::max(cube_dtype_nibbles(aType_.dataType), 1) * 4;
        const int32_t bBits = std::max(cube_dtype_nibbles(bType_.dataType), 1) * 4;
        if (splitMn_) {
            const bool both = aType_.isTrans && bType_.isTrans;
            const int32_t base[3] = {fixM_ > 0 ? fixM_ : both || l0c_ == 262144 ? 256 : 128,
                                     fixN_ > 0 ? fixN_ : both ? 128 : 256, 1024 / aBits};
            return core_split::split_mn_dims(singleM, singleN, base, dim_, aType_.isTrans, bType_.isTrans, aBits, bBits);
        }
        if (schedule_ != ScheduleType::N_BUFFER_33) {
            const core_split::Shape s{m16, n16, k16, dim_, splitK_, aType_.isTrans, bType_.isTrans, l1_, l0a_, l0c_};
            return core_split::Search(s).Run();
        }
        // N_BUFFER_33's multi-core base block: 128 x 256 x (128 bytes of K), SetFixSplit's M and N
        const bool both = aType_.isTrans && bType_.isTrans;
        const int32_t base[3] = {fixM_ > 0 ? fixM_ : both ? 256 : 128, fixN_ > 0 ? fixN_ : both ? 128 : 256,
                                 1024 / aBits};
        core_split::SplitDims d;
        d.m = ceil_div(singleM, base[0] * 3);
        d.k = splitK_ ? ceil_div(singleK, base[2] * 3) : 1;
        d.n = core_split::nbuffer33_n_dim(singleM, singleN, d.m * d.k, base, dim_, aType_.isTrans, bType_.isTrans,
                                          aBits, bBits);
        return d;
    }
    // The 256-byte rounding of the cores' parts: N's (unless B is transposed and C is no larger than
    // A and B) with an NZ operand or on the split-MN path, M's there with a transposed A; both with an
    // NZ C.
    void AlignParts(int32_t m16, int32_t n16, int32_t sk, const core_split::SplitDims& d, int32_t& sm, int32_t& sn) const {
        if (dim_ <= 1) return;
        const bool nz = aType_.type == CubeFormat::NZ || bType_.type == CubeFormat::NZ || splitMn_;
        const bool cNz = cType_.type == CubeFormat::NZ;
        const int64_t aB = cube_dtype_nibbles(aType_.dataType), bB = cube_dtype_nibbles(bType_.dataType);
        const int64_t cB = std::max(cube_dtype_nibbles(cType_.dataType), 1);
        const bool cLarger = int64_t(sm) * sn * 2 * cB > int64_t(sn) * sk * aB + int64_t(sm) * sk * bB;
        bool ok = true;
        if (d.n > 1 && ((nz && (!bType_.isTrans || cLarger)) || cNz))
            sn = core_split::aligned_part(true, n16 * 16, d.n, int32_t(512 / std::max<int64_t>(bB, 1)), ok);
        if (d.m > 1 && ((nz && aType_.isTrans) || cNz))
            sm = core_split::aligned_part(true, m16 * 16, d.m, int32_t(512 / std::max<int64_t>(aB, 1)), ok);
    }
};

// Batched matmul: each batch one SetShape(m, n, k) matmul on one core (the rule's steps 2-4).
class BatchMatmulTiling : public MatmulApiTiling {
public:
    using MatmulApiTiling::MatmulApiTiling;
};

}  // namespace matmul_tiling
