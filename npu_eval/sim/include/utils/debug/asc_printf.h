// The device printf header at asc-devkit's path (`utils/debug/asc_printf.h`): `AscendC::printf`
// and `printf` inside kernels, which the emulator provides with the rest of the API.
#pragma once

#include "../../kernel_operator.h"
