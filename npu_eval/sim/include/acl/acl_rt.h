// ACL runtime: device, context, stream, event and memory management, emulated on the CPU.
// Every call takes the caller's source location as a defaulted last parameter, so a misuse
// (a copy past a device buffer, a double free, a host pointer where device memory is due) is
// reported at the user's line. Errors are returned as ACL does; the report says why.
#pragma once

#include <cstdlib>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "acl_base.h"

typedef void* aclrtStream;
typedef void* aclrtContext;
typedef void* aclrtEvent;
typedef void* aclrtNotify;

typedef enum aclrtRunMode { ACL_DEVICE, ACL_HOST } aclrtRunMode;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEFAULT,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE,
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
} aclrtMemMallocPolicy;

typedef enum aclrtMemAttr {
    ACL_DDR_MEM,
    ACL_HBM_MEM,
    ACL_DDR_MEM_HUGE,
    ACL_DDR_MEM_NORMAL,
    ACL_HBM_MEM_HUGE,
    ACL_HBM_MEM_NORMAL,
    ACL_DDR_MEM_P2P_HUGE,
    ACL_DDR_MEM_P2P_NORMAL,
    ACL_HBM_MEM_P2P_HUGE,
    ACL_HBM_MEM_P2P_NORMAL,
} aclrtMemAttr;

namespace sage {
namespace sim {

// Tokens for the handles the program holds: any non-null distinct address will do.
inline void* acl_handle() {
    static char tokens[4096];
    static size_t next = 0;
    return &tokens[next++ % sizeof tokens];
}

// What the host side of ACL hands out, so a wrong use is an error code and a diagnostic at the
// call (as CANN returns one), not an abort in free() or a silent no-op: the host buffers of
// aclrtMallocHost (and where each freed one was freed), and the live and destroyed streams.
// A freed host buffer stays allocated (up to kHostQuarantineBytes, oldest released first), so
// no later malloc can hand its address out while a use of it must still read as a use after free.
constexpr size_t kHostQuarantineBytes = size_t(256) << 20;
struct AclHostState {
    std::unordered_map<const void*, size_t> host_live;
    std::unordered_map<const void*, SrcLoc> host_freed;
    std::deque<std::pair<void*, size_t>> quarantine;
    size_t quarantined = 0;
    std::unordered_map<const void*, bool> streams;  // handle -> still alive
    std::unordered_map<const void*, SrcLoc> streams_destroyed;
};
inline AclHostState& acl_host() {
    static AclHostState s;
    return s;
}

// A handle (or the address to store one at) the call requires: null is ACL_ERROR_INVALID_PARAM.
inline bool handle_given(const void* handle, const char* api, const char* what, SrcLoc loc) {
    if (handle) return true;
    host_report("acl-error", Severity::Error, loc, "%s is given a null %s (ACL_ERROR_INVALID_PARAM)", api, what);
    return false;
}

// A stream argument that is not one aclrtCreateStream made and that is still alive. Null is the
// default stream, which every call but aclrtDestroyStream accepts.
inline bool stream_ok(aclrtStream stream, const char* api, SrcLoc loc) {
    if (!stream) return true;
    auto& h = acl_host();
    auto it = h.streams.find(stream);
    if (it != h.streams.end() && it->second) return true;
    auto d = h.streams_destroyed.find(stream);
    if (d != h.streams_destroyed.end())
        host_report("acl-error", Severity::Error, loc, "%s is given a stream aclrtDestroyStream destroyed at %s: "
                    "ACL_ERROR_RT_PARAM_INVALID", api, line_ref(d->second, loc).c_str());
    else
        host_report("acl-error", Severity::Error, loc, "%s is given %p, which is not a stream from aclrtCreateStream: "
                    "ACL_ERROR_RT_PARAM_INVALID", api, stream);
    return false;
}

inline aclError acl_sync(SrcLoc loc) {
    touch(loc);
    return program().sticky_error ? program().sticky_error : ACL_SUCCESS;
}

inline const char* memcpy_kind_name(aclrtMemcpyKind k) {
    switch (k) {
        case ACL_MEMCPY_HOST_TO_HOST: return "ACL_MEMCPY_HOST_TO_HOST";
        case ACL_MEMCPY_HOST_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_DEVICE";
        case ACL_MEMCPY_DEVICE_TO_HOST: return "ACL_MEMCPY_DEVICE_TO_HOST";
        case ACL_MEMCPY_DEVICE_TO_DEVICE: return "ACL_MEMCPY_DEVICE_TO_DEVICE";
        default: return "ACL_MEMCPY_DEFAULT";
    }
}

// Whether a pointer the copy kind says is host memory is in fact device memory, or a host
// buffer aclrtFreeHost freed (returns false: the copy must not touch it).
inline bool check_host_side(const void* p, const char* role, aclrtMemcpyKind kind, SrcLoc loc) {
    if (p && gm_find(p)) {
        host_report("acl-error", Severity::Error, loc, "aclrtMemcpy with %s, but the %s is device memory (from "
                    "aclrtMalloc): use the copy kind that matches both pointers", memcpy_kind_name(kind), role);
    }
    auto freed = acl_host().host_freed.find(p);
    if (p && freed != acl_host().host_freed.end()) {
        host_report("use-after-free", Severity::Error, loc, "aclrtMemcpy: the %s is a host buffer aclrtFreeHost "
                    "freed at %s (ACL_ERROR_INVALID_PARAM)", role, line_ref(freed->second, loc).c_str());
        return false;
    }
    return true;
}

}  // namespace sim
}  // namespace sage

