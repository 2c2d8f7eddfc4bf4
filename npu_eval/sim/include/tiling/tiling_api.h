// The path CANN host code includes the advanced API's tiling library by: see adv_api/tiling_api.h.
#pragma once

#include "../adv_api/tiling_api.h"
