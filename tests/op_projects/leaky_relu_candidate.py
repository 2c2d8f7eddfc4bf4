# A MultiKernelBench-style Ascend C candidate (the format of its prompts/ascendc_new_model_*.py:
# the op project's files as strings), written for sage-npu's tests: fp16 leaky ReLU with an
# attribute, a tiling key per dtype path and a user workspace.
project_json_src = '''
[{"op": "LeakyReluCustom", "language": "cpp",
  "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["float16"]}],
  "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["float16"]}],
  "attr": [{"name": "negative_slope", "param_type": "optional", "type": "float", "default_value": "0.1"}]}]
'''

host_tiling_src = """
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LeakyReluCustomTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, totalLength);
  TILING_DATA_FIELD_DEF(uint32_t, tileNum);
  TILING_DATA_FIELD_DEF(uint32_t, tileLength);
  TILING_DATA_FIELD_DEF(float, negativeSlope);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(LeakyReluCustom, LeakyReluCustomTilingData)
}
"""

host_operator_src = """
#include "leaky_relu_custom_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
const uint32_t BLOCK_DIM = 8;
const uint32_t TILE_LENGTH = 512;

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    LeakyReluCustomTilingData tiling;
    uint32_t totalLength = context->GetInputTensor(0)->GetShapeSize();
    if (context->GetInputDesc(0)->GetDataType() != ge::DT_FLOAT16) {
        return ge::GRAPH_FAILED;
    }
    uint32_t typeSize = ge::GetSizeByDataType(context->GetInputDesc(0)->GetDataType());
    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    if (ubSize < 6 * TILE_LENGTH * typeSize) {
        return ge::GRAPH_FAILED;
    }
    const float* negativeSlope = context->GetAttrs()->GetAttrPointer<float>(0);
    uint32_t perCore = totalLength / BLOCK_DIM;
    context->SetBlockDim(BLOCK_DIM);
    context->SetTilingKey(perCore % TILE_LENGTH == 0 ? 1 : 2);
    tiling.set_totalLength(totalLength);
    tiling.set_tileLength(TILE_LENGTH);
    tiling.set_tileNum((perCore + TILE_LENGTH - 1) / TILE_LENGTH);
    tiling.set_negativeSlope(*negativeSlope);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* currentWorkspace = context->GetWorkspaceSizes(1);
    currentWorkspace[0] = 1024;
    return ge::GRAPH_SUCCESS;
}
}

namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* x1_shape = context->GetInputShape(0);
    gert::Shape* y_shape = context->GetOutputShape(0);
    *y_shape = *x1_shape;
    return GRAPH_SUCCESS;
}
}

namespace ops {
class LeakyReluCustom : public OpDef {
public:
    explicit LeakyReluCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Attr("negative_slope").AttrType(OPTIONAL).Float(0.1);
        this->SetInferShape(ge::InferShape);
        this->AICore()
            .SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};

OP_ADD(LeakyReluCustom);
}
"""

kernel_src = """
#include "kernel_operator.h"
constexpr int32_t BUFFER_NUM = 2;

class KernelLeakyRelu {
public:
    __aicore__ inline KernelLeakyRelu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, uint32_t totalLength, uint32_t tileNum,
                                uint32_t tileLength, float negativeSlope)
    {
        this->blockLength = totalLength / AscendC::GetBlockNum();
        this->tileNum = tileNum;
        this->tileLength = tileLength;
        this->negativeSlope = static_cast<half>(negativeSlope);
        xGm.SetGlobalBuffer((__gm__ DTYPE_X*)x + this->blockLength * AscendC::GetBlockIdx(), this->blockLength);
        yGm.SetGlobalBuffer((__gm__ DTYPE_Y*)y + this->blockLength * AscendC::GetBlockIdx(), this->blockLength);
        // The user workspace: each block marks its 128 bytes, so a short workspace faults.
        wsGm.SetGlobalBuffer((__gm__ uint8_t*)workspace + 128 * AscendC::GetBlockIdx(), 128);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, this->tileLength * sizeof(DTYPE_X));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, this->tileLength * sizeof(DTYPE_Y));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < this->tileNum; i++) {
            uint32_t n = this->blockLength - i * this->tileLength;
            n = n < this->tileLength ? n : this->tileLength;
            AscendC::LocalTensor<DTYPE_X> xLocal = inQueueX.AllocTensor<DTYPE_X>();
            if (TILING_KEY_IS(1)) {
                AscendC::DataCopy(xLocal, xGm[i * this->tileLength], n);
            } else {
                AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(DTYPE_X)), 0, 0, 0};
                AscendC::DataCopyPadExtParams<DTYPE_X> pad{false, 0, 0, 0};
                AscendC::DataCopyPad(xLocal, xGm[i * this->tileLength], p, pad);
            }
            inQueueX.EnQue(xLocal);
            xLocal = inQueueX.DeQue<DTYPE_X>();
            AscendC::LocalTensor<DTYPE_Y> yLocal = outQueueY.AllocTensor<DTYPE_Y>();
            AscendC::LeakyRelu(yLocal, xLocal, this->negativeSlope, n);
            outQueueY.EnQue<DTYPE_Y>(yLocal);
            inQueueX.FreeTensor(xLocal);
            yLocal = outQueueY.DeQue<DTYPE_Y>();
            if (TILING_KEY_IS(1)) {
                AscendC::DataCopy(yGm[i * this->tileLength], yLocal, n);
            } else {
                AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(DTYPE_Y)), 0, 0, 0};
                AscendC::DataCopyPad(yGm[i * this->tileLength], yLocal, p);
            }
            outQueueY.FreeTensor(yLocal);
        }
        wsGm.SetValue(0, static_cast<uint8_t>(AscendC::GetBlockIdx()));
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::GlobalTensor<DTYPE_X> xGm;
    AscendC::GlobalTensor<DTYPE_Y> yGm;
    AscendC::GlobalTensor<uint8_t> wsGm;
    uint32_t blockLength;
    uint32_t tileNum;
    uint32_t tileLength;
    half negativeSlope;
};

extern "C" __global__ __aicore__ void leaky_relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    KernelLeakyRelu op;
    op.Init(x, y, workspace, tiling_data.totalLength, tiling_data.tileNum, tiling_data.tileLength,
            tiling_data.negativeSlope);
    op.Process();
}
"""

model_src = '''
import torch
import torch_npu
import custom_ops_lib
class ModelNew(torch.nn.Module):
    def __init__(self, negative_slope: float = 0.1) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return custom_ops_lib.leaky_relu_custom(x, self.negative_slope)
'''
