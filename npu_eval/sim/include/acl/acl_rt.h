// ACL runtime: device, context, stream, event and memory management, emulated on the CPU.
// Every call takes the caller's source location as a defaulted last parameter, so a misuse
// (a copy past a device buffer, a double free, a host pointer where device memory is due) is
// reported at the user's line. Errors are returned as ACL does; the report says why.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "acl_base.h"

typedef void* aclrtStream;
typedef void* aclrtContext;
typedef void* aclrtEvent;
typedef void* aclrtNotify;
typedef void* aclmdlRI;

// Values as CANN's acl_rt.h defines them (github.com/hicann/runtime, include/external/acl/acl_rt.h).
#define ACL_EVENT_SYNC 0x00000001U
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002U
#define ACL_EVENT_TIME_LINE 0x00000008U
#define ACL_EVENT_DEVICE_USE_ONLY 0x00000010U
#define ACL_EVENT_EXTERNAL 0x00000020U
#define ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY 0x0UL
#define ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE 0x1UL

typedef enum {
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,
    ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
} aclmdlRICaptureMode;

typedef enum {
    ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,
    ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
    ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED,
} aclmdlRICaptureStatus;

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
    ACL_MEM_MALLOC_HUGE1G_ONLY,
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
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
    ACL_HBM_MEM_HUGE1G,
    ACL_HBM_MEM_P2P_HUGE1G,
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

