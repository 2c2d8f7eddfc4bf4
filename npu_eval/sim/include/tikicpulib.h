// CANN's CPU-debug API for program mode: GmAlloc/GmFree hand out global memory the emulator
// checks, ICPU_RUN_KF runs a kernel's blocks as a launch (faults, trace and estimate per
// launch, like <<<>>>).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel_operator.h"
#include "sage_sim/launch.h"

enum class KernelMode : int { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1, MIX_AIC_1_2 };

namespace AscendC {

inline void* GmAlloc(size_t size, SAGE_LOC) {
    if (size == 0) size = 1;  // CANN's GmAlloc rounds up too; a null return would only crash later
    void* p = sage::sim::device_alloc(size, "GmAlloc", loc);
    if (!p)
        sage::sim::host_report("acl-error", sage::sim::Severity::Error, loc, "GmAlloc of %zu bytes failed: more than "
                               "the run's memory limit (the memory_limit_mb setting)", size);
    return p;
}

inline void GmFree(void* ptr, SAGE_LOC) { sage::sim::device_free(ptr, "GmFree", loc); }

// The emulator runs vector (AIV) blocks; a cube kernel fails to compile at its first cube API.
inline void SetKernelMode(KernelMode mode) { sage::sim::program().kernel_mode = int(mode); }

}  // namespace AscendC

#define ICPU_RUN_KF(func, blockdim, ...)                                                                   \
    ::sage::sim::kernel_launch(::sage::sim::LaunchSite{__FILE__, __LINE__, 0, #func, #__VA_ARGS__, false}, \
                               func, blockdim)(__VA_ARGS__)
// TILING_KEY_IS reads this key (kernel_tiling/kernel_tiling.h).
#define ICPU_SET_TILING_KEY(key) (::sage::sim::tiling_key() = uint64_t(key))
