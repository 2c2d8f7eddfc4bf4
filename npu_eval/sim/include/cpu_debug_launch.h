// CANN 9 programs include this in CPU-debug builds (`#ifdef ASCENDC_CPU_DEBUG`) to get their
// `kernel<<<...>>>` launches run on the CPU; sage-npu run rewrites those launches itself.
#pragma once

#include "acl/acl.h"
#include "tikicpulib.h"
