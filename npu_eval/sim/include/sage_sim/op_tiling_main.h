// The driver of an op project's host tiling (npu_eval/op_project.py generates a file that includes
// op_host/<op>.cpp and then this): main() finds the operator OP_ADD registered, prints its
// definition, then, once per trial described in the input file, calls its infer-shape function
// (when it has one) and its tiling function and prints what they set. One JSON object per line on stdout:
//   {"op": ..., "inputs": [...], "outputs": [...], "attrs": [...], "socs": [...], "tiling": bool,
//    "infer_shape": bool, "classes": [...]}
//   {"infer_status": N, "shapes": [[D0, ...], ...]}                   (per trial, with an infer-shape function)
//   {"status": N, "block_dim": N, "block_dim_set": bool, "key": N, "workspaces": [...], "data_size": N,
//    "overflow": N, "overflow_capacity": N, "bytes": "hex"}                                  (one per trial)
//   {"error": "..."}                                   (input the operator cannot take; nothing follows)
// Input (argv[1]): "attr NAME n NUMBER", "attr NAME s xHEX" (a string's bytes in hex) or
// "attr NAME l COUNT V0 V1 ..." lines (an attribute's value for every call, by name, instead of its
// OpDef default), then per trial a line "trial NIN NOUT" and NIN + NOUT lines
// "DTYPE NDIM D0 D1 ... xHEX" (HEX: the path of the tensor's raw bytes, read for a ValueDepend input).
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
        std::printf(", \"param\": %d, \"value_depend\": %d, \"dtypes\": [", int(ps[i]->SageParam()),
                    int(ps[i]->SageValueDepend()));
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

// The functions the operator runs: OpDef's SetTiling/SetInferShape, else IMPL_OP_OPTILING's.
struct OpFunctions {
    ::ops::TilingKernelFunc tiling;
    ::ops::InferShapeKernelFunc infer_shape;
    std::vector<bool> value_depend;  // per input
};

inline OpFunctions op_functions(::ops::OpDef& op)
{
    gert::SageImplEntry impl = gert::sage_impl_for(op.SageType());
    OpFunctions f{op.AICore().SageTiling() ? op.AICore().SageTiling() : impl.tiling,
                  op.SageInferShape() ? op.SageInferShape() : impl.infer_shape, {}};
    for (size_t i = 0; i < op.SageInputs().size(); ++i) {
        bool listed = false;
        for (int32_t k : impl.data_inputs) listed = listed || k == int32_t(i);
        f.value_depend.push_back(listed || op.SageInputs()[i]->SageValueDepend() != ::ops::IGNORE);
    }
    return f;
}

inline void print_definition(const ::ops::OpDef& op, const OpFunctions& fns)
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
        std::printf(", \"param\": %d, \"kind\": %d, \"has_value\": %s}", int(a.SageParam()),
                    int(a.SageValue().kind), a.SageValue().kind == gert::SageAttrValue::kNone ? "false" : "true");
    }
    std::printf("], \"socs\": [");
    const auto& socs = const_cast<::ops::OpDef&>(op).AICore().SageSocs();
    for (size_t i = 0; i < socs.size(); ++i) {
        std::printf("%s", i ? ", " : "");
        json_string(socs[i]);
    }
    std::printf("], \"tiling\": %s, \"infer_shape\": %s, \"classes\": [", fns.tiling ? "true" : "false",
                fns.infer_shape ? "true" : "false");
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

// The longest string (bytes) and list attribute values the input file holds: MAX_ATTR_STRING and
// MAX_ATTR_LIST in npu_eval/plan.py, which gives none longer (a test checks they agree).
constexpr size_t MAX_ATTR_STRING = 4000;
constexpr size_t MAX_ATTR_LIST = 65536;

// "xHEX": the bytes HEX spells ("x" alone: none).
inline bool read_hex(FILE* in, std::string& out)
{
    static char buf[8192];
    static_assert(2 * MAX_ATTR_STRING + 1 < sizeof(buf), "a string attribute's hex fits the buffer");
    if (std::fscanf(in, "%8191s", buf) != 1 || buf[0] != 'x') return false;
    out.clear();
    for (const char* c = buf + 1; c[0] && c[1]; c += 2) {
        unsigned v = 0;
        if (std::sscanf(c, "%2x", &v) != 1) return false;
        out.push_back(char(v));
    }
    return true;
}

// A ValueDepend input's bytes, from the file the plan wrote; false (with `why`) when it is short.
inline bool read_data(const std::string& path, gert::Tensor& t, std::string& why)
{
    FILE* f = std::fopen(path.c_str(), "rb");
    auto bytes = std::make_shared<std::vector<uint8_t>>(t.GetSize());
    size_t got = f ? std::fread(bytes->data(), 1, bytes->size(), f) : 0;
    if (f) std::fclose(f);
    if (got != bytes->size()) {
        why = "cannot read a ValueDepend input's " + std::to_string(bytes->size()) + " bytes from " + path;
        return false;
    }
    t.SageSetData(bytes);
    return true;
}

inline bool read_io(FILE* in, const ::ops::OpParamDef* def, bool value_depend, gert::SageIo& io, std::string& why)
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
    std::string path;
    if (!read_hex(in, path)) return false;
    return !value_depend || read_data(path, io.tensor, why);
}

inline void print_error(const std::string& why)
{
    std::printf("{\"error\": ");
    json_string(why);
    std::printf("}\n");
}

