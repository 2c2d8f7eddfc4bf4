// KERNEL_LOG, ASSERT and ASCENDC_ASSERT as a kernel built for the device sees them (real:
// impl/basic_api/kernel_log.h and kernel_macros.h): the device compiler compiles them away, so
// their arguments are not even compiled (a sample may name an unqualified AscendC function in
// one). Only CANN's CPU-debug build prints and checks them; a check the kernel wants on the
// device is ascendc_assert (utils/debug/asc_assert.h), which the emulator evaluates.
#pragma once

#include <cstdint>

namespace AscendC {
enum class LogLevel : uint8_t { KERNEL_DEBUG = 0, KERNEL_INFO = 1, KERNEL_WARN = 2, KERNEL_ERROR = 3 };
}  // namespace AscendC

#ifndef KERNEL_LOG
#define KERNEL_LOG(level, format, ...)
#endif
#ifndef ASSERT
#define ASSERT(x)
#endif
#ifndef ASCENDC_ASSERT
#define ASCENDC_ASSERT(cond, behavior)
#endif
