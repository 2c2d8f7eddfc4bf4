// The C API's system variables (asc-devkit include/c_api/sys_var/sys_var.h) a vector kernel
// reads: its block, the launch's block count, the core and the cycle counter.
#pragma once

#include "../../basic_api/kernel_operator_sys_var_intf.h"

__aicore__ inline int64_t asc_get_block_idx() { return sage::sim::blk().idx; }
__aicore__ inline int64_t asc_get_block_num() { return sage::sim::blk().num; }
// A vector core runs no sub-blocks of its own here: one sub-block, number 0.
__aicore__ inline int64_t asc_get_sub_block_id() { return 0; }
__aicore__ inline int64_t asc_get_sub_block_num() { return 1; }
// Blocks run one per emulated core: the core id is the block's.
__aicore__ inline int64_t asc_get_core_id() { return sage::sim::blk().idx; }
__aicore__ inline int64_t asc_get_system_cycle(SAGE_LOC) { return AscendC::GetSystemCycle(loc); }
__aicore__ inline void asc_get_arch_ver(uint32_t& core_version) { AscendC::GetArchVersion(core_version); }
// A UB byte address as a pointer value: `(__ubuf__ float*)asc_get_phy_buf_addr(0)` is UB byte 0,
// which the C API's operand checks map into the block's UB (sage_sim/ubuf.h).
__aicore__ inline uint64_t asc_get_phy_buf_addr(uint64_t offset) { return offset; }
// The first C API's name of asc_get_sub_block_num.
__aicore__ inline int64_t asc_get_sub_block_dim() { return 1; }

// The control registers a kernel may read and write: CTRL and the FFTS base address, per block
// (each block starts from 0, as a core after reset). The rest have no meaning on the CPU: the
// stack base, the program counter, the SMMU tag version, the status and virtual base read 0.
namespace sage {
namespace sim {
namespace capi {
struct SysRegs {
    int block = -1;
    uint64_t ctrl = 0, ffts_base = 0;
};
inline SysRegs& sysregs() {
    static SysRegs r;
    if (r.block != blk().idx) r = SysRegs{blk().idx};
    return r;
}
}  // namespace capi
}  // namespace sim
}  // namespace sage

__aicore__ inline int64_t asc_get_ctrl() { return int64_t(sage::sim::capi::sysregs().ctrl); }
__aicore__ inline void asc_set_ctrl(uint64_t config) { sage::sim::capi::sysregs().ctrl = config; }
__aicore__ inline int64_t asc_get_ffts_base_addr() { return int64_t(sage::sim::capi::sysregs().ffts_base); }
__aicore__ inline void asc_set_ffts_base_addr(uint64_t config) { sage::sim::capi::sysregs().ffts_base = config; }
__aicore__ inline int64_t asc_get_phy_stack_base() { return 0; }
__aicore__ inline int64_t asc_get_program_counter() { return 0; }
__aicore__ inline int64_t asc_get_smmu_tag_version() { return 0; }
__aicore__ inline int64_t asc_get_status() { return 0; }
__aicore__ inline int64_t asc_get_sys_virtual_base() { return 0; }
