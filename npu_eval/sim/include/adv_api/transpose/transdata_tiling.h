// Host tiling for TransData (asc-devkit include/adv_api/transpose/transdata_tiling.h). Also included
// by transdata.h: the kernel checks its temporary space against the same function. Documented in
// asc-devkit docs/zh/api/SIMD-API/高阶API/张量变换/GetTransDataMaxMinTmpSize.md (no formula on the page;
// the sizes are CANN's tiling's, maximum = minimum). With C0 = N0 = 16, C1 = ceil(C / 16),
// N1 = ceil(N / 16), HW = H * W rounded up to 16 and 2-byte elements:
//   NCDHW -> NDC1HWC0       D * HW * 2 + D * C1 * 16 * HW * 2
//   NDC1HWC0 -> NCDHW       D * C1 * 16 * HW * 2 + 512
//   NCDHW -> FRACTAL_Z_3D   max(C * D * HW, D * H * W * N1 * 16) * 2 + N1 * 16 * D * C1 * 16 * HW * 2
//   FRACTAL_Z_3D -> NCDHW   N1 * 16 * C1 * 16 * D * HW * 2, twice that when N or C is not a multiple of 16
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../tiling/platform/platform_ascendc.h"
#include "../../utils/common_types.h"
#include "../utils/types.h"

namespace AscendC {

#ifndef ASCC_PARAM_TRANSDATACONFIG
#define ASCC_PARAM_TRANSDATACONFIG
struct TransDataConfig {
    DataFormat srcFormat;
    DataFormat dstFormat;
};
#endif

namespace detail {

struct TransDataDims {
    int64_t n = 0, c = 0, d = 0, h = 0, w = 0;
};

inline int64_t transdata_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The NCDHW extents of a conversion, from its two shapes; false when they do not match the formats.
inline bool transdata_dims(DataFormat from, DataFormat to, const std::vector<int64_t>& s,
                           const std::vector<int64_t>& d, TransDataDims& o)
{
    const bool toNc = to == DataFormat::NCDHW;
    const std::vector<int64_t>& nc = toNc ? d : s;  // the NCDHW side
    const std::vector<int64_t>& other = toNc ? s : d;
    const DataFormat otherFmt = toNc ? from : to;
    if (nc.size() != 5 || (toNc ? from : to) == DataFormat::NCDHW) return false;
    o = {nc[0], nc[1], nc[2], nc[3], nc[4]};
    const int64_t c1 = transdata_ceil(o.c, 16), n1 = transdata_ceil(o.n, 16);
    if (otherFmt == DataFormat::NDC1HWC0) {
        return other.size() == 6 && other[0] == o.n && other[1] == o.d && other[2] == c1 && other[3] == o.h &&
               other[4] == o.w && other[5] == 16;
    }
    if (otherFmt == DataFormat::FRACTAL_Z_3D) {
        return other.size() == 7 && other[0] == o.d && other[1] == c1 && other[2] == o.h && other[3] == o.w &&
               other[4] == n1 && other[5] == 16 && other[6] == 16;
    }
    return false;
}

inline uint32_t transdata_tmp(const TransDataConfig& cfg, const TransDataDims& p)
{
    const int64_t c1 = transdata_ceil(p.c, 16), n1 = transdata_ceil(p.n, 16), hw = transdata_ceil(p.h * p.w, 16) * 16;
    const DataFormat f = cfg.srcFormat, t = cfg.dstFormat;
    if (f == DataFormat::NCDHW && t == DataFormat::NDC1HWC0) return uint32_t((p.d * hw + p.d * c1 * 16 * hw) * 2);
    if (f == DataFormat::NDC1HWC0 && t == DataFormat::NCDHW) return uint32_t(p.d * c1 * 16 * hw * 2 + 512);
    if (f == DataFormat::NCDHW && t == DataFormat::FRACTAL_Z_3D) {
        return uint32_t(std::max(p.c * p.d * hw, p.d * p.h * p.w * n1 * 16) * 2 + n1 * 16 * p.d * c1 * 16 * hw * 2);
    }
    if (f == DataFormat::FRACTAL_Z_3D && t == DataFormat::NCDHW) {
        const int64_t one = n1 * 16 * c1 * 16 * p.d * hw * 2;
        return uint32_t(p.n == n1 * 16 && p.c == c1 * 16 ? one : 2 * one);
    }
    return 0;
}

}  // namespace detail

// false (sizes unset) for a type other than half, bfloat16, uint16 or int16, a conversion other
// than the four, a chip other than Atlas A2 / Ascend 950, or shapes that do not match the formats.
inline bool GetTransDataMaxMinTmpSize(const platform_ascendc::PlatformAscendC& platform, const TensorShape& srcShape,
                                      const TensorShape& dstShape, const TensorDataType dataType,
                                      const TransDataConfig& config, uint32_t& maxValue, uint32_t& minValue)
{
    if (dataType != ge::DT_FLOAT16 && dataType != ge::DT_BF16 && dataType != ge::DT_UINT16 &&
        dataType != ge::DT_INT16) {
        return false;
    }
    const uint32_t arch = static_cast<uint32_t>(platform.GetCurNpuArch());
    if (arch != 2201 && arch != 3510 && arch != 5102) return false;
    detail::TransDataDims p;
    if (!detail::transdata_dims(config.srcFormat, config.dstFormat, srcShape.GetDims(), dstShape.GetDims(), p)) {
        return false;
    }
    maxValue = minValue = detail::transdata_tmp(config, p);
    return true;
}

}  // namespace AscendC
