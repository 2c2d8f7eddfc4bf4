// ACL's basic types and error codes (names and values as CANN's acl_base.h spells them).
//
// Every value below is CANN's own, checked against the public headers of CANN's runtime
// (github.com/hicann/runtime, include/external/acl/, at 681ef7610df1):
//   ACL_SUCCESS .. ACL_ERROR_FAILURE: acl_base_rt.h (static const int, as here);
//   ACL_ERROR_RT_*: error_codes/rt_error_codes.h (#defines there: 107000 param invalid, 107027
//     stream is captured, 107029 stream is not in capture status, 107036 capture not initiated in
//     this stream, 107042 symbol not found, 207000 feature not supported, 207001 memory
//     allocation, 507000 internal error, 507014 aicore timeout, 507015 aicore exception,
//     507027 kernel lookup error);
//   aclDataType and aclFormat: acl_base_rt.h.
// The aclrtc codes (ACL_ERROR_RTC_*) are in acl_rt_compile.h, from asc-devkit's own aclrtc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../sage_sim/launch.h"

typedef int aclError;
typedef uint16_t aclFloat16;

static const int ACL_ERROR_NONE = 0;
static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int ACL_ERROR_RT_STREAM_CAPTURED = 107027;
static const int ACL_ERROR_RT_STREAM_NOT_CAPTURED = 107029;
static const int ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED = 107036;
static const int ACL_ERROR_RT_SYMBOL_NOT_FOUND = 107042;
static const int ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;
static const int ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int ACL_ERROR_RT_INTERNAL_ERROR = 507000;
static const int ACL_ERROR_RT_AICORE_TIMEOUT = 507014;
static const int ACL_ERROR_RT_AICORE_EXCEPTION = 507015;
static const int ACL_ERROR_RT_KERNEL_LOOKUP = 507027;

typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
} aclDataType;

typedef enum {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_FRACTAL_NZ = 29,
} aclFormat;

inline float aclFloat16ToFloat(aclFloat16 value) { return ::sage::sim::half_bits_to_float(value); }
inline aclFloat16 aclFloatToFloat16(float value) { return ::sage::sim::float_to_half_bits(value); }

inline size_t aclDataTypeSize(aclDataType dataType) {
    switch (dataType) {
        case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
        case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
        case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
        case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64: return 8;
        case ACL_COMPLEX128: return 16;
        default: return 0;
    }
}

inline aclError aclInit(const char* configPath = nullptr) {
    (void)configPath;
    return ACL_SUCCESS;
}
inline aclError aclFinalize() { return ACL_SUCCESS; }
inline aclError aclFinalizeReference(uint64_t* refCount) {
    if (refCount) *refCount = 0;
    return ACL_SUCCESS;
}
inline const char* aclGetRecentErrMsg() {
    const std::string& e = ::sage::sim::program().last_error;
    return e.empty() ? nullptr : e.c_str();
}
inline aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion, int32_t* patchVersion) {
    if (majorVersion) *majorVersion = 1;
    if (minorVersion) *minorVersion = 0;
    if (patchVersion) *patchVersion = 0;
    return ACL_SUCCESS;
}
