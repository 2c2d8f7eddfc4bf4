// Qualifiers and address types. On the device these place code and data; on the CPU they
// vanish, as in CANN's own CPU-debug build (ASCENDC_CPU_DEBUG).
#pragma once

#include <cstdint>

#ifndef ASCENDC_CPU_DEBUG
#define ASCENDC_CPU_DEBUG 1
#endif
#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __fbuf__
#define __vector__
#define __cube__
#define __mix__(...)
#ifndef __inline__
#define __inline__ inline
#endif

using GM_ADDR = __gm__ uint8_t*;

#define KERNEL_TASK_TYPE_DEFAULT(...)
#define KERNEL_TASK_TYPE(...)
