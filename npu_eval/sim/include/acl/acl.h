// The ACL runtime on the CPU, for program mode (`sage-npu run`): the host side of an Ascend C
// program (device, streams, device memory, copies) runs here without CANN. One device, one
// synchronous stream: a launch runs to its end before the launch call returns.
#pragma once

#include "acl_base.h"
#include "acl_rt.h"
