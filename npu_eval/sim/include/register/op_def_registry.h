// CANN's op-project host API (register/op_def_registry.h and the gert runtime types it brings):
// what an msopgen op_host/<op>.cpp compiles against. The OpDef half records the operator's
// inputs, outputs, attributes and tiling function (OP_ADD registers it); the gert half is the
// context a TilingFunc reads shapes from and writes blockDim, the tiling key, workspace sizes and
// the tiling bytes to. sage-npu compiles op_host/<op>.cpp with this header and the driver
// sage_sim/op_tiling_main.h into a small host program, run in the sandbox once per evaluation
// (npu_eval/op_project.py); its answers become the kernel launch. The infer-shape function
// (SetInferShape or IMPL_OP(...).InferShape) runs too, and its output shapes are checked against
// reference.py's; infer-datatype functions are recorded, never run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../graph/tensor.h"
#include "../graph/types.h"
#include "tilingdata_base.h"

namespace fe {
class PlatFormInfos {};  // opaque: platform_ascendc::PlatformAscendC answers from the chip profile
}  // namespace fe

namespace ge {
// Bytes per element (GE's GetSizeByDataType): -1 for a type with no whole-byte size.
inline int GetSizeByDataType(DataType t)
{
    switch (t) {
        case DT_FLOAT: case DT_INT32: case DT_UINT32: return 4;
        case DT_FLOAT16: case DT_BF16: case DT_INT16: case DT_UINT16: return 2;
        case DT_INT8: case DT_UINT8: case DT_BOOL: case DT_HIFLOAT8: case DT_FLOAT8_E5M2:
        case DT_FLOAT8_E4M3FN: case DT_FLOAT8_E8M0: return 1;
        case DT_INT64: case DT_UINT64: case DT_DOUBLE: case DT_COMPLEX64: return 8;
        case DT_COMPLEX128: return 16;
        default: return -1;
    }
}
}  // namespace ge

