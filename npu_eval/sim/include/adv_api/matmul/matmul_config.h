// The Matmul API's compile-time configuration (asc-devkit include/adv_api/matmul/matmul_config.h
// and impl's matmul_type_def.h): CubeFormat, MatmulType, MatmulConfig with the CFG_NORM / CFG_MDL
// / CFG_IBSHARE_NORM presets and their Get*Config functions, MatmulCallBackFunc.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../../kernel_tiling/kernel_tiling.h"
#include "../../utils/common_types.h"

constexpr uint32_t SHARED_CO1_BUFFER_SIZE = 64 * 1024;

enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR = ND, COLUMN_MAJOR = 8 };
enum class LayoutMode { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };
enum class BatchMode { NONE = 0, BATCH_LESS_THAN_L1, BATCH_LARGE_THAN_L1, SINGLE_LARGE_THAN_L1 };
enum BatchOutMode { SINGLE_BATCH = 0, MULTI_BATCH, DYNAMIC };
#ifndef ASCC_STRUCT_ITERATEORDER
#define ASCC_STRUCT_ITERATEORDER
enum class IterateOrder { ORDER_M = 0, ORDER_N, UNDEF };
#endif
enum class ScheduleType { INNER_PRODUCT = 0, OUTER_PRODUCT };
enum IterateMode : uint8_t {
    ITERATE_MODE_NORMAL = 0b00000001,
    ITERATE_MODE_ALL = 0b00000010,
    ITERATE_MODE_BATCH = 0b00000100,
    ITERATE_MODE_N_BATCH = 0b00001000,
    ITERATE_MODE_DEFAULT = 0b11111111,
};
enum class MatmulConfigMode { CONFIG_NORM, CONFIG_MDL, CONFIG_SPECIALMDL, CONFIG_IBSHARE };

// The real struct's fields, in its order (the emulator reads doNorm/doMultiDataLoad/doIBShareNorm
// for the template's name in messages, iterateOrder and enableRelu for the computation).
struct MatmulConfig {
    bool doNorm;
    bool doBasicBlock;
    bool doMultiDataLoad;
    uint32_t basicM;
    uint32_t basicN;
    uint32_t basicK;
    bool intrinsicsCheck;
    bool isNBatch;
    bool enVecND2NZ;
    bool doSpecialBasicBlock;
    uint32_t doMTE2Preload;
    uint32_t singleCoreM;
    uint32_t singleCoreN;
    uint32_t singleCoreK;
    uint32_t stepM;
    uint32_t stepN;
    uint32_t baseMN;
    uint32_t singleCoreMN;
    bool enUnitFlag = true;
    bool isPerTensor;
    bool hasAntiQuantOffset;
    bool doIBShareNorm;
    bool doSpecialMDL;
    bool enableInit = true;
    BatchMode batchMode;
    bool enableEnd = true;
    bool enableGetTensorC = true;
    bool enableSetOrgShape = true;
    bool enableSetBias = true;
    bool enableSetTail = true;
    bool enableQuantVector = true;
    bool enableSetDefineData = true;
    uint8_t iterateMode = IterateMode::ITERATE_MODE_DEFAULT;
    bool enableReuse = true;
    bool enableUBReuse;
    bool enableL1CacheUB;
    bool intraBlockPartSum = false;
    IterateOrder iterateOrder{IterateOrder::UNDEF};
    ScheduleType scheduleType;
    bool enableDoubleCache;
    bool isBiasBatch = true;
    bool enableStaticPadZeros = false;
    bool isPartialOutput = false;
    bool enableMixDualMaster = false;
    bool isA2B2Shared = false;
    bool isEnableChannelSplit = false;
    bool enableKdimReorderLoad = false;
    bool isCO1Shared = false;
    uint32_t sharedCO1BufferSize = SHARED_CO1_BUFFER_SIZE;
    BatchOutMode bmmOutMode = BatchOutMode::SINGLE_BATCH;
    bool enableL1BankConflictOptimise = false;
    bool enableRelu = false;
};

