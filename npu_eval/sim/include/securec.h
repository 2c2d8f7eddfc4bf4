// The bounded memory functions of Huawei's securec library, which CANN host code (tiling
// functions, sample programs) calls and CANN's host headers bring in: 0 on success, non-zero
// (nothing copied) when the destination is too small or a pointer is null.
#pragma once

#include <cstddef>
#include <cstring>

#ifndef EOK
#define EOK 0
#endif

inline int memcpy_s(void* dest, size_t destMax, const void* src, size_t count) {
    if (!dest || !src || count > destMax) return -1;
    if (count) std::memmove(dest, src, count);
    return EOK;
}
inline int memset_s(void* dest, size_t destMax, int c, size_t count) {
    if (!dest || count > destMax) return -1;
    if (count) std::memset(dest, c, count);
    return EOK;
}