namespace gert {

// The runtime shape: dims with GE's element count (1 for a scalar shape, unlike ge::Shape).
class Shape {
public:
    Shape() = default;
    Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    void SetDimNum(size_t n) { dims_.resize(n, 0); }
    void SetDim(size_t i, int64_t v) { if (i < dims_.size()) dims_[i] = v; }
    Shape& AppendDim(int64_t v) { dims_.push_back(v); return *this; }
    bool IsScalar() const { return dims_.empty(); }
    int64_t GetShapeSize() const
    {
        int64_t n = 1;
        for (int64_t d : dims_) {
            if (d < 0) return -1;
            n *= d;
        }
        return n;
    }
    const int64_t& operator[](size_t i) const { return dims_[i]; }
    int64_t& operator[](size_t i) { return dims_[i]; }
    bool operator==(const Shape& o) const { return dims_ == o.dims_; }
    bool operator!=(const Shape& o) const { return dims_ != o.dims_; }

private:
    std::vector<int64_t> dims_;
};

// Origin (as the graph gave it) and storage (after format changes) shapes: the same for ND.
class StorageShape {
public:
    StorageShape() = default;
    explicit StorageShape(const Shape& s) : origin_(s), storage_(s) {}
    const Shape& GetOriginShape() const { return origin_; }
    const Shape& GetStorageShape() const { return storage_; }
    Shape& MutableOriginShape() { return origin_; }
    Shape& MutableStorageShape() { return storage_; }

private:
    Shape origin_, storage_;
};

class StorageFormat {
public:
    StorageFormat() = default;
    explicit StorageFormat(ge::Format f) : origin_(f), storage_(f) {}
    ge::Format GetOriginFormat() const { return origin_; }
    ge::Format GetStorageFormat() const { return storage_; }

private:
    ge::Format origin_ = ge::FORMAT_ND, storage_ = ge::FORMAT_ND;
};

// A tensor's compile-time description: element type and format.
class CompileTimeTensorDesc {
public:
    CompileTimeTensorDesc() = default;
    CompileTimeTensorDesc(ge::DataType dt, ge::Format f) : dtype_(dt), format_(f) {}
    ge::DataType GetDataType() const { return dtype_; }
    ge::Format GetOriginFormat() const { return format_.GetOriginFormat(); }
    ge::Format GetStorageFormat() const { return format_.GetStorageFormat(); }
    const StorageFormat& GetFormat() const { return format_; }

private:
    ge::DataType dtype_ = ge::DT_UNDEFINED;
    StorageFormat format_;
};

// A runtime tensor as tiling sees it: shape, type and format. Its data is on the host (GetData)
// only for an input the OpDef declares ValueDepend, as the framework copies only those; any
// other input's GetData is null, as its data stays on the device.
class Tensor {
public:
    Tensor() = default;
    Tensor(const StorageShape& s, ge::DataType dt, ge::Format f) : shape_(s), desc_(dt, f) {}
    // The driver (sage_sim/op_tiling_main.h) gives a ValueDepend input its bytes.
    void SageSetData(std::shared_ptr<const std::vector<uint8_t>> bytes) { data_ = std::move(bytes); }
    const Shape& GetOriginShape() const { return shape_.GetOriginShape(); }
    const Shape& GetStorageShape() const { return shape_.GetStorageShape(); }
    const StorageShape& GetShape() const { return shape_; }
    int64_t GetShapeSize() const { return shape_.GetStorageShape().GetShapeSize(); }
    ge::DataType GetDataType() const { return desc_.GetDataType(); }
    ge::Format GetOriginFormat() const { return desc_.GetOriginFormat(); }
    ge::Format GetStorageFormat() const { return desc_.GetStorageFormat(); }
    size_t GetSize() const
    {
        int s = ge::GetSizeByDataType(GetDataType());
        return s > 0 ? size_t(GetShapeSize()) * size_t(s) : 0;
    }
    template <typename T> const T* GetData() const { return static_cast<const T*>(GetAddr()); }
    const void* GetAddr() const { return data_ ? data_->data() : nullptr; }

private:
    StorageShape shape_;
    CompileTimeTensorDesc desc_;
    std::shared_ptr<const std::vector<uint8_t>> data_;
};

// One attribute's value: the OpDef's default (sage-npu passes no per-call attribute values).
struct SageAttrValue {
    enum Kind { kNone, kBool, kInt, kFloat, kStr, kListInt, kListFloat } kind = kNone;
    bool b = false;
    int64_t i = 0;
    float f = 0.0f;
    std::string s;
    std::vector<int64_t> li;
    std::vector<float> lf;
};

template <typename T>
class TypedContinuousVector {
public:
    explicit TypedContinuousVector(const std::vector<T>& v) : v_(v) {}
    size_t GetSize() const { return v_.size(); }
    const T* GetData() const { return v_.data(); }

private:
    const std::vector<T>& v_;
};
using ContinuousVector = TypedContinuousVector<int64_t>;

class RuntimeAttrs {
public:
    explicit RuntimeAttrs(const std::vector<SageAttrValue>* values = nullptr) : values_(values) {}
    size_t GetAttrNum() const { return values_ ? values_->size() : 0; }
    // The attribute at `index` as T (bool, int64_t, float, or char for a string); null when the
    // index is out of range, the attribute has no value, or T is not its type.
    template <typename T>
    const T* GetAttrPointer(size_t index) const
    {
        const SageAttrValue* v = at(index);
        if (v == nullptr) return nullptr;
        if constexpr (std::is_same_v<T, bool>) return v->kind == SageAttrValue::kBool ? &v->b : nullptr;
        else if constexpr (std::is_same_v<T, int64_t>) return v->kind == SageAttrValue::kInt ? &v->i : nullptr;
        else if constexpr (std::is_same_v<T, float>) return v->kind == SageAttrValue::kFloat ? &v->f : nullptr;
        else if constexpr (std::is_same_v<T, char>) return v->kind == SageAttrValue::kStr ? v->s.c_str() : nullptr;
        else if constexpr (std::is_same_v<T, TypedContinuousVector<int64_t>>) {
            return v->kind == SageAttrValue::kListInt ? keep(new TypedContinuousVector<int64_t>(v->li)) : nullptr;
        } else if constexpr (std::is_same_v<T, TypedContinuousVector<float>>) {
            return v->kind == SageAttrValue::kListFloat ? keep(new TypedContinuousVector<float>(v->lf)) : nullptr;
        } else {
            static_assert(sizeof(T) == 0, "GetAttrPointer<T>: T is bool, int64_t, float, char or a ContinuousVector");
        }
    }
    const bool* GetBool(size_t i) const { return GetAttrPointer<bool>(i); }
    const int64_t* GetInt(size_t i) const { return GetAttrPointer<int64_t>(i); }
    const float* GetFloat(size_t i) const { return GetAttrPointer<float>(i); }
    const char* GetStr(size_t i) const { return GetAttrPointer<char>(i); }
    const ContinuousVector* GetListInt(size_t i) const { return GetAttrPointer<ContinuousVector>(i); }
    const TypedContinuousVector<float>* GetListFloat(size_t i) const
    {
        return GetAttrPointer<TypedContinuousVector<float>>(i);
    }

private:
    const SageAttrValue* at(size_t i) const
    {
        return values_ && i < values_->size() && (*values_)[i].kind != SageAttrValue::kNone ? &(*values_)[i] : nullptr;
    }
    template <typename V>
    const V* keep(V* v) const
    {
        held_.emplace_back(v, [](void* p) { delete static_cast<V*>(p); });
        return v;
    }
    const std::vector<SageAttrValue>* values_;
    mutable std::vector<std::unique_ptr<void, void (*)(void*)>> held_;
};

// The tiling buffer the framework hands TilingFunc (GetRawTilingData): capacity bytes; the
// function writes its struct there (SaveToBuffer) and says how many bytes with SetDataSize.
class TilingData {
public:
    explicit TilingData(size_t capacity) : bytes_(capacity, 0) {}
    void* GetData() { return bytes_.data(); }
    const void* GetData() const { return bytes_.data(); }
    size_t GetCapacity() const { return bytes_.size(); }
    size_t GetDataSize() const { return size_; }
    void SetDataSize(size_t n) { size_ = n; }
    // Appends one value (the older TilingData::Append form); false when it does not fit.
    template <typename T>
    ge::graphStatus Append(const T& v)
    {
        if (size_ + sizeof(T) > bytes_.size()) return ge::GRAPH_FAILED;
        std::memcpy(bytes_.data() + size_, &v, sizeof(T));
        size_ += sizeof(T);
        return ge::GRAPH_SUCCESS;
    }

private:
    std::vector<uint8_t> bytes_;
    size_t size_ = 0;
};

struct SageIo {  // one input or output of this call
    StorageShape shape;
    Tensor tensor;
    CompileTimeTensorDesc desc;
};

// What TilingFunc reads and writes for one call.
class TilingContext {
public:
    TilingContext(std::vector<SageIo> inputs, std::vector<SageIo> outputs, const std::vector<SageAttrValue>* attrs,
                  size_t tiling_capacity, const char* name)
        : inputs_(std::move(inputs)), outputs_(std::move(outputs)), attrs_(attrs), tiling_(tiling_capacity),
          name_(name)
    {}
    const StorageShape* GetInputShape(size_t i) const { return i < inputs_.size() ? &inputs_[i].shape : nullptr; }
    const StorageShape* GetOptionalInputShape(size_t i) const { return GetInputShape(i); }
    const StorageShape* GetOutputShape(size_t i) const { return i < outputs_.size() ? &outputs_[i].shape : nullptr; }
    const Tensor* GetInputTensor(size_t i) const { return i < inputs_.size() ? &inputs_[i].tensor : nullptr; }
    const Tensor* GetOptionalInputTensor(size_t i) const { return GetInputTensor(i); }
    const CompileTimeTensorDesc* GetInputDesc(size_t i) const { return i < inputs_.size() ? &inputs_[i].desc : nullptr; }
    const CompileTimeTensorDesc* GetOptionalInputDesc(size_t i) const { return GetInputDesc(i); }
    const CompileTimeTensorDesc* GetOutputDesc(size_t i) const
    {
        return i < outputs_.size() ? &outputs_[i].desc : nullptr;
    }
    size_t GetComputeNodeInputNum() const { return inputs_.size(); }
    size_t GetComputeNodeOutputNum() const { return outputs_.size(); }
    const RuntimeAttrs* GetAttrs() const { return &attrs_; }
    fe::PlatFormInfos* GetPlatformInfo() const { return &platform_; }
    const char* GetNodeName() const { return name_; }
    const char* GetNodeType() const { return name_; }

