// Enums and parameter structs shared by the API families, with the real API's names.
#pragma once

#include <cstdint>

#include "../sage_sim/dtypes.h"
#include "../sage_sim/qualifiers.h"
#include "../sage_sim/runtime.h"

enum pipe_t : uint8_t {
    PIPE_S = 0,
    PIPE_V,
    PIPE_M,
    PIPE_MTE1,
    PIPE_MTE2,
    PIPE_MTE3,
    PIPE_ALL,
    PIPE_MTE4,
    PIPE_MTE5,
    PIPE_V2,
    PIPE_FIX,
};

enum event_t : uint8_t {
    EVENT_ID0 = 0,
    EVENT_ID1,
    EVENT_ID2,
    EVENT_ID3,
    EVENT_ID4,
    EVENT_ID5,
    EVENT_ID6,
    EVENT_ID7,
};

namespace AscendC {

enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    C2PIPE2GM,
    C2PIPE2LOCAL,
    MAX,
};
using QuePosition = TPosition;

// The memories a TPosition lives in (CANN 9's LocalMemAllocator is keyed by these).
enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };

// Core types, the values g_coreType takes (CANN's CPU-debug stub_def.h).
constexpr int32_t MIX = 0;
constexpr int32_t AIC = 1;
constexpr int32_t AIV = 2;

enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MTE1_FIX,
    FIX_MTE1,
    FIX_FIX,
    MAX,
};

// pipe_t and event_t are compiler builtins on the device, at global scope: kernels write
// PipeBarrier<PIPE_V>() and SetFlag<...>(EVENT_ID0) unqualified, and some qualify them.
using ::pipe_t;
using ::PIPE_S;
using ::PIPE_V;
using ::PIPE_M;
using ::PIPE_MTE1;
using ::PIPE_MTE2;
using ::PIPE_MTE3;
using ::PIPE_ALL;
using ::PIPE_MTE4;
using ::PIPE_MTE5;
using ::PIPE_V2;
using ::PIPE_FIX;
using ::event_t;
using ::EVENT_ID0;
using ::EVENT_ID1;
using ::EVENT_ID2;
using ::EVENT_ID3;
using ::EVENT_ID4;
using ::EVENT_ID5;
using ::EVENT_ID6;
using ::EVENT_ID7;


using TEventID = int8_t;

enum class RoundMode : uint8_t {
    CAST_NONE = 0,
    CAST_RINT,
    CAST_FLOOR,
    CAST_CEIL,
    CAST_ROUND,
    CAST_TRUNC,
    CAST_ODD,
    CAST_HYBRID,
};

// The data layout of a tensor (CANN's kernel_struct_data_copy.h; the advanced API's isDataFormatNZ).
#ifndef ASCC_ENUM_DATAFORMAT
#define ASCC_ENUM_DATAFORMAT
enum class DataFormat : uint8_t { ND = 0, NZ, NCHW, NC1HWC0, NHWC, NCDHW, NDC1HWC0, FRACTAL_Z_3D };
#endif

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };

// GlobalTensor::SetL2CacheHint's modes (values as the GlobalTensor doc page lists them). The
// persistent mode is documented as not yet available.
enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1, CACHE_MODE_LAST = 2, CACHE_MODE_PERSISTENT = 4 };
// Reserved by the API ("use the default"): which accesses the hint applies to.
enum class CacheRwMode { READ = 1, WRITE = 2, RW = 3 };

enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

// Lengths in DataCopyParams count 32-byte blocks; strides count blocks between bursts.
// Copy (UB -> UB, mask/repeat forms): strides in 32-byte blocks. Block strides default to 0
// and repeat strides to 8, as asc-devkit's constants (DEFAULT_DATA_COPY_STRIDE,
// DEFAULT_REPEAT_STRIDE) make them.
struct CopyRepeatParams {
    uint16_t dstStride = 0, srcStride = 0;          // between the blocks of one repeat, [0, 65535]
    uint16_t dstRepeatSize = 8, srcRepeatSize = 8;  // between repeats, [0, 4095]
    __aicore__ CopyRepeatParams() {}
    __aicore__ CopyRepeatParams(uint16_t dstStrideIn, uint16_t srcStrideIn, uint16_t dstRepeatSizeIn,
                                uint16_t srcRepeatSizeIn)
        : dstStride(dstStrideIn), srcStride(srcStrideIn), dstRepeatSize(dstRepeatSizeIn),
          srcRepeatSize(srcRepeatSizeIn) {}
};

