// ascendc_assert (and `assert` in kernels): a failed device assert stops the kernel with an
// assert-failed finding at the assert's own line.
#pragma once

#include <cassert>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#include "../../sage_sim/vec.h"

// ---------------------------------------------------------------- ascendc_assert

namespace sage {
namespace sim {

// The device printf prints any integer width with %d/%u/%x and half with %f; on the host every
// integer goes out as a 64-bit value and every conversion is rewritten to take one.
template <typename A>
inline auto assert_arg(const A& a) {
    if constexpr (std::is_same<A, half>::value || std::is_same<A, bfloat16_t>::value) {
        return double(float(a));
    } else if constexpr (std::is_floating_point<A>::value) {
        return double(a);
    } else if constexpr (std::is_integral<A>::value && std::is_signed<A>::value) {
        return (long long)a;
    } else if constexpr (std::is_integral<A>::value) {
        return (unsigned long long)a;
    } else if constexpr (std::is_enum<A>::value) {
        return (long long)a;
    } else {
        return a;
    }
}

inline std::string widen_format(const char* fmt) {
    std::string out;
    for (const char* c = fmt; *c; ++c) {
        out += *c;
        if (*c != '%') continue;
        if (c[1] == '%') {
            out += *++c;
            continue;
        }
        while (c[1] && std::strchr("-+ #0123456789.*", c[1])) out += *++c;
        while (c[1] && std::strchr("hlLqjzt", c[1])) ++c;  // the width comes from assert_arg
        if (c[1] && std::strchr("diuxXo", c[1])) out += "ll";
    }
    return out;
}

// A failed device assert stops the kernel (the device traps); the finding names the
// assert's own line.
inline void kernel_assert(SrcLoc loc, const char* text, bool cond) {
    touch(loc);
    if (cond) return;
    fail("assert-failed", loc, "assertion failed in block %d: ascendc_assert(%s)", blk().idx, text);
}
template <typename... Args>
inline void kernel_assert(SrcLoc loc, const char* text, bool cond, const char* fmt, const Args&... args) {
    touch(loc);
    if (cond) return;
    std::string msg = format(widen_format(fmt).c_str(), assert_arg(args)...);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    fail("assert-failed", loc, "assertion failed in block %d: ascendc_assert(%s): %s", blk().idx, text, msg.c_str());
}

}  // namespace sim
}  // namespace sage

#define ascendc_assert(...) ::sage::sim::kernel_assert(::sage::sim::SrcLoc{__FILE__, __LINE__}, #__VA_ARGS__, __VA_ARGS__)
// Kernel headers redefine assert the same way on the device (with ASCENDC_DUMP on, the default).
#include "kernel_assert_macro.h"

// KERNEL_LOG, ASSERT and ASCENDC_ASSERT: basic_api/kernel_log.h (compiled away, as on the device).