    ge::graphStatus SetBlockDim(uint32_t n) { block_dim_ = n; block_dim_set_ = true; return ge::GRAPH_SUCCESS; }
    uint32_t GetBlockDim() const { return block_dim_; }
    ge::graphStatus SetTilingKey(uint64_t k) { key_ = k; return ge::GRAPH_SUCCESS; }
    uint64_t GetTilingKey() const { return key_; }
    ge::graphStatus SetNeedAtomic(bool a) { atomic_ = a; return ge::GRAPH_SUCCESS; }
    bool NeedAtomic() const { return atomic_; }
    ge::graphStatus SetScheduleMode(uint32_t m) { schedule_mode_ = m; return ge::GRAPH_SUCCESS; }
    uint32_t GetScheduleMode() const { return schedule_mode_; }
    TilingData* GetRawTilingData() { return &tiling_; }
    // The tiling buffer as T, when T fits in it (the typed form of GetRawTilingData).
    template <typename T>
    T* GetTilingData() { return sizeof(T) <= tiling_.GetCapacity() ? static_cast<T*>(tiling_.GetData()) : nullptr; }
    // num workspace sizes to fill in; their sum is the workspace the kernel gets.
    size_t* GetWorkspaceSizes(size_t num)
    {
        workspaces_.assign(num, 0);
        return workspaces_.data();
    }
    size_t GetWorkspaceNum() const { return workspaces_.size(); }

