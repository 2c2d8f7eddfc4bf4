// Scalar access to global memory outside GlobalTensor: the GM atomics (AtomicAdd/Max/Min/Exch/
// Cas on one element), the DCache-bypassing ReadGmByPassDCache/WriteGmByPassDCache, and
// DataSyncBarrier. The emulator runs a core's instructions in order, so the barrier only checks
// and records; the accesses check their address like a GlobalTensor scalar access does (bounds,
// freed memory) and record the writer for the race check. ReadGmByPassDCache reads GM itself,
// never the core's data cache (sage_sim/dcache.h), so a spin loop on it ends when another core
// stores: it is a poll point of the cooperative runner.
#pragma once

#include <type_traits>

#include "../sage_sim/dcache.h"
#include "../utils/common_types.h"

namespace AscendC {

enum class MemDsbT : uint8_t { ALL = 0, DDR, UB, SEQ };

namespace detail {

template <typename T>
inline constexpr bool gm_scalar_type_v = std::is_same<T, int8_t>::value || std::is_same<T, uint8_t>::value ||
                                         std::is_same<T, int16_t>::value || std::is_same<T, uint16_t>::value ||
                                         std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value ||
                                         std::is_same<T, int64_t>::value || std::is_same<T, uint64_t>::value;

template <typename T>
inline constexpr bool gm_atomic_type_v = std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value ||
                                         std::is_same<T, int64_t>::value || std::is_same<T, uint64_t>::value ||
                                         std::is_same<T, float>::value || std::is_same<T, half>::value ||
                                         std::is_same<T, bfloat16_t>::value;

// Checks one element at `addr` and returns its GM buffer (reports and throws when outside one).
template <typename T>
inline sage::sim::GmBuffer* gm_scalar_check(const T* addr, bool write, const char* api, SrcLoc loc) {
    if (addr == nullptr)
        sage::sim::fail("gm-out-of-bounds", loc, "%s on a null GM address: pass the address of a GM buffer "
                        "(the kernel argument, or a GlobalTensor's GetPhyAddr())", api);
    return sage::sim::gm_check(addr, sizeof(T), loc, write, api, sizeof(T));
}

// The element is updated in one indivisible step on the device, whichever core comes first:
// several blocks updating it is the point, not a race, so the writer is recorded as an atomic
// store would be.
template <typename T>
inline void gm_atomic_wrote(sage::sim::GmBuffer* b, T* addr, SrcLoc loc) {
    auto& st = sage::sim::blk();
    const int saved = st.atomic_op;
    if (!saved) st.atomic_op = sage::sim::AtomicAddOp;
    sage::sim::gm_wrote(b, addr, sizeof(T), loc);
    st.atomic_op = saved;
}

// The scalar GM atomics exist on Ascend 950 (dav-3510, dav-5102) only; the emulator targets the
// 910B (dav-2201) unless the build names another architecture (-D __NPU_ARCH__=3510).
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510 || __NPU_ARCH__ == 5102)
inline constexpr bool gm_atomics_available = true;
#else
inline constexpr bool gm_atomics_available = false;
#endif

template <typename T, typename F>
inline T gm_atomic(T* addr, const char* api, SrcLoc loc, F update) {
    static_assert(gm_atomics_available || sizeof(T) == 0,
                  "[compile-error] AtomicAdd/AtomicMax/AtomicMin/AtomicExch/AtomicCas on a GM address exist on "
                  "Ascend 950 (__NPU_ARCH__ 3510) only, not on the 910B this build targets: accumulate into GM with "
                  "SetAtomicAdd/SetAtomicMax before a DataCopy to GM, or build for the 950 with "
                  "-D __NPU_ARCH__=3510");
    static_assert(gm_atomic_type_v<T>, "[dtype-unsupported] the GM atomics (AtomicAdd, AtomicMax, AtomicMin, "
                                       "AtomicExch) take int32_t, uint32_t, int64_t, uint64_t, float, half or "
                                       "bfloat16_t");
    sage::sim::touch(loc);
    auto* b = gm_scalar_check(addr, true, api, loc);
    T old;
    memcpy(&old, addr, sizeof(T));
    T v = update(old);
    memcpy(addr, &v, sizeof(T));
    gm_atomic_wrote(b, addr, loc);
    sage::sim::trace_instr(sage::sim::Pipe::S, api, sage::sim::dtype_name<T>(), 1, sizeof(T), loc);
    return old;
}

}  // namespace detail

