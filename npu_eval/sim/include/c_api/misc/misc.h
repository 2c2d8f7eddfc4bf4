// The C API's core set-up (asc-devkit include/c_api/misc/misc.h).
#pragma once

#include "../../basic_api/kernel_operator_set_atomic_intf.h"
#include "../../sage_sim/vec.h"

// What a kernel calls first: no atomic store, Normal mask mode, every mask bit set (on 910B
// asc_init resets these three registers and nothing else).
__aicore__ inline void asc_init(SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    blk().atomic_op = AtomicNone;
    VecRegs& r = vregs();
    r.counter = false;
    r.mask_hi = r.mask_lo = ~0ull;
}