    // Read by the driver (sage_sim/op_tiling_main.h).
    bool SageBlockDimSet() const { return block_dim_set_; }
    const std::vector<size_t>& SageWorkspaces() const { return workspaces_; }

private:
    std::vector<SageIo> inputs_, outputs_;
    RuntimeAttrs attrs_;
    TilingData tiling_;
    const char* name_;
    mutable fe::PlatFormInfos platform_;
    uint32_t block_dim_ = 0, schedule_mode_ = 0;
    bool block_dim_set_ = false, atomic_ = false;
    uint64_t key_ = 0;
    std::vector<size_t> workspaces_;
};

// What an infer-shape function reads (the inputs' shapes, a ValueDepend input's data, the
// attributes) and writes (each output's shape, starting empty), for one call.
class InferShapeContext {
public:
    InferShapeContext(const std::vector<SageIo>* inputs, size_t outputs, const std::vector<SageAttrValue>* attrs,
                      const char* name)
        : inputs_(inputs), outputs_(outputs), attrs_(attrs), name_(name)
    {}
    const Shape* GetInputShape(size_t i) const
    {
        return i < inputs_->size() ? &(*inputs_)[i].shape.GetOriginShape() : nullptr;
    }
    const Shape* GetOptionalInputShape(size_t i) const { return GetInputShape(i); }
    const Tensor* GetInputTensor(size_t i) const { return i < inputs_->size() ? &(*inputs_)[i].tensor : nullptr; }
    const Tensor* GetOptionalInputTensor(size_t i) const { return GetInputTensor(i); }
    Shape* GetOutputShape(size_t i) { return i < outputs_.size() ? &outputs_[i] : nullptr; }
    const RuntimeAttrs* GetAttrs() const { return &attrs_; }
    size_t GetComputeNodeInputNum() const { return inputs_->size(); }
    size_t GetComputeNodeOutputNum() const { return outputs_.size(); }
    const char* GetNodeName() const { return name_; }
    const char* GetNodeType() const { return name_; }

    const std::vector<Shape>& SageOutputs() const { return outputs_; }

private:
    const std::vector<SageIo>* inputs_;
    std::vector<Shape> outputs_;
    RuntimeAttrs attrs_;
    const char* name_;
};
// The signature an op_host file's InferDataType takes (recorded, never run: dtypes come from reference.py).
class InferDataTypeContext {
public:
    ge::DataType GetInputDataType(size_t) const { return ge::DT_UNDEFINED; }
    ge::DataType GetOutputDataType(size_t) const { return ge::DT_UNDEFINED; }
    ge::graphStatus SetOutputDataType(size_t, ge::DataType) { return ge::GRAPH_SUCCESS; }
    const RuntimeAttrs* GetAttrs() const { return nullptr; }
};
class TilingParseContext {};
class InferShapeRangeContext {};

}  // namespace gert