// Whether [p, p + n) lies inside one live aclrtMallocHost buffer.
inline bool host_block_holds(const void* p, size_t n) {
    auto at = reinterpret_cast<uintptr_t>(p);
    for (const auto& [base, size] : acl_host().host_live) {
        auto b = reinterpret_cast<uintptr_t>(base);
        if (at >= b && at + n <= b + size) return true;
    }
    return false;
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
    using namespace ::sage::sim;
    if (!stream_ok(stream, "aclrtSynchronizeStream", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    if (captured(stream)) {
        host_report("acl-error", Severity::Error, loc, "aclrtSynchronizeStream on a stream being captured "
                    "(aclmdlRICaptureBegin): nothing on it runs until the model executes; end the capture first "
                    "(ACL_ERROR_RT_STREAM_CAPTURED)");
        return ACL_ERROR_RT_STREAM_CAPTURED;
    }
    return acl_sync(loc);
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
inline aclError aclrtCreateEventExWithFlag(aclrtEvent* event, uint32_t flag, SAGE_LOC) {
    (void)flag;
    return aclrtCreateEvent(event, loc);
}
inline aclError aclrtDestroyEvent(aclrtEvent event, SAGE_LOC) {
    return ::sage::sim::handle_given(event, "aclrtDestroyEvent", "event", loc) ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}
// Launches run when they are made, so an event is complete when recorded. In a capture, an event
// recorded on a captured stream is what brings another stream into it (aclrtStreamWaitEvent).
inline aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream, SAGE_LOC) {
    using namespace ::sage::sim;
    if (!handle_given(event, "aclrtRecordEvent", "event", loc)) return ACL_ERROR_INVALID_PARAM;
    if (!stream_ok(stream, "aclrtRecordEvent", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    if (captured(stream)) {
        capture().events.push_back(event);
        capture().tasks.push_back(CapturedTask{"EVENT_RECORD", "aclrtRecordEvent", loc, [] {}});
    }
    return ACL_SUCCESS;
}
inline aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream, SAGE_LOC) {
    using namespace ::sage::sim;
    if (!handle_given(event, "aclrtResetEvent", "event", loc)) return ACL_ERROR_INVALID_PARAM;
    return stream_ok(stream, "aclrtResetEvent", loc) ? ACL_SUCCESS : ACL_ERROR_RT_PARAM_INVALID;
}
inline aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event, SAGE_LOC) {
    using namespace ::sage::sim;
    if (!handle_given(event, "aclrtStreamWaitEvent", "event", loc)) return ACL_ERROR_INVALID_PARAM;
    if (!stream_ok(stream, "aclrtStreamWaitEvent", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    CaptureState& c = capture();
    bool from_capture = false;
    for (const void* e : c.events) from_capture = from_capture || e == event;
    if (c.active && from_capture && stream && !captured(stream)) c.streams.push_back(stream);  // it joins the capture
    if (captured(stream)) c.tasks.push_back(CapturedTask{"EVENT_WAIT", "aclrtStreamWaitEvent", loc, [] {}});
    return ACL_SUCCESS;
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
    using namespace ::sage::sim;
    if (!stream_ok(stream, "aclrtMemcpyAsync", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    if (captured(stream)) {
        capture().tasks.push_back(CapturedTask{"MEMCPY_ASYNC", memcpy_kind_name(kind), loc,
                                               [=] { aclrtMemcpy(dst, destMax, src, count, kind, loc); }});
        return ACL_SUCCESS;
    }
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
    // The doc: the memory may be on the host or the device, told apart by its address; host memory
    // must come from ACL (aclrtMallocHost), anything else is undefined, so it is an error here.
    if (devPtr && host_block_holds(devPtr, count)) {
        std::memset(devPtr, value, count);
        return ACL_SUCCESS;
    }
    if (!devPtr || !device_range(devPtr, count, loc, "aclrtMemset", "buffer")) return ACL_ERROR_INVALID_PARAM;
    std::memset(devPtr, value, count);
    gm_mark_written(gm_find(devPtr), devPtr, count);
    return ACL_SUCCESS;
}
inline aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream,
                                 SAGE_LOC) {
    using namespace ::sage::sim;
    if (!stream_ok(stream, "aclrtMemsetAsync", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    if (captured(stream)) {
        capture().tasks.push_back(CapturedTask{"MEMSET_ASYNC", "aclrtMemsetAsync", loc,
                                               [=] { aclrtMemset(devPtr, maxCount, value, count, loc); }});
        return ACL_SUCCESS;
    }
    return aclrtMemset(devPtr, maxCount, value, count, loc);
}

// ---- ACL graphs: capturing a stream into a model and running it (aclmdlRI*) ----
// Between aclmdlRICaptureBegin and aclmdlRICaptureEnd, what is issued on the stream (and on
// streams that wait on an event recorded in it) is recorded, not run; each aclmdlRIExecuteAsync
// runs the recorded tasks in the order they were issued, a kernel launch with the arguments it
// was given, so each execution is a launch of its own in the report.

namespace sage {
namespace sim {

struct ModelRI {
    std::vector<CapturedTask> tasks;
    SrcLoc captured_at;
};

struct ModelRIs {
    std::unordered_map<const void*, std::unique_ptr<ModelRI>> live;
    std::unordered_map<const void*, SrcLoc> destroyed;
};
inline ModelRIs& models() {
    static ModelRIs m;
    return m;
}

// The model a handle names, or null after reporting why not (at `loc`).
inline ModelRI* model_of(aclmdlRI modelRI, const char* api, SrcLoc loc) {
    auto& m = models();
    auto it = m.live.find(modelRI);
    if (it != m.live.end()) return it->second.get();
    auto d = m.destroyed.find(modelRI);
    if (d != m.destroyed.end())
        host_report("acl-error", Severity::Error, loc, "%s is given a model aclmdlRIDestroy destroyed at %s "
                    "(ACL_ERROR_RT_PARAM_INVALID)", api, line_ref(d->second, loc).c_str());
    else
        host_report("acl-error", Severity::Error, loc, "%s is given %p, which is not a model from aclmdlRICaptureEnd "
                    "(ACL_ERROR_RT_PARAM_INVALID)", api, modelRI);
    return nullptr;
}

inline std::string json_text(const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\';
        if (static_cast<unsigned char>(ch) >= 0x20) out += ch;
    }
    return out + "\"";
}

}  // namespace sim
}  // namespace sage

inline aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode, SAGE_LOC) {
    using namespace ::sage::sim;
    (void)mode;
    if (!stream_ok(stream, "aclmdlRICaptureBegin", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    CaptureState& c = capture();
    if (!stream) {
        host_report("acl-error", Severity::Error, loc, "aclmdlRICaptureBegin on the default stream: capture a stream "
                    "from aclrtCreateStream (ACL_ERROR_RT_PARAM_INVALID)");
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    if (c.active) {
        host_report("acl-error", Severity::Error, loc, "aclmdlRICaptureBegin while a capture is in progress: end it "
                    "with aclmdlRICaptureEnd first (ACL_ERROR_RT_STREAM_CAPTURED)");
        return ACL_ERROR_RT_STREAM_CAPTURED;
    }
    c = CaptureState{};
    c.active = true;
    c.origin = stream;
    c.streams.push_back(stream);
    return ACL_SUCCESS;
}

inline aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus* status, aclmdlRI* modelRI) {
    if (!status) return ACL_ERROR_INVALID_PARAM;
    *status = ::sage::sim::captured(stream) ? ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE : ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    if (modelRI) *modelRI = nullptr;  // the model exists once the capture ends
    return ACL_SUCCESS;
}

inline aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI* modelRI, SAGE_LOC) {
    using namespace ::sage::sim;
    CaptureState& c = capture();
    if (!handle_given(modelRI, "aclmdlRICaptureEnd", "modelRI", loc)) return ACL_ERROR_INVALID_PARAM;
    if (!c.active) {
        host_report("acl-error", Severity::Error, loc, "aclmdlRICaptureEnd without aclmdlRICaptureBegin "
                    "(ACL_ERROR_RT_STREAM_NOT_CAPTURED)");
        return ACL_ERROR_RT_STREAM_NOT_CAPTURED;
    }
    if (stream != c.origin) {
        host_report("acl-error", Severity::Error, loc, "aclmdlRICaptureEnd on another stream than the one "
                    "aclmdlRICaptureBegin began the capture on (ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED)");
        return ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED;
    }
    auto model = std::make_unique<ModelRI>();
    model->tasks = std::move(c.tasks);
    model->captured_at = loc;
    *modelRI = acl_handle();
    models().live[*modelRI] = std::move(model);
    models().destroyed.erase(*modelRI);
    c = CaptureState{};
    return ACL_SUCCESS;
}

inline aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode* mode) {
    static aclmdlRICaptureMode current = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
    if (!mode) return ACL_ERROR_INVALID_PARAM;
    std::swap(current, *mode);
    return ACL_SUCCESS;
}

inline aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream, SAGE_LOC) {
    using namespace ::sage::sim;
    if (!stream_ok(stream, "aclmdlRIExecuteAsync", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    ModelRI* m = model_of(modelRI, "aclmdlRIExecuteAsync", loc);
    if (!m) return ACL_ERROR_RT_PARAM_INVALID;
    touch(loc);
    for (auto& t : m->tasks) t.run();
    return ACL_SUCCESS;
}

inline aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout, SAGE_LOC) {
    (void)timeout;
    aclError e = aclmdlRIExecuteAsync(modelRI, nullptr, loc);
    return e != ACL_SUCCESS ? e : ::sage::sim::acl_sync(loc);
}

inline aclError aclmdlRIDestroy(aclmdlRI modelRI, SAGE_LOC) {
    using namespace ::sage::sim;
    if (!model_of(modelRI, "aclmdlRIDestroy", loc)) return ACL_ERROR_RT_PARAM_INVALID;
    models().live.erase(modelRI);
    models().destroyed[modelRI] = loc;
    return ACL_SUCCESS;
}

// The model's tasks as JSON at `path` (relative to the working directory), one entry per task
// with its type and the line that issued it; VERBOSE adds nothing here.
inline aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char* path, uint32_t flags, SAGE_LOC) {
    using namespace ::sage::sim;
    (void)flags;
    ModelRI* m = model_of(modelRI, "aclmdlRIDebugJsonPrint", loc);
    if (!m) return ACL_ERROR_RT_PARAM_INVALID;
    if (!path) return ACL_ERROR_INVALID_PARAM;
    std::string out = "{\n  \"tasks\": [";
    for (size_t i = 0; i < m->tasks.size(); ++i) {
        const CapturedTask& t = m->tasks[i];
        out += std::string(i ? "," : "") + "\n    {\"index\": " + std::to_string(i) + ", \"type\": " + json_text(t.kind) +
               ", \"name\": " + json_text(t.what) + ", \"line\": " + std::to_string(t.at.line) + "}";
    }
    out += "\n  ]\n}\n";
    FILE* f = std::fopen(path, "w");
    if (!f) {
        host_report("acl-error", Severity::Error, loc, "aclmdlRIDebugJsonPrint cannot write %s", path);
        return ACL_ERROR_INVALID_FILE;
    }
    std::fputs(out.c_str(), f);
    std::fclose(f);
    return ACL_SUCCESS;
}

inline aclError aclmdlRIDebugPrint(aclmdlRI modelRI, SAGE_LOC) {
    using namespace ::sage::sim;
    ModelRI* m = model_of(modelRI, "aclmdlRIDebugPrint", loc);
    if (!m) return ACL_ERROR_RT_PARAM_INVALID;
    for (size_t i = 0; i < m->tasks.size(); ++i)
        std::printf("task %zu: %s %s\n", i, m->tasks[i].kind.c_str(), m->tasks[i].what.c_str());
    return ACL_SUCCESS;
}

// Kernel binaries loaded at run time (aclrtc's), declared by CANN in this header too.
#include "acl_rt_binary.h"
