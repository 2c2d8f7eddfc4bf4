// Tiling data passed through global memory (framework-style entries). The op build would
// generate the struct; here the kernel names it with REGISTER_TILING_DEFAULT or the harness
// defines SAGE_TILING_TYPE from Launch(args=[..., Tiling(type="Name", ...)]).
#pragma once

#include <cstring>

#define REGISTER_TILING_DEFAULT(T) using SageRegisteredTilingType = T
#define REGISTER_TILING_FOR_TILINGKEY(...)

#ifdef SAGE_TILING_TYPE
#define SAGE_GET_TILING_TYPE SAGE_TILING_TYPE
#else
#define SAGE_GET_TILING_TYPE SageRegisteredTilingType
#endif

#define GET_TILING_DATA(var, tiling)                                                    \
    SAGE_GET_TILING_TYPE var;                                                           \
    memcpy(&var, reinterpret_cast<const void*>(tiling), sizeof(SAGE_GET_TILING_TYPE))
#define GET_TILING_DATA_WITH_STRUCT(type, var, tiling) \
    type var;                                          \
    memcpy(&var, reinterpret_cast<const void*>(tiling), sizeof(type))
#define GET_TILING_DATA_MEMBER(type, member, var, tiling)                                  \
    decltype(type::member) var;                                                            \
    memcpy(&var, reinterpret_cast<const uint8_t*>(tiling) + offsetof(type, member), sizeof(var))
