// The C library's <assert.h>, then, once the kernel headers are in (asc_assert.h defines
// ascendc_assert), the device's assert again: a kernel source may include <cassert> after
// kernel_operator.h, or after the precompiled kernel_operator.h the build puts first, and on the
// device the kernel headers' assert is the one in force.
#include_next <assert.h>
#ifdef ascendc_assert
#include "utils/debug/kernel_assert_macro.h"
#endif
