// System variables and helpers: the block_idx/block_num/g_coreType built-ins, the cycle
// counter (GetSystemCycle), core/sub-block queries (GetSubBlockNum, GetArchVersion), integer
// helpers (DivCeil, AlignUp) and the UB size query.
#pragma once

#include <chrono>
#include <type_traits>

#include "../sage_sim/runtime.h"
#include "../utils/common_types.h"

namespace AscendC {

// int4b_t is declared in sage_sim/dtypes.h (the cube's headers need it before this one).

// The system counter ticks at 50 MHz on A2/A3 (time in us = cycles / 50). On the CPU it follows
// the host clock: a kernel may subtract two readings to time a section, which then measures
// the emulator, not the device (the report's estimate is the device figure).
__aicore__ inline int64_t GetSystemCycle(SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    trace_instr(Pipe::S, "GetSystemCycle", "int64", 1, 0, loc);
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now().time_since_epoch())
                  .count();
    return static_cast<int64_t>(ns / 20);
}

// The AICs or AIVs per AI Core on the running core's side: 2 on the AIV of a 1:2 mixed kernel, else 1
// (sage_sim/mix.h).
__aicore__ inline int64_t GetSubBlockNum() { return sage::sim::blk().sub_num; }

// 220 is the A2/A3 (dav-c220) core version; 200 the 310P one.
__aicore__ inline void GetArchVersion(uint32_t& coreVersion) { coreVersion = SAGE_CHIP_FAMILY == 310 ? 200 : 220; }

__aicore__ inline int64_t GetProgramCounter() { return 0; }

__aicore__ inline constexpr uint32_t GetUBSizeInBytes() { return uint32_t(SAGE_CHIP_UB_BYTES); }
// The UB size the running core reports (the same figure here: the emulator models one chip).
__aicore__ inline uint32_t GetRuntimeUBSize() { return uint32_t(sage::sim::rt().ub_bytes); }

// Ceiling division of integers; 0 for a zero divisor, as CANN's helper does (no trap).
template <typename T, typename U>
__aicore__ constexpr inline auto DivCeil(T num1, U num2) -> std::common_type_t<T, U> {
    static_assert(std::is_integral<T>::value && std::is_integral<U>::value, "DivCeil takes integers");
    using R = std::common_type_t<T, U>;
    return num2 == 0 ? R(0) : R((R(num1) + R(num2) - 1) / R(num2));
}

template <typename T, typename U>
__aicore__ constexpr inline auto AlignUp(T num, U align) -> std::common_type_t<T, U> {
    return DivCeil(num, align) * align;
}

}  // namespace AscendC

// ---------------------------------------------------------------- built-in variables

// The device compiler gives kernels block_idx and block_num as built-in variables, and CANN's
// CPU debug declares them `extern int64_t`. Here they are references to the running block's
// state, so they hold GetBlockIdx()/GetBlockNum() in every block with nothing to update, and a
// kernel's own local of the same name still shadows them.
inline const decltype(sage::sim::BlockState::idx)& block_idx = sage::sim::rt().block.idx;
inline const decltype(sage::sim::BlockState::num)& block_num = sage::sim::rt().block.num;
// The running core's type (AscendC::AIC or AIV) and sub-block, references like block_idx: a
// mixed kernel's AIC and AIV cores see their own (sage_sim/mix.h).
inline const decltype(sage::sim::BlockState::sub_idx)& sub_block_idx = sage::sim::rt().block.sub_idx;
inline const int32_t& g_coreType = sage::sim::rt().block.core;