// The infer-shape function's answer for one call: its status and every output's shape.
inline void run_infer_shape(::ops::InferShapeKernelFunc f, const std::vector<gert::SageIo>& ins, size_t nout,
                            const std::vector<gert::SageAttrValue>& attrs, const char* type)
{
    gert::InferShapeContext ctx(&ins, nout, &attrs, type);
    ge::graphStatus status = f(&ctx);
    std::printf("{\"infer_status\": %u, \"shapes\": [", unsigned(status));
    for (size_t i = 0; i < nout; ++i) {
        const gert::Shape& s = ctx.SageOutputs()[i];
        std::printf("%s[", i ? ", " : "");
        for (size_t d = 0; d < s.GetDimNum(); ++d) std::printf("%s%lld", d ? ", " : "", (long long)s.GetDim(d));
        std::printf("]");
    }
    std::printf("]}\n");
    std::fflush(stdout);
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

inline const char* kind_name(int kind)
{
    static const char* names[] = {"no type", "Bool", "Int", "Float", "String", "ListInt", "ListFloat"};
    return kind >= 0 && kind <= 6 ? names[kind] : "?";
}

// One "attr NAME n|s|l ..." line: the named attribute's value, when its OpDef type takes it
// (a number for Bool/Int/Float, a string for String, a list for ListInt/ListFloat); else `why`.
inline bool set_attr(FILE* in, const ::ops::OpDef& op, std::vector<gert::SageAttrValue>& attrs, std::string& why)
{
    char name[128], form[4];
    if (std::fscanf(in, "%127s %3s", name, form) != 2) return false;
    double number = 0;
    std::string text;
    std::vector<double> list;
    size_t count = 0;
    if (form[0] == 'l') {
        if (std::fscanf(in, "%zu", &count) != 1 || count > MAX_ATTR_LIST) return false;
        for (double x = 0; list.size() < count && std::fscanf(in, "%lf", &x) == 1;) list.push_back(x);
        if (list.size() != count) return false;
    } else if (!(form[0] == 'n' && std::fscanf(in, "%lf", &number) == 1) && !(form[0] == 's' && read_hex(in, text))) {
        return false;
    }
    for (size_t i = 0; i < op.SageAttrs().size(); ++i) {
        if (op.SageAttrs()[i]->SageName() != name) continue;
        gert::SageAttrValue& a = attrs[i];
        const char* given = form[0] == 's' ? "a string" : form[0] == 'n' ? "a number" : "a list";
        bool takes_number = a.kind == gert::SageAttrValue::kFloat || a.kind == gert::SageAttrValue::kInt ||
                            a.kind == gert::SageAttrValue::kBool;
        bool takes_list = a.kind == gert::SageAttrValue::kListInt || a.kind == gert::SageAttrValue::kListFloat;
        if (takes_number && form[0] == 'n') {
            a.f = float(number);
            a.i = int64_t(number);
            a.b = number != 0;
        } else if (a.kind == gert::SageAttrValue::kStr && form[0] == 's') {
            a.s = text;
        } else if (takes_list && form[0] == 'l') {
            a.li.assign(list.begin(), list.end());
            a.lf.assign(list.begin(), list.end());
        } else {
            why = std::string("attribute '") + name + "' is " + kind_name(int(a.kind)) + " in the OpDef but the " +
                  "reference Model's " + name + " is " + given;
            return false;
        }
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
    OpFunctions fns = op_functions(*op);
    print_definition(*op, fns);
    std::fflush(stdout);
    FILE* in = argc > 1 ? std::fopen(argv[1], "r") : nullptr;
    if (in == nullptr) return 2;
    std::vector<gert::SageAttrValue> attrs;
    for (const auto& a : op->SageAttrs()) attrs.push_back(a->SageValue());
    char word[16];
    size_t nin = 0, nout = 0;
    std::string why;
    while (std::fscanf(in, "%15s", word) == 1) {
        if (std::strcmp(word, "attr") == 0) {
            if (!set_attr(in, *op, attrs, why)) {
                why = why.empty() ? "the trial file's attribute line is malformed" : why;
                break;
            }
            continue;
        }
        if (std::fscanf(in, "%zu %zu", &nin, &nout) != 2) return 2;
        std::vector<gert::SageIo> ins(nin), outs(nout);
        bool ok = true;
        for (size_t i = 0; i < nin && ok; ++i) {
            bool has = i < op->SageInputs().size();
            ok = read_io(in, has ? op->SageInputs()[i].get() : nullptr, has && fns.value_depend[i], ins[i], why);
        }
        for (size_t i = 0; i < nout && ok; ++i)
            ok = read_io(in, i < op->SageOutputs().size() ? op->SageOutputs()[i].get() : nullptr, false, outs[i], why);
        if (!ok) {
            why = why.empty() ? "the trial file is malformed (input " + std::to_string(nin) + ")" : why;
            break;
        }
        if (fns.infer_shape) run_infer_shape(fns.infer_shape, ins, nout, attrs, chosen->type);
        gert::TilingContext ctx(std::move(ins), std::move(outs), &attrs, TILING_CAPACITY, chosen->type);
        tiling_overflow() = {0, 0};
        ge::graphStatus status = fns.tiling ? fns.tiling(&ctx) : ge::GRAPH_FAILED;
        print_trial(ctx, status);
        std::fflush(stdout);
    }
    std::fclose(in);
    if (!why.empty()) print_error(why);
    return why.empty() ? 0 : 2;
}

}  // namespace optool
}  // namespace sim
}  // namespace sage

int main(int argc, char** argv) { return ::sage::sim::optool::run(argc, argv); }