// Each returns the value the element held before.
template <typename T>
__aicore__ inline T AtomicAdd(__gm__ T* address, T value, SAGE_LOC) {
    return detail::gm_atomic(address, "AtomicAdd", loc, [&](T old) { return T(old + value); });
}
template <typename T>
__aicore__ inline T AtomicMax(__gm__ T* address, T value, SAGE_LOC) {
    return detail::gm_atomic(address, "AtomicMax", loc, [&](T old) { return value > old ? value : old; });
}
template <typename T>
__aicore__ inline T AtomicMin(__gm__ T* address, T value, SAGE_LOC) {
    return detail::gm_atomic(address, "AtomicMin", loc, [&](T old) { return value < old ? value : old; });
}
template <typename T>
__aicore__ inline T AtomicExch(__gm__ T* address, T value, SAGE_LOC) {
    return detail::gm_atomic(address, "AtomicExch", loc, [&](T) { return value; });
}
// Writes value2 when the element equals value1.
template <typename T>
__aicore__ inline T AtomicCas(__gm__ T* address, T value1, T value2, SAGE_LOC) {
    static_assert(std::is_same<T, uint32_t>::value || std::is_same<T, uint64_t>::value,
                  "[dtype-unsupported] AtomicCas takes uint32_t or uint64_t");
    return detail::gm_atomic(address, "AtomicCas", loc, [&](T old) { return old == value1 ? value2 : old; });
}

template <typename T>
__aicore__ inline T ReadGmByPassDCache(__gm__ T* addr, SAGE_LOC) {
    static_assert(detail::gm_scalar_type_v<T>, "[dtype-unsupported] ReadGmByPassDCache takes 8- to 64-bit integers "
                                               "(int8_t .. uint64_t)");
    sage::sim::touch(loc);
    const auto* b = detail::gm_scalar_check(addr, false, "ReadGmByPassDCache", loc);
    T v;
    memcpy(&v, addr, sizeof(T));
    sage::sim::gm_read_acquires(b, addr, sizeof(T));
    sage::sim::trace_instr(sage::sim::Pipe::S, "ReadGmByPassDCache", sage::sim::dtype_name<T>(), 1, sizeof(T), loc);
    // Bypassing the cache, a spin loop on it sees another core's store: a poll point, not a hang.
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(T));
    sage::sim::spin_read(reinterpret_cast<uintptr_t>(addr), bits, loc, [] {
        return std::string("reads the same GM value with ReadGmByPassDCache again and again (a spin loop), "
                           "and no block writes it any more");
    });
    return v;
}

template <typename T>
__aicore__ inline void WriteGmByPassDCache(__gm__ T* addr, T value, SAGE_LOC) {
    static_assert(detail::gm_scalar_type_v<T>, "[dtype-unsupported] WriteGmByPassDCache takes 8- to 64-bit "
                                               "integers (int8_t .. uint64_t)");
    sage::sim::touch(loc);
    auto* b = detail::gm_scalar_check(addr, true, "WriteGmByPassDCache", loc);
    memcpy(addr, &value, sizeof(T));
    sage::sim::gm_wrote(b, addr, sizeof(T), loc, "WriteGmByPassDCache", sizeof(T));
    sage::sim::trace_instr(sage::sim::Pipe::S, "WriteGmByPassDCache", sage::sim::dtype_name<T>(), 1, sizeof(T),
                           loc);
}

// Waits until this core's earlier memory accesses of the kind named are complete. The emulator
// completes every access when it is issued, so nothing is left to wait for.
template <MemDsbT arg0>
__aicore__ inline void DataSyncBarrier(SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::trace_instr(sage::sim::Pipe::S, "DataSyncBarrier", "", 0, 0, loc);
}

}  // namespace AscendC