namespace ops {

enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };
enum class DependScope { ALL = 0, TILING = 1 };  // ValueDepend's second argument
enum class FollowType { ALL = 0, DTYPE = 1, FORMAT = 2, SHAPE = 3 };

using TilingKernelFunc = ge::graphStatus (*)(gert::TilingContext*);
using InferShapeKernelFunc = ge::graphStatus (*)(gert::InferShapeContext*);
using InferDataTypeKernelFunc = ge::graphStatus (*)(gert::InferDataTypeContext*);
using InferShapeRangeKernelFunc = ge::graphStatus (*)(gert::InferShapeRangeContext*);
using TilingParseFunc = ge::graphStatus (*)(gert::TilingParseContext*);

// One input or output: its name, whether it is required, the element types and formats it takes.
class OpParamDef {
public:
    explicit OpParamDef(const char* name) : name_(name) {}
    OpParamDef& ParamType(Option o) { param_ = o; return *this; }
    OpParamDef& DataType(std::vector<ge::DataType> t) { dtypes_ = std::move(t); return *this; }
    OpParamDef& DataTypeList(std::vector<ge::DataType> t) { dtypes_ = std::move(t); return *this; }
    OpParamDef& Format(std::vector<ge::Format> f) { formats_ = std::move(f); return *this; }
    OpParamDef& FormatList(std::vector<ge::Format> f) { formats_ = std::move(f); return *this; }
    OpParamDef& UnknownShapeFormat(std::vector<ge::Format>) { return *this; }
    // A data-dependent input: the tiling and infer-shape functions read its values (GetData).
    OpParamDef& ValueDepend(Option o) { value_depend_ = o; return *this; }
    OpParamDef& ValueDepend(Option o, DependScope) { return ValueDepend(o); }
    OpParamDef& IgnoreContiguous() { return *this; }
    OpParamDef& AutoContiguous() { return *this; }
    OpParamDef& Scalar() { return *this; }
    OpParamDef& ScalarList() { return *this; }
    OpParamDef& To(ge::DataType) { return *this; }
    OpParamDef& To(const char*) { return *this; }
    OpParamDef& Follow(const char*) { return *this; }
    OpParamDef& Follow(const char*, FollowType) { return *this; }
    OpParamDef& OutputShapeDependOnCompute() { return *this; }
    OpParamDef& InitValue(uint64_t) { return *this; }
    OpParamDef& InitValue(float) { return *this; }

    const std::string& SageName() const { return name_; }
    Option SageParam() const { return param_; }
    const std::vector<ge::DataType>& SageDataTypes() const { return dtypes_; }
    ge::Format SageFormat() const { return formats_.empty() ? ge::FORMAT_ND : formats_[0]; }
    Option SageValueDepend() const { return value_depend_; }

private:
    std::string name_;
    Option param_ = REQUIRED;
    Option value_depend_ = IGNORE;
    std::vector<ge::DataType> dtypes_;
    std::vector<ge::Format> formats_;
};

// One attribute and its default value (the value sage-npu's tiling call sees).
class OpAttrDef {
public:
    explicit OpAttrDef(const char* name) : name_(name) {}
    OpAttrDef& AttrType(Option o) { param_ = o; return *this; }
    OpAttrDef& Bool() { v_.kind = gert::SageAttrValue::kBool; return *this; }
    OpAttrDef& Bool(bool b) { Bool(); v_.b = b; return *this; }
    OpAttrDef& Int() { v_.kind = gert::SageAttrValue::kInt; return *this; }
    OpAttrDef& Int(int64_t i) { Int(); v_.i = i; return *this; }
    OpAttrDef& Float() { v_.kind = gert::SageAttrValue::kFloat; return *this; }
    OpAttrDef& Float(float f) { Float(); v_.f = f; return *this; }
    OpAttrDef& String() { v_.kind = gert::SageAttrValue::kStr; return *this; }
    OpAttrDef& String(const char* s) { String(); v_.s = s; return *this; }
    OpAttrDef& ListInt() { v_.kind = gert::SageAttrValue::kListInt; return *this; }
    OpAttrDef& ListInt(std::vector<int64_t> l) { ListInt(); v_.li = std::move(l); return *this; }
    OpAttrDef& ListFloat() { v_.kind = gert::SageAttrValue::kListFloat; return *this; }
    OpAttrDef& ListFloat(std::vector<float> l) { ListFloat(); v_.lf = std::move(l); return *this; }
    OpAttrDef& Version(uint32_t) { return *this; }

