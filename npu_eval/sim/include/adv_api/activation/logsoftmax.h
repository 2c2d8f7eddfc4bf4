// LogSoftMax (adv_api/activation/logsoftmax.h), ND format:
//   LogSoftMax<T, isReuseSource = false, isDataFormatNZ = false>(dst, sum, max, src, sharedTmpBuffer,
//                                                                 const LogSoftMaxTiling&, shapeInfo = {})
//       dst = log10(softmax(src)) per row, with SoftMax's sum and max outputs (T). half and float.
//
// As the device computes it (docs: LogSoftMax.md, 实现原理: reducemax, sub, exp, reducesum, div,
// then log10; logsoftmax_common_impl.h: Ln, then Muls by 0.4342944819): the base is 10, not e as
// in torch.log_softmax, and a probability that underflows to 0 gives -inf. The tiling is
// recomputed from the shape and the sharedTmpBuffer, as the implementation does; a
// default-constructed sharedTmpBuffer (no buffer) leaves the work area to the API.
#pragma once

#include "logsoftmax_tiling.h"
#include "softmax.h"

namespace AscendC {

template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
__aicore__ inline void LogSoftMax(const LocalTensor<T>& dst, const LocalTensor<T>& sum, const LocalTensor<T>& max,
                                  const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                  const LogSoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                                  SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] LogSoftMax: the NZ data format is not emulated");
    const SoftMaxTiling t = softmax_sizes::from_log(tiling);
    detail::softmax_run<T, T>("LogSoftMax", dst, &sum, &max, src, sharedTmpBuffer.slot_ ? &sharedTmpBuffer : nullptr,
                              t, softmaxShapeInfo, 0, loc, detail::SmOut::Log10);
}

}  // namespace AscendC