// ---- devices and contexts ----

inline aclError aclrtSetDevice(int32_t deviceId, SAGE_LOC) {
    if (deviceId != 0) {
        ::sage::sim::host_report("acl-error", ::sage::sim::Severity::Error, loc, "aclrtSetDevice(%d): the emulator "
                                 "has one device, 0", int(deviceId));
        return ACL_ERROR_INVALID_DEVICE;
    }
    return ACL_SUCCESS;
}
inline aclError aclrtResetDevice(int32_t deviceId) {
    (void)deviceId;
    return ACL_SUCCESS;
}
inline aclError aclrtResetDeviceForce(int32_t deviceId) {
    (void)deviceId;
    return ACL_SUCCESS;
}
inline aclError aclrtGetDevice(int32_t* deviceId) {
    if (!deviceId) return ACL_ERROR_INVALID_PARAM;
    *deviceId = 0;
    return ACL_SUCCESS;
}
inline aclError aclrtGetDeviceCount(uint32_t* count) {
    if (!count) return ACL_ERROR_INVALID_PARAM;
    *count = 1;
    return ACL_SUCCESS;
}
inline aclError aclrtGetRunMode(aclrtRunMode* runMode) {
    if (!runMode) return ACL_ERROR_INVALID_PARAM;
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}
inline const char* aclrtGetSocName() {
    static const std::string name = std::string("Ascend") + SAGE_CHIP_NAME;
    return name.c_str();
}
inline aclError aclrtSynchronizeDevice(SAGE_LOC) { return ::sage::sim::acl_sync(loc); }
inline aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout, SAGE_LOC) {
    (void)timeout;
    return ::sage::sim::acl_sync(loc);
}
inline aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
    (void)deviceId;
    if (!context) return ACL_ERROR_INVALID_PARAM;
    *context = ::sage::sim::acl_handle();
    return ACL_SUCCESS;
}
inline aclError aclrtDestroyContext(aclrtContext context) {
    (void)context;
    return ACL_SUCCESS;
}
inline aclError aclrtSetCurrentContext(aclrtContext context) {
    (void)context;
    return ACL_SUCCESS;
}
inline aclError aclrtGetCurrentContext(aclrtContext* context) {
    static void* current = ::sage::sim::acl_handle();
    if (!context) return ACL_ERROR_INVALID_PARAM;
    *context = current;
    return ACL_SUCCESS;
}

// ---- streams and events ----

