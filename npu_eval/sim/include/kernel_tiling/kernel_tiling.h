// Tiling data passed through global memory (framework-style entries). The op build would
// generate the struct; here the kernel names it with REGISTER_TILING_DEFAULT or the harness
// defines SAGE_TILING_TYPE from Launch(args=[..., Tiling(type="Name", ...)]). And the tiling
// key a kernel with several tiling branches tests with TILING_KEY_IS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sage {
namespace sim {
// The launch's tiling key: Launch(tiling_key=...) in task mode (the harness sets it from the
// manifest), ICPU_SET_TILING_KEY in a CPU-debug program; 0 when nothing set one. The op build
// compiles one binary per key; here one binary serves every key, so every TILING_KEY_IS branch
// is compiled and the key picks one at run time, as CANN's CPU debug does.
inline uint64_t& tiling_key() {
    static uint64_t key = 0;
    return key;
}
}  // namespace sim
}  // namespace sage

#ifndef TILING_KEY_VAR
#define TILING_KEY_VAR (::sage::sim::tiling_key())
#endif
#ifndef TILING_KEY_IS
#define TILING_KEY_IS(k) (TILING_KEY_VAR == uint64_t(k))
#endif
// TILING_KEY_LIST(1, 2, ...): the key is one of these (up to 8, as CANN's macro takes).
#define SAGE_TILING_KEY_IN(k) TILING_KEY_VAR == uint64_t(k)
#define SAGE_TILING_KEY_1(a) SAGE_TILING_KEY_IN(a)
#define SAGE_TILING_KEY_2(a, ...) SAGE_TILING_KEY_IN(a) || SAGE_TILING_KEY_1(__VA_ARGS__)
#define SAGE_TILING_KEY_3(a, ...) SAGE_TILING_KEY_IN(a) || SAGE_TILING_KEY_2(__VA_ARGS__)
#define SAGE_TILING_KEY_4(a, ...) SAGE_TILING_KEY_IN(a) || SAGE_TILING_KEY_3(__VA_ARGS__)
#define SAGE_TILING_KEY_5(a, ...) SAGE_TILING_KEY_IN(a) || SAGE_TILING_KEY_4(__VA_ARGS__)
#define SAGE_TILING_KEY_6(a, ...) SAGE_TILING_KEY_IN(a) || SAGE_TILING_KEY_5(__VA_ARGS__)
#define SAGE_TILING_KEY_7(a, ...) SAGE_TILING_KEY_IN(a) || SAGE_TILING_KEY_6(__VA_ARGS__)
#define SAGE_TILING_KEY_8(a, ...) SAGE_TILING_KEY_IN(a) || SAGE_TILING_KEY_7(__VA_ARGS__)
#define SAGE_TILING_KEY_COUNT(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) N
#define SAGE_TILING_KEY_CAT(a, b) SAGE_TILING_KEY_CAT2(a, b)
#define SAGE_TILING_KEY_CAT2(a, b) a##b
#ifndef TILING_KEY_LIST
#define TILING_KEY_LIST(...) \
    (SAGE_TILING_KEY_CAT(SAGE_TILING_KEY_, SAGE_TILING_KEY_COUNT(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0))(__VA_ARGS__))
#endif

// The type GET_TILING_DATA reads: SAGE_TILING_TYPE, a macro when the harness names the type
// (Tiling(type="Name")), else the alias REGISTER_TILING_DEFAULT declares. The harness defines
// the macro after this header was read (it includes the emulator first), so the choice is left
// to where GET_TILING_DATA expands.
#define REGISTER_TILING_DEFAULT(T)           \
    using SageRegisteredTilingType = T;      \
    using SAGE_TILING_TYPE = T
#define REGISTER_TILING_FOR_TILINGKEY(...)

#define GET_TILING_DATA(var, tiling)   \
    SAGE_TILING_TYPE var;              \
    memcpy(&var, reinterpret_cast<const void*>(tiling), sizeof(var))
#define GET_TILING_DATA_WITH_STRUCT(type, var, tiling) \
    type var;                                          \
    memcpy(&var, reinterpret_cast<const void*>(tiling), sizeof(type))
#define GET_TILING_DATA_MEMBER(type, member, var, tiling)                                  \
    decltype(type::member) var;                                                            \
    memcpy(&var, reinterpret_cast<const uint8_t*>(tiling) + offsetof(type, member), sizeof(var))

