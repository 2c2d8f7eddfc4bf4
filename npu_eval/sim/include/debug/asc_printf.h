// The device printf header at the path earlier CANN 9 packages install it (`debug/asc_printf.h`);
// asc-devkit's own path is `utils/debug/asc_printf.h`.
#pragma once

#include "../utils/debug/asc_printf.h"
