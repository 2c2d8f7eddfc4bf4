#include <algorithm>
#include "axpy_custom_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
constexpr uint32_t TILE_LENGTH = 1024;  // floats per tile: 4 KB per queue buffer
constexpr uint32_t ALIGN = 8;           // floats per 32-byte block

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    AxpyCustomTilingData tiling;
    const uint64_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const float* alpha = context->GetAttrs()->GetAttrPointer<float>(0);
    if (alpha == nullptr || total == 0) {
        return ge::GRAPH_FAILED;
    }
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const uint64_t cores = platform.GetCoreNumAiv();
    const uint32_t blockDim = static_cast<uint32_t>(std::min<uint64_t>(cores, (total + TILE_LENGTH - 1) / TILE_LENGTH));
    // Every block but the last starts on a 32-byte boundary.
    uint64_t perBlock = (total + blockDim - 1) / blockDim;
    perBlock = (perBlock + ALIGN - 1) / ALIGN * ALIGN;

    context->SetBlockDim(blockDim);
    // Key 1: every copy is whole 32-byte blocks (DataCopy); key 2: a tail (DataCopyPad).
    context->SetTilingKey(total % ALIGN == 0 ? 1 : 2);
    tiling.set_totalLength(static_cast<uint32_t>(total));
    tiling.set_blockLength(static_cast<uint32_t>(perBlock));
    tiling.set_tileLength(TILE_LENGTH);
    tiling.set_alpha(*alpha);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
static ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, context->GetInputDataType(0));
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AxpyCustom : public OpDef {
public:
    explicit AxpyCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("z").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("alpha").AttrType(OPTIONAL).Float(0.5);
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(AxpyCustom);
}  // namespace ops