    const std::string& SageName() const { return name_; }
    Option SageParam() const { return param_; }
    const gert::SageAttrValue& SageValue() const { return v_; }

private:
    std::string name_;
    Option param_ = REQUIRED;
    gert::SageAttrValue v_;
};

class OpAICoreConfig {
public:
    OpAICoreConfig() = default;
    explicit OpAICoreConfig(const char*) {}
    OpParamDef& Input(const char* name) { params_.emplace_back(new OpParamDef(name)); return *params_.back(); }
    OpParamDef& Output(const char* name) { params_.emplace_back(new OpParamDef(name)); return *params_.back(); }
    OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
    OpAICoreConfig& DynamicFormatFlag(bool) { return *this; }
    OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
    OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
    OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
    OpAICoreConfig& PrecisionReduceFlag(bool) { return *this; }
    OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }

private:
    std::vector<std::shared_ptr<OpParamDef>> params_;
};

class OpAICoreDef {
public:
    OpAICoreDef& SetTiling(TilingKernelFunc f) { tiling_ = f; return *this; }
    OpAICoreDef& SetTilingParse(TilingParseFunc) { return *this; }
    template <typename F>
    OpAICoreDef& SetCheckSupport(F) { return *this; }
    template <typename F>
    OpAICoreDef& SetOpSelectFormat(F) { return *this; }
    OpAICoreDef& AddConfig(const char* soc) { socs_.emplace_back(soc); return *this; }
    OpAICoreDef& AddConfig(const char* soc, OpAICoreConfig&) { return AddConfig(soc); }

    TilingKernelFunc SageTiling() const { return tiling_; }
    const std::vector<std::string>& SageSocs() const { return socs_; }

private:
    TilingKernelFunc tiling_ = nullptr;
    std::vector<std::string> socs_;
};

class OpMC2Def {
public:
    OpMC2Def& HcclGroup(const char*) { return *this; }
    OpMC2Def& HcclGroup(std::vector<const char*>) { return *this; }
};

// The operator definition an op_host file derives from and OP_ADD registers.
class OpDef {
public:
    explicit OpDef(const char* type) : type_(type) {}
    virtual ~OpDef() = default;
    OpParamDef& Input(const char* name) { return add(inputs_, name); }
    OpParamDef& Output(const char* name) { return add(outputs_, name); }
    OpAttrDef& Attr(const char* name)
    {
        attrs_.emplace_back(new OpAttrDef(name));
        return *attrs_.back();
    }
    OpDef& SetInferShape(InferShapeKernelFunc f) { infer_shape_ = f; return *this; }
    OpDef& SetInferShapeRange(InferShapeRangeKernelFunc) { return *this; }
    OpDef& SetInferDataType(InferDataTypeKernelFunc) { return *this; }
    OpAICoreDef& AICore() { return aicore_; }
    OpMC2Def& MC2() { return mc2_; }

    const std::string& SageType() const { return type_; }
    const std::vector<std::shared_ptr<OpParamDef>>& SageInputs() const { return inputs_; }
    const std::vector<std::shared_ptr<OpParamDef>>& SageOutputs() const { return outputs_; }
    const std::vector<std::shared_ptr<OpAttrDef>>& SageAttrs() const { return attrs_; }
    InferShapeKernelFunc SageInferShape() const { return infer_shape_; }

private:
    static OpParamDef& add(std::vector<std::shared_ptr<OpParamDef>>& to, const char* name)
    {
        to.emplace_back(new OpParamDef(name));
        return *to.back();
    }
    std::string type_;
    std::vector<std::shared_ptr<OpParamDef>> inputs_, outputs_;
    std::vector<std::shared_ptr<OpAttrDef>> attrs_;
    OpAICoreDef aicore_;
    OpMC2Def mc2_;
    InferShapeKernelFunc infer_shape_ = nullptr;
};

