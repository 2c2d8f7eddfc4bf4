// The advanced API's host tiling library, as asc-devkit's include/adv_api/tiling_api.h: one
// `<family>/<api>_tiling.h` per API (GetXxxMaxMinTmpSize, GetXxxTmpBufferFactorSize,
// XxxTilingFunc), plus the platform library. Host code includes it as "tiling/tiling_api.h"
// (../tiling/tiling_api.h forwards here). Each API's tiling header is also included by its kernel
// header, whose temporary-buffer check calls the same function: host and kernel cannot disagree.
// One include line per API, kept in family order.
#pragma once

#include "utils/types.h"
#include "../tiling/platform/platform_ascendc.h"

// activation

// reduce
#include "reduce/sum_tiling.h"
#include "reduce/reduce_tiling.h"
#include "reduce/mean_tiling.h"
#include "reduce/reduce_xor_sum_tiling.h"

// sort
#include "sort/sort_tiling.h"
#include "sort/topk_tiling.h"

// math
#include "math/acosh_tiling.h"
#include "math/asinh_tiling.h"
#include "math/atanh_tiling.h"
#include "math/axpy_tiling.h"
#include "math/ceil_tiling.h"
#include "math/clamp_tiling.h"
#include "math/cosh_tiling.h"
#include "math/erf_tiling.h"
#include "math/exp_tiling.h"
#include "math/floor_tiling.h"
#include "math/frac_tiling.h"
#include "math/log_tiling.h"
#include "math/round_tiling.h"
#include "math/sign_tiling.h"
#include "math/sinh_tiling.h"
#include "math/tanh_tiling.h"
#include "math/trunc_tiling.h"
#include "math/xor_tiling.h"
#include "math/power_tiling.h"
#include "math/fmod_tiling.h"
#include "math/cumsum_tiling.h"
#include "math/sin_tiling.h"
#include "math/cos_tiling.h"
#include "math/tan_tiling.h"
#include "math/atan_tiling.h"
#include "math/erfc_tiling.h"
#include "math/asin_tiling.h"
#include "math/acos_tiling.h"
#include "math/lgamma_tiling.h"
#include "math/digamma_tiling.h"

// normalization
#include "../securec.h"
#include "../tiling/platform/platform_ascendc.h"

// activation
#include "activation/softmax_tiling.h"
#include "activation/logsoftmax_tiling.h"
#include "activation/gelu_tiling.h"
#include "activation/sigmoid_tiling.h"
#include "activation/silu_tiling.h"
#include "activation/swish_tiling.h"
#include "activation/swiglu_tiling.h"
#include "activation/geglu_tiling.h"
#include "activation/reglu_tiling.h"

// math

// normalization
#include "normalization/layernorm_tiling.h"
#include "normalization/rmsnorm_tiling.h"
#include "normalization/deepnorm_tiling.h"
#include "normalization/layernormgrad_tiling.h"
#include "normalization/welford_tiling.h"
#include "normalization/normalize_tiling.h"
#include "normalization/batchnorm_tiling.h"
#include "normalization/groupnorm_tiling.h"

// quantization
#include "quantization/ascend_quant_tiling.h"
#include "quantization/ascend_dequant_tiling.h"
#include "quantization/ascend_antiquant_tiling.h"

// index
#include "index/arithprogression_tiling.h"

// filter and select
#include "filter/dropout_tiling.h"
#include "select/selectwithbytesmask_tiling.h"

// pad and transpose
#include "pad/pad_tiling.h"

// matmul
#include "matmul/matmul_tiling.h"
#include "transpose/confusion_transpose_tiling.h"
#include "transpose/transdata_tiling.h"
