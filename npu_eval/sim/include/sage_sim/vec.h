// What every vector instruction shares: operand checks (live buffer, bounds, 32-byte
// alignment, initialised sources), the dtype gate, and the trace record. The API family
// headers (kernel_vec_*.h) are thin loops over these.
#pragma once

#include <type_traits>

#include "../kernel_tensor.h"

namespace sage {
namespace sim {

// The vector unit's dtypes per chip family. A kernel that asks for another gets a compile
// error tagged [dtype-unsupported], which the build stage reports with that code.
template <typename T>
constexpr bool is_vec_float() {
    return std::is_same<T, half>::value || std::is_same<T, float>::value;
}
template <typename T>
constexpr bool is_vec_int() {
    return std::is_same<T, int16_t>::value || std::is_same<T, int32_t>::value || std::is_same<T, uint16_t>::value ||
           std::is_same<T, uint32_t>::value;
}

// Vector ops read and write 256 bytes per repeat; the cost model wants the repeat count.
template <typename T>
inline uint32_t repeats_of(uint64_t count) {
    return uint32_t((count * sizeof(T) + 255) / 256);
}

template <typename T>
inline void vec_src(const AscendC::LocalTensor<T>& t, const char* api, uint64_t count, SrcLoc loc) {
    t.check(api, count, loc);
    ub_check_init(t.range(count), api, loc);
}
template <typename T>
inline void vec_dst(const AscendC::LocalTensor<T>& t, const char* api, uint64_t count, SrcLoc loc) {
    t.check(api, count, loc);
}
template <typename T>
inline void vec_done(const AscendC::LocalTensor<T>& dst, const char* api, uint64_t count, SrcLoc loc, UbRange r0,
                     UbRange r1 = {}) {
    ub_mark(dst.range(count));
    trace_instr(Pipe::V, api, dtype_name<T>(), uint32_t(count), count * sizeof(T), loc, dst.range(count), r0, r1);
}

}  // namespace sim
}  // namespace sage