__aicore__ constexpr MatmulConfig GetNormalConfig(const bool intrinsicsLimit = false, const bool batchLoop = false,
                                                  const bool isVecND2NZ = false,
                                                  const BatchMode bmmMode = BatchMode::BATCH_LESS_THAN_L1,
                                                  const bool isMsgReuse = true,
                                                  const IterateOrder iterateOrder = IterateOrder::UNDEF,
                                                  const ScheduleType scheduleType = ScheduleType::INNER_PRODUCT,
                                                  const bool enUnitFlag = true, const bool enableMixDualMaster = false,
                                                  const BatchOutMode bmmOutMode = BatchOutMode::SINGLE_BATCH) {
    MatmulConfig c{};
    c.doNorm = true, c.intrinsicsCheck = intrinsicsLimit, c.isNBatch = batchLoop, c.enVecND2NZ = isVecND2NZ;
    c.batchMode = bmmMode, c.enableReuse = isMsgReuse, c.iterateOrder = iterateOrder, c.scheduleType = scheduleType;
    c.enUnitFlag = enUnitFlag, c.enableMixDualMaster = enableMixDualMaster, c.bmmOutMode = bmmOutMode;
    return c;
}
__aicore__ constexpr MatmulConfig GetMDLConfig(const bool intrinsicsLimit = false, const bool batchLoop = false,
                                               const uint32_t doMTE2Preload = 0, const bool isVecND2NZ = false,
                                               bool isPerTensor = false, bool hasAntiQuantOffset = false,
                                               const bool enUnitFlag = false, const bool isMsgReuse = true,
                                               const bool enableUBReuse = true, const bool enableL1CacheUB = false,
                                               const bool enableMixDualMaster = false,
                                               const bool enableKdimReorderLoad = false) {
    MatmulConfig c{};
    c.doMultiDataLoad = true, c.intrinsicsCheck = intrinsicsLimit, c.isNBatch = batchLoop;
    c.doMTE2Preload = doMTE2Preload, c.enVecND2NZ = isVecND2NZ, c.isPerTensor = isPerTensor;
    c.hasAntiQuantOffset = hasAntiQuantOffset, c.enUnitFlag = enUnitFlag, c.enableReuse = isMsgReuse;
    c.enableUBReuse = enableUBReuse, c.enableL1CacheUB = enableL1CacheUB, c.enableMixDualMaster = enableMixDualMaster;
    c.enableKdimReorderLoad = enableKdimReorderLoad, c.iterateOrder = IterateOrder::UNDEF;
    return c;
}
__aicore__ constexpr MatmulConfig GetSpecialMDLConfig(const bool intrinsicsLimit = false,
                                                      const bool batchLoop = false, const uint32_t doMTE2Preload = 0,
                                                      const bool isVecND2NZ = false, bool isPerTensor = false,
                                                      bool hasAntiQuantOffset = false) {
    MatmulConfig c = GetMDLConfig(intrinsicsLimit, batchLoop, doMTE2Preload, isVecND2NZ, isPerTensor,
                                  hasAntiQuantOffset);
    c.doMultiDataLoad = false, c.doSpecialMDL = true;
    return c;
}
__aicore__ constexpr MatmulConfig GetIBShareNormConfig(const bool intrinsicsLimit = false,
                                                       const bool batchLoop = false, const bool isVecND2NZ = false,
                                                       const BatchMode bmmMode = BatchMode::BATCH_LESS_THAN_L1,
                                                       const bool isDoubleCache = false,
                                                       const bool enUnitFlag = true) {
    MatmulConfig c = GetNormalConfig(intrinsicsLimit, batchLoop, isVecND2NZ, bmmMode);
    c.doNorm = false, c.doIBShareNorm = true, c.enableDoubleCache = isDoubleCache, c.enUnitFlag = enUnitFlag;
    return c;
}
__aicore__ constexpr MatmulConfig GetBasicConfig(const uint32_t basicM, const uint32_t basicN, const uint32_t basicK,
                                                 const bool intrinsicsLimit = false, const bool batchLoop = false,
                                                 const BatchMode bmmMode = BatchMode::BATCH_LESS_THAN_L1) {
    MatmulConfig c = GetNormalConfig(intrinsicsLimit, batchLoop, false, bmmMode);
    c.doNorm = false, c.doBasicBlock = true, c.basicM = basicM, c.basicN = basicN, c.basicK = basicK;
    return c;
}