// CANN op projects define the tiling in op_host/<op>_tiling.h with BEGIN_TILING_DATA_DEF ...
// END_TILING_DATA_DEF, and the op build generates the kernel's plain struct of the same fields
// from it (the kernel file itself never defines it). Here such a definition is that struct, with
// the host side's set_/get_ accessors, SaveToBuffer and GetDataSize. A task whose kernel file only
// reads GET_TILING_DATA names the header with the build define SAGE_TILING_HEADER, found beside the kernel:
// Launch(defines={"SAGE_TILING_HEADER": '"op_host/my_op_tiling.h"'}, args=[..., Tiling(type="optiling::TilingData", ...)]).
#ifndef BEGIN_TILING_DATA_DEF
namespace sage {
namespace sim {
// A struct SaveToBuffer could not fit in the buffer it was given: its size and the buffer's
// (0, 0: none). The op-project tiling driver (sage_sim/op_tiling_main.h) reports it rather than
// run the kernel on a truncated copy.
struct TilingOverflow {
    size_t bytes;
    size_t capacity;
};
inline TilingOverflow& tiling_overflow() {
    static TilingOverflow o{0, 0};
    return o;
}
// REGISTER_TILING_DATA_CLASS(op, cls): each op's tiling struct by its compiler-spelled type name
// (the driver reports it; the kernel build reads GET_TILING_DATA as that type).
struct TilingClass {
    const char* op;
    const char* type;
    size_t bytes;
};
inline TilingClass* tiling_classes(size_t* count) {
    static TilingClass classes[16];
    static size_t n = 0;
    if (count != nullptr) *count = n;
    return count == nullptr ? &classes[n < 16 ? n++ : 15] : classes;
}
template <typename T>
const char* type_name() {
    return __PRETTY_FUNCTION__;  // "... [with T = ns::Name]": the driver cuts the name out
}
struct TilingClassRegistrar {
    TilingClassRegistrar(const char* op, const char* type, size_t bytes) { *tiling_classes(nullptr) = {op, type, bytes}; }
};
}  // namespace sim
}  // namespace sage
// SaveToBuffer copies the filled struct into the host's tiling buffer; one larger than the
// buffer is recorded (tiling_overflow) and not copied.
#define BEGIN_TILING_DATA_DEF(name)                                                       \
    struct name {                                                                         \
        inline void SaveToBuffer(void* sage_dst, size_t sage_cap) const {                 \
            if (sage_cap < sizeof(*this)) {                                               \
                ::sage::sim::tiling_overflow() = {sizeof(*this), sage_cap};               \
                return;                                                                   \
            }                                                                             \
            memcpy(sage_dst, this, sizeof(*this));                                        \
        }                                                                                 \
        inline size_t GetDataSize() const { return sizeof(*this); }
#define TILING_DATA_FIELD_DEF(type, field)                   \
    type field;                                              \
    inline void set_##field(type sage_v) { field = sage_v; } \
    inline type get_##field() const { return field; }
#define TILING_DATA_FIELD_DEF_ARR(type, count, field)                                     \
    type field[count];                                                                    \
    inline void set_##field(const type* sage_v) { memcpy(field, sage_v, sizeof(field)); } \
    inline const type* get_##field() const { return field; }
#define TILING_DATA_FIELD_DEF_STRUCT(type, field) type field;
#define END_TILING_DATA_DEF }
#define REGISTER_TILING_DATA_CLASS(op, cls)                                                                   \
    static ::sage::sim::TilingClassRegistrar g_sage_tiling_class_##op(#op, ::sage::sim::type_name<cls>(), \
                                                                       sizeof(cls));
#endif


// ---- TCubeTiling: the Matmul high-level API's tiling (asc-devkit matmul_tilingdata.h's field
// list, in its order: every field int32_t). The kernel reads AscendC::tiling::TCubeTiling (also
// ::TCubeTiling); host code fills optiling::TCubeTiling with MatmulApiTiling::GetTiling. Here the
// three names are one type, so the bytes a host saves are the bytes the kernel copies back.
#define SAGE_TCUBE_TILING_FIELDS(F)                                                                                 \
    F(usedCoreNum) F(M) F(N) F(Ka) F(Kb) F(singleCoreM) F(singleCoreN) F(singleCoreK) F(baseM) F(baseN) F(baseK)   \
    F(depthA1) F(depthB1) F(stepM) F(stepN) F(isBias) F(transLength) F(iterateOrder) F(shareMode) F(shareL1Size)   \
    F(shareL0CSize) F(shareUbSize) F(batchM) F(batchN) F(singleBatchM) F(singleBatchN) F(stepKa) F(stepKb)         \
    F(depthAL1CacheUB) F(depthBL1CacheUB) F(dbL0A) F(dbL0B) F(dbL0C) F(ALayoutInfoB) F(ALayoutInfoS)              \
    F(ALayoutInfoN) F(ALayoutInfoG) F(ALayoutInfoD) F(BLayoutInfoB) F(BLayoutInfoS) F(BLayoutInfoN)               \
    F(BLayoutInfoG) F(BLayoutInfoD) F(CLayoutInfoB) F(CLayoutInfoS1) F(CLayoutInfoN) F(CLayoutInfoG)              \
    F(CLayoutInfoS2) F(BatchNum) F(mxTypePara)
#define SAGE_TCUBE_FIELD(name)                                      \
    int32_t name = 0;                                               \
    inline void set_##name(int32_t sage_v) { name = sage_v; }       \
    inline int32_t get_##name() const { return name; }
namespace AscendC {
namespace tiling {
struct TCubeTiling {
    SAGE_TCUBE_TILING_FIELDS(SAGE_TCUBE_FIELD)
    inline void SaveToBuffer(void* sage_dst, size_t sage_cap) const {
        memcpy(sage_dst, this, sage_cap < sizeof(*this) ? sage_cap : sizeof(*this));
    }
    inline size_t GetDataSize() const { return sizeof(*this); }
};
}  // namespace tiling
}  // namespace AscendC
#undef SAGE_TCUBE_FIELD
using AscendC::tiling::TCubeTiling;
namespace optiling {
using AscendC::tiling::TCubeTiling;
}  // namespace optiling

#ifdef SAGE_TILING_HEADER
#include SAGE_TILING_HEADER
#endif
