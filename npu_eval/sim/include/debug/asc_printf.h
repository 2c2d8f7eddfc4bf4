// CANN 9's device printf header (`AscendC::printf`, `printf` inside kernels).
#pragma once

#include "../kernel_operator.h"