constexpr MatmulConfig CFG_NORM = GetNormalConfig();
constexpr MatmulConfig CFG_MDL = GetMDLConfig();
constexpr MatmulConfig CFG_IBSHARE_NORM = GetIBShareNormConfig();
constexpr MatmulConfig MM_CFG_NO_PRELOAD = GetMDLConfig(false, false, 0);
constexpr MatmulConfig MM_CFG_PRELOAD_M = GetMDLConfig(false, false, 1);
constexpr MatmulConfig MM_CFG_PRELOAD_N = GetMDLConfig(false, false, 2);

// GetMMConfig's parameter groups (asc-devkit matmul_config.h): each sets its fields of a preset.
struct MatmulShapeParams {
    uint32_t singleCoreM;
    uint32_t singleCoreN;
    uint32_t singleCoreK;
    uint32_t basicM;
    uint32_t basicN;
    uint32_t basicK;
};
struct MatmulQuantParams {
    bool isPerTensor;
    bool hasAntiQuantOffset;
};
struct MatmulBatchParams {
    bool isNBatch;
    BatchMode batchMode;
    bool isBiasBatch = true;
    BatchOutMode bmmOutMode = BatchOutMode::SINGLE_BATCH;
};
struct MatmulFuncParams {
    bool intrinsicsCheck;
    bool enVecND2NZ;
    bool enableDoubleCache;
    bool enableL1CacheUB;
    uint32_t doMTE2Preload;
    IterateOrder iterateOrder;
    ScheduleType scheduleType;
    bool enableReuse = true;
    bool enableUBReuse;
    bool isPartialOutput = false;
    bool isA2B2Shared = false;
    bool isEnableChannelSplit = false;
    bool enableKdimReorderLoad = false;
    bool enableL1BankConflictOptimise = false;
    bool enableRelu = false;
};
struct MatmulBiasParams {
    bool enableSetBias = true;
};

namespace AscendC::matmul_detail {
__aicore__ constexpr void apply(MatmulConfig& c, const MatmulShapeParams& a) {
    c.singleCoreM = a.singleCoreM, c.singleCoreN = a.singleCoreN, c.singleCoreK = a.singleCoreK;
    c.basicM = a.basicM, c.basicN = a.basicN, c.basicK = a.basicK;
}
__aicore__ constexpr void apply(MatmulConfig& c, const MatmulQuantParams& a) {
    c.isPerTensor = a.isPerTensor, c.hasAntiQuantOffset = a.hasAntiQuantOffset;
}
__aicore__ constexpr void apply(MatmulConfig& c, const MatmulBatchParams& a) {
    c.isNBatch = a.isNBatch, c.batchMode = a.batchMode, c.isBiasBatch = a.isBiasBatch, c.bmmOutMode = a.bmmOutMode;
}
__aicore__ constexpr void apply(MatmulConfig& c, const MatmulFuncParams& a) {
    c.intrinsicsCheck = a.intrinsicsCheck, c.enVecND2NZ = a.enVecND2NZ, c.enableDoubleCache = a.enableDoubleCache;
    c.enableL1CacheUB = a.enableL1CacheUB, c.doMTE2Preload = a.doMTE2Preload, c.iterateOrder = a.iterateOrder;
    c.scheduleType = a.scheduleType, c.enableReuse = a.enableReuse, c.enableUBReuse = a.enableUBReuse;
    c.isPartialOutput = a.isPartialOutput, c.isA2B2Shared = a.isA2B2Shared;
    c.isEnableChannelSplit = a.isEnableChannelSplit, c.enableKdimReorderLoad = a.enableKdimReorderLoad;
    c.enableL1BankConflictOptimise = a.enableL1BankConflictOptimise, c.enableRelu = a.enableRelu;
}
__aicore__ constexpr void apply(MatmulConfig& c, const MatmulBiasParams& a) { c.enableSetBias = a.enableSetBias; }
}  // namespace AscendC::matmul_detail

