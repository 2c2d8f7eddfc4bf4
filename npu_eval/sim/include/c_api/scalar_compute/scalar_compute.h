// The C API's scalar bit operations (asc-devkit include/c_api/scalar_compute/scalar_compute.h),
// the ones 910B has: on the scalar unit (PIPE_S), one instruction each. Bit positions count from
// the least significant bit, from 0; a search that finds nothing returns -1.
#pragma once

#include "../../sage_sim/runtime.h"

namespace sage {
namespace sim {
namespace capi {
inline void scalar_op(const char* api, SrcLoc loc) {
    touch(loc);
    trace_instr(Pipe::S, api, "int64", 1, 0, loc);
}
}  // namespace capi
}  // namespace sim
}  // namespace sage

// Leading bits after the sign bit equal to it (0x0f00000000000000 gives 3).
__aicore__ inline int64_t asc_sflbits(int64_t value, SAGE_LOC) {
    sage::sim::capi::scalar_op("asc_sflbits", loc);
    uint64_t v = uint64_t(value);
    uint64_t rest = (value < 0 ? ~v : v) << 1;  // the value bits, made positive, sign bit dropped
    return rest == 0 ? 63 : __builtin_clzll(rest);
}
__aicore__ inline int64_t asc_ffz(uint64_t value, SAGE_LOC) {
    sage::sim::capi::scalar_op("asc_ffz", loc);
    return ~value == 0 ? -1 : __builtin_ctzll(~value);
}
__aicore__ inline int64_t asc_ffs(uint64_t value, SAGE_LOC) {
    sage::sim::capi::scalar_op("asc_ffs", loc);
    return value == 0 ? -1 : __builtin_ctzll(value);
}
__aicore__ inline int64_t asc_popc(uint64_t value, SAGE_LOC) {
    sage::sim::capi::scalar_op("asc_popc", loc);
    return __builtin_popcountll(value);
}
__aicore__ inline int64_t asc_clz(uint64_t value_in, SAGE_LOC) {
    sage::sim::capi::scalar_op("asc_clz", loc);
    return value_in == 0 ? 64 : __builtin_clzll(value_in);
}
__aicore__ inline int64_t asc_zero_bits_cnt(uint64_t value, SAGE_LOC) {
    sage::sim::capi::scalar_op("asc_zero_bits_cnt", loc);
    return 64 - __builtin_popcountll(value);
}
// Bit idx (0..63) set or cleared; another idx leaves the bits as they are.
__aicore__ inline uint64_t asc_set_nthbit(uint64_t bits, int64_t idx, SAGE_LOC) {
    sage::sim::capi::scalar_op("asc_set_nthbit", loc);
    return idx >= 0 && idx < 64 ? bits | (1ull << idx) : bits;
}
__aicore__ inline uint64_t asc_clear_nthbit(uint64_t bits, int64_t idx, SAGE_LOC) {
    sage::sim::capi::scalar_op("asc_clear_nthbit", loc);
    return idx >= 0 && idx < 64 ? bits & ~(1ull << idx) : bits;
}
