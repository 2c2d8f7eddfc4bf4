// The path kernels include the Matmul API by: in the CANN package lib/ links to include/adv_api/
// (the wheel keeps no links, so this forwards).
#pragma once

#include "../adv_api/matmul/matmul_intf.h"