// A preset (CONFIG_NORM / MDL / SPECIALMDL / IBSHARE) with the given parameter groups applied in order.
template <MatmulConfigMode configMode, typename... ArgTypes>
__aicore__ inline constexpr MatmulConfig GetMMConfig(ArgTypes&&... args) {
    MatmulConfig c = CFG_NORM;
    if constexpr (configMode == MatmulConfigMode::CONFIG_MDL) c = CFG_MDL;
    else if constexpr (configMode == MatmulConfigMode::CONFIG_SPECIALMDL) c = GetSpecialMDLConfig();
    else if constexpr (configMode == MatmulConfigMode::CONFIG_IBSHARE) c = CFG_IBSHARE_NORM;
    (AscendC::matmul_detail::apply(c, args), ...);
    return c;
}

struct MatrixOffset {
    int32_t offset;
    int32_t row;
    int32_t col;
    int32_t height;
    int32_t width;
};

namespace AscendC {

template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false, TPosition SRCPOS = TPosition::GM>
struct MatmulType {
    constexpr static TPosition pos = POSITION;
    constexpr static CubeFormat format = FORMAT;
    using T = TYPE;
    constexpr static bool isTrans = ISTRANS;
    constexpr static LayoutMode layout = LAYOUT;
    constexpr static bool ibShare = IBSHARE;
    constexpr static TPosition srcPos = SRCPOS;
};

// B of the 4:2 sparse matmul (the 4:2 稀疏矩阵乘 guide page): a MatmulType with where its index
// lies (INDEX_POSITION; GM only), given by SetSparseIndex.
template <TPosition POSITION, TPosition INDEX_POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct SparseMatmulType : public MatmulType<POSITION, FORMAT, TYPE, ISTRANS, LAYOUT, IBSHARE> {
    constexpr static TPosition indexPosition = INDEX_POSITION;
};

namespace matmul_detail {
// Whether a B type is a SparseMatmulType (it names where its index lies).
template <class T, class = void>
struct is_sparse : std::false_type {};
template <class T>
struct is_sparse<T, std::void_t<decltype(T::indexPosition)>> : std::true_type {};
template <class T>
constexpr bool is_sparse_v = is_sparse<T>::value;
// Half-bytes of an operand's element as L1 and L0 hold it: int4b_t packs two a byte, a sparse B
// keeps its dense half.
template <class TYPE>
constexpr int64_t operand_nibbles() {
    using T = typename TYPE::T;
    constexpr int64_t n = std::is_same_v<T, int4b_t> ? 1 : 2 * int64_t(sizeof(T));
    return is_sparse_v<TYPE> ? n / 2 : n;
}
}  // namespace matmul_detail

// The user's callbacks (the MatmulCallBackFunc page): DataCopyOut (L0C -> GM; not emulated yet,
// matmul.h refuses it), CopyA1 and CopyB1 (GM -> L1, one base block a call, replacing the Matmul's
// own copy), each a function pointer or nullptr.
template <auto DataCopyOut = nullptr, auto CopyA1 = nullptr, auto CopyB1 = nullptr>
struct MatmulCallBackFunc {
    constexpr static bool none = DataCopyOut == nullptr && CopyA1 == nullptr && CopyB1 == nullptr;
    constexpr static bool kDataCopyOut = DataCopyOut != nullptr;
    constexpr static bool kCopyA1 = CopyA1 != nullptr;
    constexpr static bool kCopyB1 = CopyB1 != nullptr;
    template <auto F, class... Args>
    __aicore__ static void Call(Args&&... args) {
        if constexpr (F != nullptr) F(args...);
    }
    template <class... Args>
    __aicore__ static void CopyA1Fn(Args&&... args) { Call<CopyA1>(args...); }
    template <class... Args>
    __aicore__ static void CopyB1Fn(Args&&... args) { Call<CopyB1>(args...); }
};

}  // namespace AscendC
