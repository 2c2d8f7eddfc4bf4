// ACL runtime: kernel binaries loaded at run time and launched by handle (aclrtBinaryLoadFromData,
// aclrtBinaryGetFunction, aclrtLaunchKernelWithArgsArray), part of CANN's acl_rt.h. The binaries
// the emulator can load are the ones aclrtc compiled in this run (sage_sim/rtc.h): a device
// ELF from CANN's compiler holds no code for the CPU. Types, values and signatures as
// github.com/hicann/runtime include/external/acl/acl_rt.h.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "../sage_sim/rtc.h"
#include "acl_rt.h"

typedef void* aclrtBinHandle;
typedef void* aclrtFuncHandle;
typedef void* aclrtArgsHandle;

#define ACL_RT_BINARY_MAGIC_ELF_AICORE 0x43554245U
#define ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE 0x41415246U
#define ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE 0x41494343U

typedef enum aclrtBinaryLoadOptionType {
    ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD = 1,
    ACL_RT_BINARY_LOAD_OPT_LAZY_MAGIC = 2,
    ACL_RT_BINARY_LOAD_OPT_MAGIC = 2,
    ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE = 3,
} aclrtBinaryLoadOptionType;

typedef union aclrtBinaryLoadOptionValue {
    uint32_t isLazyLoad;
    uint32_t magic;
    int32_t cpuKernelMode;
    uint32_t rsv[4];
} aclrtBinaryLoadOptionValue;

typedef struct {
    aclrtBinaryLoadOptionType type;
    aclrtBinaryLoadOptionValue value;
} aclrtBinaryLoadOption;

typedef struct aclrtBinaryLoadOptions {
    aclrtBinaryLoadOption* options;
    size_t numOpt;
} aclrtBinaryLoadOptions;

typedef struct aclrtLaunchKernelCfg aclrtLaunchKernelCfg;

namespace sage {
namespace sim {

// A loaded binary: its shared object and its kernel table; a function handle is a table row.
struct RtcBinary {
    void* handle = nullptr;
    const RtcKernel* kernels = nullptr;
    bool unloaded = false;
};

inline std::vector<std::unique_ptr<RtcBinary>>& rtc_binaries() {
    static std::vector<std::unique_ptr<RtcBinary>> b;
    return b;
}

inline RtcBinary* rtc_binary(aclrtBinHandle h) {
    for (auto& b : rtc_binaries())
        if (b.get() == h && !b->unloaded) return b.get();
    return nullptr;
}

inline const RtcKernel* rtc_function(const void* func) {
    for (auto& b : rtc_binaries())
        for (const RtcKernel* k = b->kernels; !b->unloaded && k && k->name; ++k)
            if (k == func) return k;
    return nullptr;
}

}  // namespace sim
}  // namespace sage

