// `assert` in a kernel source is the device's assert (asc_assert.h), whatever was included
// before or after. No include guard: <assert.h> (../../assert.h) re-includes this after glibc's,
// because a later `#include <cassert>` would otherwise give assert back to glibc, whose failure
// aborts the whole program instead of stopping the kernel at its line.
#undef assert
#define assert(...) ascendc_assert(__VA_ARGS__)
