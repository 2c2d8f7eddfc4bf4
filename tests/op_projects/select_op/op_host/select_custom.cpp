// A test operator for the host features a tiling function may use: string and list attributes,
// a ValueDepend input whose values the tiling and infer-shape functions read, and registration
// through IMPL_OP_OPTILING instead of OpDef's SetTiling/SetInferShape.
#include <cstring>
#include "select_custom_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
static ge::graphStatus SelectTiling(gert::TilingContext* context)
{
    SelectCustomTilingData tiling;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    const char* mode = attrs->GetStr(0);
    const gert::ContinuousVector* dims = attrs->GetListInt(1);
    const gert::TypedContinuousVector<float>* weights = attrs->GetListFloat(2);
    const gert::Tensor* rows = context->GetInputTensor(1);
    if (mode == nullptr || dims == nullptr || weights == nullptr || rows->GetData<int64_t>() == nullptr) {
        return ge::GRAPH_FAILED;
    }
    tiling.set_mode(std::strcmp(mode, "sum") == 0 ? 1 : std::strcmp(mode, "mean") == 0 ? 2 : 0);
    tiling.set_dimCount(dims->GetSize());
    tiling.set_lastDim(dims->GetSize() ? static_cast<int32_t>(dims->GetData()[dims->GetSize() - 1]) : -1);
    float sum = 0;
    for (size_t i = 0; i < weights->GetSize(); ++i) sum += weights->GetData()[i];
    tiling.set_weightSum(sum);
    const int64_t n = rows->GetShapeSize();
    tiling.set_rowsFirst(static_cast<int32_t>(rows->GetData<int64_t>()[0]));
    tiling.set_rowsLast(static_cast<int32_t>(rows->GetData<int64_t>()[n - 1]));
    tiling.set_xHasData(context->GetInputTensor(0)->GetData<float>() != nullptr);
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    context->GetWorkspaceSizes(1)[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
// y: the first rows[0] rows of x.
static graphStatus SelectInferShape(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    const int64_t* rows = context->GetInputTensor(1)->GetData<int64_t>();
    if (x == nullptr || rows == nullptr) {
        return GRAPH_FAILED;
    }
    gert::Shape* y = context->GetOutputShape(0);
    *y = *x;
    y->SetDim(0, rows[0]);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class SelectCustom : public OpDef {
public:
    explicit SelectCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("rows").ParamType(REQUIRED).DataType({ge::DT_INT64}).Format({ge::FORMAT_ND})
            .ValueDepend(REQUIRED);
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("mode").AttrType(OPTIONAL).String("mean");
        this->Attr("dims").AttrType(OPTIONAL).ListInt({0, 1});
        this->Attr("weights").AttrType(OPTIONAL).ListFloat({0.5f});
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(SelectCustom);
}  // namespace ops

IMPL_OP_OPTILING(SelectCustom).Tiling(optiling::SelectTiling).InferShape(ge::SelectInferShape);