// OP_ADD's registry: each operator's type name and a factory for its definition.
struct SageOpEntry {
    const char* type;
    std::unique_ptr<OpDef> (*make)(const char*);
};
inline std::vector<SageOpEntry>& sage_op_registry()
{
    static std::vector<SageOpEntry> ops;
    return ops;
}
struct SageOpRegistrar {
    SageOpRegistrar(const char* type, std::unique_ptr<OpDef> (*make)(const char*))
    {
        sage_op_registry().push_back({type, make});
    }
};

}  // namespace ops

#define OP_ADD(opType, ...)                                                                      \
    static ::ops::SageOpRegistrar g_sage_op_##opType(#opType, [](const char* n) {                \
        return std::unique_ptr<::ops::OpDef>(new opType(n));                                     \
    })

// IMPL_OP(opType) / IMPL_OP_OPTILING(opType) register an operator's functions by its type name
// (the gert form, beside OpDef's SetTiling/SetInferShape): `IMPL_OP_OPTILING(AddCustom).Tiling(TilingFunc)`.
// The driver takes the tiling and infer-shape functions from here when the OpDef names none.
namespace gert {
struct SageImplEntry {
    std::string type;
    ::ops::TilingKernelFunc tiling = nullptr;
    ::ops::InferShapeKernelFunc infer_shape = nullptr;
    std::vector<int32_t> data_inputs;  // InputsDataDependency: the ValueDepend inputs' indexes
};
inline std::vector<SageImplEntry>& sage_impl_registry()
{
    static std::vector<SageImplEntry> impls;
    return impls;
}
// The functions registered for `type` (an entry with none when nothing was).
inline SageImplEntry sage_impl_for(const std::string& type)
{
    SageImplEntry found{type};
    for (const auto& e : sage_impl_registry()) {
        if (e.type != type) continue;
        found.tiling = e.tiling ? e.tiling : found.tiling;
        found.infer_shape = e.infer_shape ? e.infer_shape : found.infer_shape;
        found.data_inputs.insert(found.data_inputs.end(), e.data_inputs.begin(), e.data_inputs.end());
    }
    return found;
}
class SageOpImpl {
public:
    explicit SageOpImpl(const char* type) : index_(sage_impl_registry().size())
    {
        sage_impl_registry().push_back({type});
    }
    // max_tiling_data_size: the framework's buffer for this op; the emulator's holds 64 KB either way.
    SageOpImpl& Tiling(::ops::TilingKernelFunc f, size_t = 2048) { entry().tiling = f; return *this; }
    SageOpImpl& InferShape(::ops::InferShapeKernelFunc f) { entry().infer_shape = f; return *this; }
    template <typename ParsedInfo = void, typename F>
    SageOpImpl& TilingParse(F) { return *this; }
    template <typename F>
    SageOpImpl& InferDataType(F) { return *this; }
    template <typename F>
    SageOpImpl& InferShapeRange(F) { return *this; }
    SageOpImpl& InputsDataDependency(std::initializer_list<int32_t> inputs)
    {
        entry().data_inputs.insert(entry().data_inputs.end(), inputs);
        return *this;
    }
    SageOpImpl& TilingInputsDataDependency(std::initializer_list<int32_t> inputs)
    {
        return InputsDataDependency(inputs);
    }

private:
    SageImplEntry& entry() { return sage_impl_registry()[index_]; }
    size_t index_;
};
}  // namespace gert
#define SAGE_OP_IMPL_CAT(a, b) SAGE_OP_IMPL_CAT2(a, b)
#define SAGE_OP_IMPL_CAT2(a, b) a##b
#define IMPL_OP(opType) \
    static ::gert::SageOpImpl SAGE_OP_IMPL_CAT(g_sage_impl_, __COUNTER__) = ::gert::SageOpImpl(#opType)
#define IMPL_OP_OPTILING(opType) IMPL_OP(opType)