struct DataCopyParams {
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
    __aicore__ DataCopyParams() = default;
    __aicore__ DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn, uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
};

// DataCopyPad's parameters: blockLen in bytes; strides in bytes on the GM side and in
// 32-byte blocks on the UB side.
struct DataCopyExtParams {
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
    __aicore__ DataCopyExtParams() = default;
    __aicore__ DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn,
                                 uint32_t dstStrideIn, uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
};

template <typename T>
struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = 0;
    __aicore__ DataCopyPadExtParams() = default;
    __aicore__ DataCopyPadExtParams(bool isPadIn, uint8_t left, uint8_t right, T value)
        : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

struct DataCopyPadParams {
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
    __aicore__ DataCopyPadParams() = default;
    __aicore__ DataCopyPadParams(bool isPadIn, uint8_t left, uint8_t right, uint64_t value)
        : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

// Strides of the mask/repeat forms: block strides count 32-byte blocks inside one repeat,
// repeat strides count 32-byte blocks between repeats.
struct BinaryRepeatParams {
    uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
    uint8_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
    bool repeatStrideMode = false, strideSizeMode = false;
    __aicore__ BinaryRepeatParams() = default;
    __aicore__ BinaryRepeatParams(uint8_t dB, uint8_t s0B, uint8_t s1B, uint8_t dR, uint8_t s0R, uint8_t s1R)
        : dstBlkStride(dB), src0BlkStride(s0B), src1BlkStride(s1B), dstRepStride(dR), src0RepStride(s0R),
          src1RepStride(s1R) {}
};

struct UnaryRepeatParams {
    uint16_t dstBlkStride = 1, srcBlkStride = 1;
    uint8_t dstRepStride = 8, srcRepStride = 8;
    bool repeatStrideMode = false, strideSizeMode = false;
    __aicore__ UnaryRepeatParams() = default;
    __aicore__ UnaryRepeatParams(uint16_t dB, uint16_t sB, uint8_t dR, uint8_t sR)
        : dstBlkStride(dB), srcBlkStride(sB), dstRepStride(dR), srcRepStride(sR) {}
};

constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr uint32_t DEFAULT_BLK_NUM = 8;
constexpr uint32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint32_t MAX_REPEAT_TIMES = 255;
// CANN's C0 in bytes (a fractal row, one 32-byte DataBlock): samples divide byte sizes by it to count
// DataBlocks for DataCopyParams. int32_t as CANN declares it, so the quotient's type is the same.
constexpr int32_t DEFAULT_C0_SIZE = 32;
// The UB a kernel may plan its tiles with: the chip's usable size (the reserved top 8 KB
// excluded), the bound TPipe::InitBuffer enforces.
constexpr int32_t TOTAL_UB_SIZE = SAGE_CHIP_UB_BYTES;
constexpr int32_t TOTAL_VEC_LOCAL_SIZE = SAGE_CHIP_UB_BYTES;

__aicore__ inline int64_t GetBlockIdx() { return sage::sim::blk().idx; }
__aicore__ inline int64_t GetBlockNum() { return sage::sim::blk().num; }
// The core's sub-block in its AI Core (AIV 0 or 1 of a 1:2 mixed kernel) and its side's cores per AI
// Core (GetTaskRatio: 2 on the AIV of a 1:2 kernel, else 1; GetTaskRation is its old spelling).
__aicore__ inline int64_t GetSubBlockIdx() { return sage::sim::blk().sub_idx; }
__aicore__ inline int64_t GetTaskRatio() { return sage::sim::blk().ratio; }
__aicore__ inline int64_t GetTaskRation() { return GetTaskRatio(); }

// CANN 9's type selector (samples pick float or half with it).
template <bool cond, typename A, typename B>
struct Conditional {
    using type = A;
};
template <typename A, typename B>
struct Conditional<false, A, B> {
    using type = B;
};

// Whether two types are the same (CANN's kernel_utils: IsSameType<T, U>::value), as kernels test
// their template types.
template <typename T, typename U>
struct IsSameType {
    static constexpr bool value = false;
};
template <typename T>
struct IsSameType<T, T> {
    static constexpr bool value = true;
};

}  // namespace AscendC