inline aclError aclrtCreateStream(aclrtStream* stream, SAGE_LOC) {
    using namespace ::sage::sim;
    if (!stream) {
        host_report("acl-error", Severity::Error, loc, "aclrtCreateStream is given a null stream: pass the address "
                    "of the handle to set, &stream (ACL_ERROR_INVALID_PARAM)");
        return ACL_ERROR_INVALID_PARAM;
    }
    *stream = acl_handle();
    acl_host().streams[*stream] = true;
    acl_host().streams_destroyed.erase(*stream);
    return ACL_SUCCESS;
}
inline aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t priority, uint32_t flag, SAGE_LOC) {
    (void)priority;
    (void)flag;
    return aclrtCreateStream(stream, loc);
}
inline aclError aclrtDestroyStream(aclrtStream stream, SAGE_LOC) {
    using namespace ::sage::sim;
    if (!stream) {
        host_report("acl-error", Severity::Error, loc, "aclrtDestroyStream is given a null stream: the default "
                    "stream cannot be destroyed (ACL_ERROR_INVALID_PARAM)");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (!stream_ok(stream, "aclrtDestroyStream", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    acl_host().streams[stream] = false;
    acl_host().streams_destroyed[stream] = loc;
    return ACL_SUCCESS;
}
inline aclError aclrtDestroyStreamForce(aclrtStream stream, SAGE_LOC) { return aclrtDestroyStream(stream, loc); }
// Launches run when they are made, so a stream is always drained; a launch that faulted
// fails every synchronisation after it, as an AI Core exception does on the device.
inline aclError aclrtSynchronizeStream(aclrtStream stream, SAGE_LOC) {
    if (!::sage::sim::stream_ok(stream, "aclrtSynchronizeStream", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    return ::sage::sim::acl_sync(loc);
}
inline aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout, SAGE_LOC) {
    (void)timeout;
    if (!::sage::sim::stream_ok(stream, "aclrtSynchronizeStreamWithTimeout", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    return ::sage::sim::acl_sync(loc);
}
inline aclError aclrtStreamQuery(aclrtStream stream, int32_t* status) {
    (void)stream;
    if (status) *status = 0;
    return ACL_SUCCESS;
}
inline aclError aclrtCreateEvent(aclrtEvent* event, SAGE_LOC) {
    if (!::sage::sim::handle_given(event, "aclrtCreateEvent", "event", loc)) return ACL_ERROR_INVALID_PARAM;
    *event = ::sage::sim::acl_handle();
    return ACL_SUCCESS;
}
inline aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag, SAGE_LOC) {
    (void)flag;
    return aclrtCreateEvent(event, loc);
}
inline aclError aclrtDestroyEvent(aclrtEvent event, SAGE_LOC) {
    return ::sage::sim::handle_given(event, "aclrtDestroyEvent", "event", loc) ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}
inline aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream, SAGE_LOC) {
    using namespace ::sage::sim;
    if (!handle_given(event, "aclrtRecordEvent", "event", loc)) return ACL_ERROR_INVALID_PARAM;
    return stream_ok(stream, "aclrtRecordEvent", loc) ? ACL_SUCCESS : ACL_ERROR_RT_PARAM_INVALID;
}
inline aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream, SAGE_LOC) {
    using namespace ::sage::sim;
    if (!handle_given(event, "aclrtResetEvent", "event", loc)) return ACL_ERROR_INVALID_PARAM;
    return stream_ok(stream, "aclrtResetEvent", loc) ? ACL_SUCCESS : ACL_ERROR_RT_PARAM_INVALID;
}
inline aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event, SAGE_LOC) {
    using namespace ::sage::sim;
    if (!handle_given(event, "aclrtStreamWaitEvent", "event", loc)) return ACL_ERROR_INVALID_PARAM;
    return stream_ok(stream, "aclrtStreamWaitEvent", loc) ? ACL_SUCCESS : ACL_ERROR_RT_PARAM_INVALID;
}
inline aclError aclrtSynchronizeEvent(aclrtEvent event, SAGE_LOC) {
    if (!::sage::sim::handle_given(event, "aclrtSynchronizeEvent", "event", loc)) return ACL_ERROR_INVALID_PARAM;
    return ::sage::sim::acl_sync(loc);
}
// CPU wall time says nothing about the device; sage-npu run reports each launch's estimated
// device time instead. Here: 0.
inline aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent) {
    (void)startEvent;
    (void)endEvent;
    if (!ms) return ACL_ERROR_INVALID_PARAM;
    *ms = 0.0f;
    return ACL_SUCCESS;
}

// ---- memory ----

inline aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy = ACL_MEM_MALLOC_HUGE_FIRST,
                            SAGE_LOC) {
    (void)policy;
    using namespace ::sage::sim;
    if (!devPtr) {
        host_report("acl-error", Severity::Error, loc, "aclrtMalloc is given a null devPtr: pass the address of the "
                    "pointer to set, (void**)&ptr");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (size == 0) {
        host_report("acl-error", Severity::Error, loc, "aclrtMalloc of 0 bytes: ACL rejects it "
                    "(ACL_ERROR_INVALID_PARAM) and the pointer stays unset");
        return ACL_ERROR_INVALID_PARAM;
    }
    void* p = device_alloc(size, "aclrtMalloc", loc, true);
    if (!p) {
        host_report("acl-error", Severity::Error, loc, "aclrtMalloc of %zu bytes failed: more than the run's memory "
                    "limit (the memory_limit_mb setting)", size);
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    *devPtr = p;
    return ACL_SUCCESS;
}
inline aclError aclrtMallocCached(void** devPtr, size_t size, aclrtMemMallocPolicy policy = ACL_MEM_MALLOC_HUGE_FIRST,
                                  SAGE_LOC) {
    return aclrtMalloc(devPtr, size, policy, loc);
}
inline aclError aclrtFree(void* devPtr, SAGE_LOC) {
    return ::sage::sim::device_free(devPtr, "aclrtFree", loc) ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}
inline aclError aclrtMallocHost(void** hostPtr, size_t size, SAGE_LOC) {
    if (!hostPtr || size == 0) {
        ::sage::sim::host_report("acl-error", ::sage::sim::Severity::Error, loc, "aclrtMallocHost needs a non-null "
                                 "hostPtr and a size above 0");
        return ACL_ERROR_INVALID_PARAM;
    }
    void* p = nullptr;
    if (posix_memalign(&p, 64, size) != 0) return ACL_ERROR_BAD_ALLOC;
    *hostPtr = p;
    ::sage::sim::acl_host().host_live[p] = size;
    ::sage::sim::acl_host().host_freed.erase(p);  // an address released from quarantine may come back
    return ACL_SUCCESS;
}
// CANN frees only what aclrtMallocHost gave and returns an error for anything else; the memory
// is left alone (free() on it would abort the program, far from the call).
inline aclError aclrtFreeHost(void* hostPtr, SAGE_LOC) {
    using namespace ::sage::sim;
    auto& h = acl_host();
    const char* why = nullptr;
    std::string freed_at;
    if (!hostPtr) {
        why = "aclrtFreeHost is given a null pointer (ACL_ERROR_INVALID_PARAM)";
    } else if (gm_find(hostPtr)) {
        why = "aclrtFreeHost is given device memory (from aclrtMalloc): free it with aclrtFree "
              "(ACL_ERROR_INVALID_PARAM)";
    } else if (h.host_freed.count(hostPtr)) {
        freed_at = line_ref(h.host_freed[hostPtr], loc);
    } else if (!h.host_live.count(hostPtr)) {
        why = "aclrtFreeHost is given memory that is not from aclrtMallocHost (malloc/new memory is freed with "
              "free/delete; the memory is left as it is) (ACL_ERROR_INVALID_PARAM)";
    }
    if (!freed_at.empty()) {
        host_report("acl-error", Severity::Error, loc, "aclrtFreeHost frees a host buffer a second time: "
                    "aclrtFreeHost already freed it at %s (ACL_ERROR_INVALID_PARAM)", freed_at.c_str());
        return ACL_ERROR_INVALID_PARAM;
    }
    if (why) {
        host_report("acl-error", Severity::Error, loc, "%s", why);
        return ACL_ERROR_INVALID_PARAM;
    }
    h.quarantine.emplace_back(hostPtr, h.host_live[hostPtr]);
    h.quarantined += h.host_live[hostPtr];
    h.host_live.erase(hostPtr);
    h.host_freed[hostPtr] = loc;
    while (h.quarantined > kHostQuarantineBytes && !h.quarantine.empty()) {
        auto [oldest, bytes] = h.quarantine.front();
        h.quarantine.pop_front();
        h.quarantined -= bytes;
        h.host_freed.erase(oldest);
        std::free(oldest);
    }
    return ACL_SUCCESS;
}
inline aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total) {
    (void)attr;
    if (free) *free = size_t(30) << 30;
    if (total) *total = size_t(32) << 30;
    return ACL_SUCCESS;
}

inline aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                            SAGE_LOC) {
    using namespace ::sage::sim;
    touch(loc);
    if (!dst || !src) {
        host_report("acl-error", Severity::Error, loc, "aclrtMemcpy with a null %s", dst ? "src" : "dst");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (count > destMax) {
        host_report("acl-error", Severity::Error, loc, "aclrtMemcpy copies %zu bytes into a destination of %zu bytes "
                    "(destMax): ACL refuses it and copies nothing", count, destMax);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (count == 0) return ACL_SUCCESS;
    if (kind == ACL_MEMCPY_DEFAULT) {
        bool d = gm_find(dst) != nullptr, s = gm_find(src) != nullptr;
        kind = d ? (s ? ACL_MEMCPY_DEVICE_TO_DEVICE : ACL_MEMCPY_HOST_TO_DEVICE)
                 : (s ? ACL_MEMCPY_DEVICE_TO_HOST : ACL_MEMCPY_HOST_TO_HOST);
    }
    bool dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE ||
                   kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE || kind == ACL_MEMCPY_INNER_DEVICE_TO_DEVICE ||
                   kind == ACL_MEMCPY_INTER_DEVICE_TO_DEVICE;
    bool src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE ||
                   kind == ACL_MEMCPY_INNER_DEVICE_TO_DEVICE || kind == ACL_MEMCPY_INTER_DEVICE_TO_DEVICE;
    if (dst_dev && !device_range(dst, count, loc, "aclrtMemcpy", "destination")) return ACL_ERROR_INVALID_PARAM;
    if (src_dev && !device_range(src, count, loc, "aclrtMemcpy", "source")) return ACL_ERROR_INVALID_PARAM;
    if (!dst_dev && !check_host_side(dst, "destination", kind, loc)) return ACL_ERROR_INVALID_PARAM;
    if (!src_dev && !check_host_side(src, "source", kind, loc)) return ACL_ERROR_INVALID_PARAM;
    std::memmove(dst, src, count);
    if (dst_dev) {
        GmBuffer* d = gm_find(dst);
        const GmBuffer* s = src_dev ? gm_find(src) : nullptr;
        if (d && d->written && s && s->written) {  // device to device: the bytes stay as written as they were
            std::memmove(d->written + (static_cast<uint8_t*>(dst) - d->base),
                         s->written + (static_cast<const uint8_t*>(src) - s->base), count);
        } else {
            gm_mark_written(d, dst, count);
        }
    }
    return ACL_SUCCESS;
}
inline aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                                 aclrtStream stream, SAGE_LOC) {
    if (!::sage::sim::stream_ok(stream, "aclrtMemcpyAsync", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    return aclrtMemcpy(dst, destMax, src, count, kind, loc);
}
inline aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count, SAGE_LOC) {
    using namespace ::sage::sim;
    touch(loc);
    if (count > maxCount) {
        host_report("acl-error", Severity::Error, loc, "aclrtMemset sets %zu bytes of a buffer of %zu (maxCount)",
                    count, maxCount);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (count == 0) return ACL_SUCCESS;
    if (!devPtr || !device_range(devPtr, count, loc, "aclrtMemset", "buffer")) return ACL_ERROR_INVALID_PARAM;
    std::memset(devPtr, value, count);
    gm_mark_written(gm_find(devPtr), devPtr, count);
    return ACL_SUCCESS;
}
inline aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream,
                                 SAGE_LOC) {
    if (!::sage::sim::stream_ok(stream, "aclrtMemsetAsync", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    return aclrtMemset(devPtr, maxCount, value, count, loc);
}
