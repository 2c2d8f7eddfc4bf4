// The engine the advanced math APIs (adv_api/math/) share. The real implementations split the
// calCount elements into chunks that fit the temporary buffer (sharedTmpBuffer, or what the
// framework pops off the free UB), and run a fixed sequence of vector instructions on each
// chunk, in float for half inputs. Here:
//   - the temporary buffer is checked against the documented minimum, which the API's own host
//     function (GetXxxMaxMinTmpSize, in <api>_tiling.h) computes for the call's element count, so
//     host and kernel cannot disagree; too small is ub-out-of-bounds at the caller's line;
//   - each element is computed in float by the documented algorithm (its own rounding steps),
//     and rounded once to T, as the final Cast does;
//   - the trace records the instruction sequence per chunk (Steps), so the cost model sees the
//     instructions the API issues and a larger temporary buffer (fewer chunks) costs less.
#pragma once

#include <algorithm>
#include <vector>

#include "vec.h"

namespace sage {
namespace sim {
namespace advmath {

// One vector instruction of an API's per-chunk sequence: its name, and whether it runs on the
// user's element type (a Cast in or out of float, a compare on T) rather than on float.
struct Step {
    const char* api;
    bool on_t = false;
};
// An API's steps: a view of its static array.
struct Steps {
    const Step* first = nullptr;
    size_t count = 0;
    Steps() = default;
    template <size_t N>
    constexpr Steps(const Step (&steps)[N]) : first(steps), count(N) {}
    Steps(const Step* steps, size_t n) : first(steps), count(n) {}
    const Step* begin() const { return first; }
    const Step* end() const { return first + count; }
    size_t size() const { return count; }
};

// An API's steps built once by code, for the long sequences (Lgamma, Digamma) whose parts
// repeat: a Horner polynomial, a compare mask, a select-and-add, another API's whole sequence.
struct StepList {
    std::vector<Step> list;
    StepList& add(const char* api, size_t times = 1) {
        for (size_t i = 0; i < times; ++i) list.push_back(Step{api});
        return *this;
    }
    StepList& add(Steps steps) {
        list.insert(list.end(), steps.begin(), steps.end());
        return *this;
    }
    // A Cast in or out of the user's type T.
    StepList& add_on_t(const char* api) {
        list.push_back(Step{api, true});
        return *this;
    }
    StepList& pairs(const char* a, const char* b, size_t times) {
        for (size_t i = 0; i < times; ++i) add(a).add(b);
        return *this;
    }
    // t (c0 t^(n-1) + ... + c(n-1)): Muls, Adds, then Mul and Adds per further coefficient, and a Mul.
    StepList& horner(size_t n) { return add("Muls").add("Adds").pairs("Mul", "Adds", n - 2).add("Mul"); }
    // A compare against a scalar: the scalar duplicated into a tensor, then Compare.
    StepList& mask() { return add("Duplicate").add("Compare"); }
    // lo <= x < hi: two masks and their And.
    StepList& range() { return mask().mask().add("And"); }
    // Select(mask, v, 0) added onto an accumulator.
    StepList& pick() { return add("Select").add("Add"); }
    Steps view() const { return Steps(list.data(), list.size()); }
};

// The temporary buffer an API call works in: the user's sharedTmpBuffer, or (tmp == nullptr)
// the free UB above every buffer the kernel carved, which the framework form pops.
struct Tmp {
    const AscendC::LocalTensor<uint8_t>* tensor;
    uint32_t bytes;
    UbRange range;
};

inline uint32_t free_ub_bytes() { return uint32_t(rt().ub_bytes) - ub_free_base(); }

// Checks the temporary buffer against the documented minimum (min_bytes, from the API's
// GetXxxMaxMinTmpSize for this call) and returns it.
inline Tmp take_tmp(const char* api, const char* host_fn, const AscendC::LocalTensor<uint8_t>* tmp, uint32_t count,
                    uint32_t min_bytes, SrcLoc loc) {
    if (tmp) {
        tmp->check(api, 0, loc);
        uint32_t bytes = tmp->GetSize();
        if (bytes < min_bytes) {
            fail("ub-out-of-bounds", loc,
                 "%s on %u elements with a sharedTmpBuffer of %u bytes: it needs at least %u (%s gives the "
                 "minimum and maximum for the element count and type): the API's intermediate results would run "
                 "past the buffer's end, in block %d",
                 api, count, bytes, min_bytes, host_fn, blk().idx);
        }
        return Tmp{tmp, bytes, tmp->range(bytes)};
    }
    uint32_t free = free_ub_bytes();
    if (free < min_bytes) {
        fail("ub-out-of-bounds", loc,
             "%s on %u elements without a sharedTmpBuffer takes its temporary space from the free UB above the "
             "kernel's buffers: it needs at least %u bytes (%s) and %u are left, in block %d. Leave that much UB "
             "free, or pass a sharedTmpBuffer",
             api, count, min_bytes, host_fn, free, blk().idx);
    }
    return Tmp{nullptr, free, UbRange{}};
}

// Elements per chunk: the temporary buffer over the bytes one element needs in it, rounded down
// to whole 32-byte blocks of T; an API that needs no temporary space runs in one chunk.
template <typename T>
inline uint32_t chunk_elems(uint32_t tmp_bytes, uint32_t bytes_per_elem, uint32_t count) {
    if (bytes_per_elem == 0) return std::max<uint32_t>(count, 1);
    uint32_t per_blk = 32 / sizeof(T);
    uint32_t n = tmp_bytes / bytes_per_elem / per_blk * per_blk;
    return std::max<uint32_t>(n, per_blk);
}

// The chunk the Atlas A2 implementations that split by float tensors use: the temporary bytes over
// the bytes one element takes, rounded down to whole 32-element blocks (ONE_BLK_SIZE).
inline uint32_t float_split(uint32_t tmp_bytes, uint32_t bytes_per_elem) {
    return tmp_bytes / bytes_per_elem / 32u * 32u;
}

// Records the steps for each chunk: the first reads the sources, the last writes dst, and the
// ones between work in the temporary buffer.
template <typename T>
inline void trace_steps(Steps steps, uint32_t count, uint32_t chunk, SrcLoc loc, UbRange dst, UbRange src0,
                        UbRange src1, UbRange tmp) {
    if (!rt().tracing) return;
    for (uint32_t at = 0; at < count; at += chunk) {
        uint32_t n = std::min(chunk, count - at);
        size_t i = 0;
        for (const Step& s : steps) {
            const char* dt = s.on_t ? dtype_name<T>() : dtype_name<float>();
            uint32_t esize = s.on_t ? uint32_t(sizeof(T)) : 4u;
            uint64_t bytes = uint64_t((uint64_t(n) * esize + 255) / 256) * 256;
            UbRange w = (i + 1 == steps.size()) ? dst : tmp;
            UbRange r0 = i == 0 ? src0 : tmp;
            UbRange r1 = i == 0 ? src1 : UbRange{};
            trace_instr(Pipe::V, s.api, dt, n, bytes, loc, w, r0, r1);
            ++i;
        }
    }
}

// A call's plan: which API, its host function (named in messages), the documented minimum
// temporary size for this call, the temporary bytes one element of a chunk takes, and the steps.
struct Plan {
    const char* api;
    const char* host_fn;
    uint32_t min_tmp;
    uint32_t tmp_per_elem;
    Steps steps;
};

inline void done(const Tmp& t) {
    if (t.tensor) ub_mark(t.range);
}

// dst[i] = f(src[i]) for i < count: f computes in float by the documented algorithm; the result
// is rounded once to TD.
template <typename TD, typename TS, class F>
inline void unary(const Plan& p, const AscendC::LocalTensor<TD>& dst, const AscendC::LocalTensor<TS>& src,
                  const AscendC::LocalTensor<uint8_t>* tmp, uint32_t count, SrcLoc loc, F f) {
    touch(loc);
    vec_src(src, p.api, count, loc);
    vec_dst(dst, p.api, count, loc);
    Tmp t = take_tmp(p.api, p.host_fn, tmp, count, p.min_tmp, loc);
    TD* d = dst.data();
    const TS* s = src.data();
    for (uint32_t i = 0; i < count; ++i) d[i] = down<TD>(f(float(s[i])));
    ub_mark(dst.range(count));
    done(t);
    trace_steps<TS>(p.steps, count, chunk_elems<TS>(t.bytes, p.tmp_per_elem, count), loc, dst.range(count),
                    src.range(count), {}, t.range);
}

// dst[i] = f(src0[i], src1[i]) for i < count, as unary; f takes and returns the calculation type C
// (float for the float family, an integer type for the bitwise ones).
template <typename T, typename C, class F>
inline void binary(const Plan& p, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                   const AscendC::LocalTensor<T>& src1, const AscendC::LocalTensor<uint8_t>* tmp, uint32_t count,
                   SrcLoc loc, F f) {
    touch(loc);
    vec_src(src0, p.api, count, loc);
    vec_src(src1, p.api, count, loc);
    vec_dst(dst, p.api, count, loc);
    Tmp t = take_tmp(p.api, p.host_fn, tmp, count, p.min_tmp, loc);
    T* d = dst.data();
    const T* a = src0.data();
    const T* b = src1.data();
    for (uint32_t i = 0; i < count; ++i) d[i] = down<T>(f(C(a[i]), C(b[i])));
    ub_mark(dst.range(count));
    done(t);
    trace_steps<T>(p.steps, count, chunk_elems<T>(t.bytes, p.tmp_per_elem, count), loc, dst.range(count),
                   src0.range(count), src1.range(count), t.range);
}

// The documented calCount must fit the tensors; the forms without calCount use the source's size.
template <typename T>
inline uint32_t whole(const AscendC::LocalTensor<T>& src) {
    return src.GetSize();
}

}  // namespace advmath
}  // namespace sim
}  // namespace sage
