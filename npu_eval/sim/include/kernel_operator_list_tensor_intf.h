// Kernels include the list-tensor header by its bare name (CANN puts basic_api/ on the include
// path): forward to it.
#pragma once

#include "basic_api/kernel_operator_list_tensor_intf.h"