inline aclError aclrtBinaryLoadFromData(const void* data, size_t length, const aclrtBinaryLoadOptions* options,
                                        aclrtBinHandle* binHandle, SAGE_LOC) {
    using namespace ::sage::sim;
    (void)options;
    if (!handle_given(data, "aclrtBinaryLoadFromData", "data", loc) ||
        !handle_given(binHandle, "aclrtBinaryLoadFromData", "binHandle", loc) || length == 0)
        return ACL_ERROR_INVALID_PARAM;
    static int loaded = 0;
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/sage-rtc-bin-" + std::to_string(getpid()) + "-" +
                       std::to_string(++loaded) + ".so";
    rtc_write(path, std::string(static_cast<const char*>(data), length));
    auto b = std::make_unique<RtcBinary>();
    b->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    b->kernels = b->handle ? static_cast<const RtcKernel*>(dlsym(b->handle, "sage_rtc_kernels")) : nullptr;
    if (!b->kernels) {
        const char* why = b->handle ? nullptr : dlerror();
        host_report("acl-error", Severity::Error, loc, "aclrtBinaryLoadFromData: these %zu bytes are not a binary "
                    "aclrtc compiled in this run (%s); sage-npu cannot run a device ELF from CANN's compiler "
                    "(ACL_ERROR_RT_PARAM_INVALID)", length, why ? why : "no kernel table");
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    *binHandle = b.get();
    rtc_binaries().push_back(std::move(b));
    return ACL_SUCCESS;
}

inline aclError aclrtBinaryLoadFromFile(const char* binPath, aclrtBinaryLoadOptions* options, aclrtBinHandle* binHandle,
                                        SAGE_LOC) {
    using namespace ::sage::sim;
    if (!handle_given(binPath, "aclrtBinaryLoadFromFile", "binPath", loc)) return ACL_ERROR_INVALID_PARAM;
    std::string bytes = rtc_read(binPath);
    if (bytes.empty()) {
        host_report("acl-error", Severity::Error, loc, "aclrtBinaryLoadFromFile: cannot read %s "
                    "(ACL_ERROR_INVALID_FILE)", binPath);
        return ACL_ERROR_INVALID_FILE;
    }
    return aclrtBinaryLoadFromData(bytes.data(), bytes.size(), options, binHandle, loc);
}

inline aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle, SAGE_LOC) {
    using namespace ::sage::sim;
    RtcBinary* b = rtc_binary(binHandle);
    if (!b) {
        host_report("acl-error", Severity::Error, loc, "aclrtBinaryUnLoad is given %p, which is not a loaded binary "
                    "(ACL_ERROR_RT_PARAM_INVALID)", binHandle);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    b->unloaded = true;  // the shared object stays mapped: a kernel's code is never unmapped under a later call
    return ACL_SUCCESS;
}

// A kernel by its symbol: the plain name of an extern "C" kernel, else the lowered name
// (aclrtcGetLoweredName); the emulator also takes the name a kernel was registered by.
inline aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char* kernelName,
                                       aclrtFuncHandle* funcHandle, SAGE_LOC) {
    using namespace ::sage::sim;
    RtcBinary* b = rtc_binary(binHandle);
    if (!b || !kernelName || !funcHandle) {
        host_report("acl-error", Severity::Error, loc, "aclrtBinaryGetFunction needs a loaded binary, a kernel name "
                    "and the address of the handle to set (ACL_ERROR_INVALID_PARAM)");
        return ACL_ERROR_INVALID_PARAM;
    }
    void* symbol = dlsym(b->handle, kernelName);
    for (const RtcKernel* k = b->kernels; k->name; ++k) {
        if ((symbol && k->address == symbol) || std::string(k->name) == kernelName) {
            *funcHandle = const_cast<RtcKernel*>(k);
            return ACL_SUCCESS;
        }
    }
    host_report("acl-error", Severity::Error, loc, "aclrtBinaryGetFunction: the binary has no kernel '%s' (a template "
                "kernel is found by the lowered name of its aclrtcAddNameExpr expression) (ACL_ERROR_RT_KERNEL_LOOKUP)",
                kernelName);
    return ACL_ERROR_RT_KERNEL_LOOKUP;
}

// `args[i]` points at the kernel's i-th argument, of its parameter's type.
inline aclError aclrtLaunchKernelWithArgsArray(void* func, uint32_t numBlocks, aclrtStream stream,
                                               aclrtLaunchKernelCfg* cfg, void** args, SAGE_LOC) {
    using namespace ::sage::sim;
    (void)cfg;
    const RtcKernel* k = rtc_function(func);
    if (!k) {
        host_report("acl-error", Severity::Error, loc, "aclrtLaunchKernelWithArgsArray is given %p, which is not a "
                    "kernel from aclrtBinaryGetFunction (ACL_ERROR_INVALID_PARAM)", func);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (!stream_ok(stream, "aclrtLaunchKernelWithArgsArray", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    LaunchSite site{loc.file, loc.line, 1, k->name, "", true};
    if (captured(stream)) {
        capture().tasks.push_back(CapturedTask{"KERNEL", k->name, loc, [=] { k->entry(site, numBlocks, args); }});
        return ACL_SUCCESS;
    }
    k->entry(site, numBlocks, args);
    return ACL_SUCCESS;
}
