// The driver of an op project's host tiling (npu_eval/op_project.py generates a file that includes
// op_host/<op>.cpp and then this): main() finds the operator OP_ADD registered, prints its
// definition, then calls its tiling function once per trial described in the input file and
// prints what it set. One JSON object per line on stdout:
//   {"op": ..., "inputs": [...], "outputs": [...], "attrs": [...], "socs": [...], "tiling": bool, "classes": [...]}
//   {"status": N, "block_dim": N, "block_dim_set": bool, "key": N, "workspaces": [...], "data_size": N,
//    "overflow": N, "overflow_capacity": N, "bytes": "hex"}                                  (one per trial)
// Input (argv[1]): lines "attr NAME VALUE" (an attribute's value for every call, by name, instead
// of its OpDef default), then per trial a line "trial NIN NOUT" and NIN + NOUT lines "DTYPE NDIM D0 D1 ...".
// argv[2]: the operator's type when the file registers several.
#pragma once

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../register/op_def_registry.h"

namespace sage {
namespace sim {
namespace optool {

// The framework's tiling buffer (what GetRawTilingData()->GetCapacity() answers).
constexpr size_t TILING_CAPACITY = 64 * 1024;

inline void json_string(const std::string& s)
{
    std::putchar('"');
    for (char c : s) {
        if (c == '"' || c == '\\') std::printf("\\%c", c);
        else if (static_cast<unsigned char>(c) < 0x20) std::printf("\\u%04x", c);
        else std::putchar(c);
    }
    std::putchar('"');
}

inline void print_params(const char* key, const std::vector<std::shared_ptr<::ops::OpParamDef>>& ps)
{
    std::printf("\"%s\": [", key);
    for (size_t i = 0; i < ps.size(); ++i) {
        std::printf("%s{\"name\": ", i ? ", " : "");
        json_string(ps[i]->SageName());
        std::printf(", \"param\": %d, \"dtypes\": [", int(ps[i]->SageParam()));
        const auto& d = ps[i]->SageDataTypes();
        for (size_t k = 0; k < d.size(); ++k) std::printf("%s%d", k ? ", " : "", int(d[k]));
        std::printf("]}");
    }
    std::printf("]");
}

// "... [with T = ns::Name]" (g++) or "... [T = ns::Name]" (clang): the type's name.
inline std::string cut_type(const char* pretty)
{
    std::string s(pretty);
    size_t at = s.find("T = ");
    if (at == std::string::npos) return "";
    s = s.substr(at + 4);
    size_t end = s.find_first_of(";]");
    return end == std::string::npos ? s : s.substr(0, end);
}

inline void print_definition(const ::ops::OpDef& op)
{
    std::printf("{\"op\": ");
    json_string(op.SageType());
    std::printf(", ");
    print_params("inputs", op.SageInputs());
    std::printf(", ");
    print_params("outputs", op.SageOutputs());
    std::printf(", \"attrs\": [");
    for (size_t i = 0; i < op.SageAttrs().size(); ++i) {
        const auto& a = *op.SageAttrs()[i];
        std::printf("%s{\"name\": ", i ? ", " : "");
        json_string(a.SageName());
        std::printf(", \"param\": %d, \"has_value\": %s}", int(a.SageParam()),
                    a.SageValue().kind == gert::SageAttrValue::kNone ? "false" : "true");
    }
    std::printf("], \"socs\": [");
    const auto& socs = const_cast<::ops::OpDef&>(op).AICore().SageSocs();
    for (size_t i = 0; i < socs.size(); ++i) {
        std::printf("%s", i ? ", " : "");
        json_string(socs[i]);
    }
    std::printf("], \"tiling\": %s, \"classes\": [", const_cast<::ops::OpDef&>(op).AICore().SageTiling() ? "true" : "false");
    size_t n = 0;
    TilingClass* cls = tiling_classes(&n);
    for (size_t i = 0; i < n; ++i) {
        std::printf("%s{\"op\": ", i ? ", " : "");
        json_string(cls[i].op);
        std::printf(", \"type\": ");
        json_string(cut_type(cls[i].type));
        std::printf(", \"bytes\": %zu}", cls[i].bytes);
    }
    std::printf("]}\n");
}

inline bool read_io(FILE* in, const ::ops::OpParamDef* def, gert::SageIo& io)
{
    int dtype = 0;
    size_t ndim = 0;
    if (std::fscanf(in, "%d %zu", &dtype, &ndim) != 2 || ndim > 64) return false;
    gert::Shape shape;
    for (size_t d = 0; d < ndim; ++d) {
        long long v = 0;
        if (std::fscanf(in, "%lld", &v) != 1) return false;
        shape.AppendDim(v);
    }
    ge::Format f = def ? def->SageFormat() : ge::FORMAT_ND;
    io.shape = gert::StorageShape(shape);
    io.tensor = gert::Tensor(io.shape, ge::DataType(dtype), f);
    io.desc = gert::CompileTimeTensorDesc(ge::DataType(dtype), f);
    return true;
}

inline void print_trial(gert::TilingContext& ctx, ge::graphStatus status)
{
    const gert::TilingData* raw = ctx.GetRawTilingData();
    size_t size = raw->GetDataSize();
    std::printf("{\"status\": %u, \"block_dim\": %u, \"block_dim_set\": %s, \"key\": %llu, \"workspaces\": [",
                unsigned(status), ctx.GetBlockDim(), ctx.SageBlockDimSet() ? "true" : "false",
                static_cast<unsigned long long>(ctx.GetTilingKey()));
    for (size_t i = 0; i < ctx.SageWorkspaces().size(); ++i)
        std::printf("%s%zu", i ? ", " : "", ctx.SageWorkspaces()[i]);
    std::printf("], \"data_size\": %zu, \"overflow\": %zu, \"overflow_capacity\": %zu, \"bytes\": \"", size,
                tiling_overflow().bytes, tiling_overflow().capacity);
    const auto* b = static_cast<const unsigned char*>(raw->GetData());
    for (size_t i = 0; i < size && i < raw->GetCapacity(); ++i) std::printf("%02x", b[i]);
    std::printf("\"}\n");
}

// "attr NAME VALUE": the named attribute's value (a number; a bool is 0 or 1).
inline bool set_attr(FILE* in, const ::ops::OpDef& op, std::vector<gert::SageAttrValue>& attrs)
{
    char name[128];
    double v = 0;
    if (std::fscanf(in, "%127s %lf", name, &v) != 2) return false;
    for (size_t i = 0; i < op.SageAttrs().size(); ++i) {
        if (op.SageAttrs()[i]->SageName() != name) continue;
        gert::SageAttrValue& a = attrs[i];
        if (a.kind == gert::SageAttrValue::kFloat) a.f = float(v);
        else if (a.kind == gert::SageAttrValue::kInt) a.i = int64_t(v);
        else if (a.kind == gert::SageAttrValue::kBool) a.b = v != 0;
    }
    return true;
}

inline int run(int argc, char** argv)
{
    auto& ops = ::ops::sage_op_registry();
    const ::ops::SageOpEntry* chosen = nullptr;
    for (const auto& e : ops)
        if (argc < 3 || ops.size() == 1 || std::strcmp(e.type, argv[2]) == 0) chosen = chosen ? chosen : &e;
    if (chosen == nullptr) {
        std::printf("{\"error\": \"no operator registered with OP_ADD%s\"}\n", ops.empty() ? "" : " by that name");
        return 0;
    }
    std::unique_ptr<::ops::OpDef> op = chosen->make(chosen->type);
    print_definition(*op);
    std::fflush(stdout);
    FILE* in = argc > 1 ? std::fopen(argv[1], "r") : nullptr;
    if (in == nullptr) return 2;
    std::vector<gert::SageAttrValue> attrs;
    for (const auto& a : op->SageAttrs()) attrs.push_back(a->SageValue());
    char word[16];
    size_t nin = 0, nout = 0;
    while (std::fscanf(in, "%15s", word) == 1) {
        if (std::strcmp(word, "attr") == 0) {
            if (!set_attr(in, *op, attrs)) return 2;
            continue;
        }
        if (std::fscanf(in, "%zu %zu", &nin, &nout) != 2) return 2;
        std::vector<gert::SageIo> ins(nin), outs(nout);
        for (size_t i = 0; i < nin; ++i)
            if (!read_io(in, i < op->SageInputs().size() ? op->SageInputs()[i].get() : nullptr, ins[i])) return 2;
        for (size_t i = 0; i < nout; ++i)
            if (!read_io(in, i < op->SageOutputs().size() ? op->SageOutputs()[i].get() : nullptr, outs[i])) return 2;
        gert::TilingContext ctx(std::move(ins), std::move(outs), &attrs, TILING_CAPACITY, chosen->type);
        tiling_overflow() = {0, 0};
        ::ops::TilingKernelFunc f = op->AICore().SageTiling();
        ge::graphStatus status = f ? f(&ctx) : ge::GRAPH_FAILED;
        print_trial(ctx, status);
        std::fflush(stdout);
    }
    std::fclose(in);
    return 0;
}

}  // namespace optool
}  // namespace sim
}  // namespace sage

int main(int argc, char** argv) { return ::sage::sim::optool::run(argc, argv); }
