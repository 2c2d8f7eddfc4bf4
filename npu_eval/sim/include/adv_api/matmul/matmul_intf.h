// The Matmul kernel interface (asc-devkit include/adv_api/matmul/matmul_intf.h): Matmul, the
// object a kernel declares, and REGIST_MATMUL_OBJ, which initialises objects with their tilings.
// On the device a Matmul in a mixed kernel is a client on the AIV served by the AIC
// (MatmulClient / MatmulServiceAux); the emulator runs every Matmul as MatmulImpl in the calling
// block (see matmul.h).
#pragma once

#include "matmul.h"
#include "matmul_utils.h"

// A mixed kernel's Matmul workspace parameter (the AIV-AIC message area): a plain GM pointer here.
#ifndef __kfc_workspace__
#define __kfc_workspace__
#endif

namespace AscendC {

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class MM_CB = MatmulCallBackFunc<nullptr, nullptr, nullptr>,
          template <const auto&, typename, typename, typename, typename, typename> class MATMUL_POLICY = MatmulPolicy>
using Matmul = MatmulImpl<A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE, MM_CFG, MM_CB, MATMUL_POLICY>;

namespace matmul_detail {
inline void regist(sage::sim::SrcLoc, TPipe*) {}
// REGIST_MATMUL_OBJ(&pipe, workspace, mm) with no tiling: the kernel calls mm.Init(&tiling) itself.
template <class MM>
inline void regist(sage::sim::SrcLoc loc, TPipe* pipe, MM& mm) {
    if constexpr (MM::kStaticTiling) mm.Init(nullptr, pipe, loc);
}
template <class MM, class... Rest>
inline void regist(sage::sim::SrcLoc loc, TPipe* pipe, MM& mm, const TCubeTiling* tiling, Rest&&... rest) {
    // a null tiling: the kernel calls Init itself, unless the Matmul has a constant tiling to run
    if (tiling != nullptr || MM::kStaticTiling) mm.Init(tiling, pipe, loc);
    regist(loc, pipe, rest...);
}
// REGIST_MATMUL_OBJ on the AIC of a mixed kernel: the device's AIC runs the Matmul server loop there
// and returns from the kernel (unless the objects are MixDualMaster, where both sides compute); the
// AIVs' calls then do the cube work themselves (CubeClient), so the AIC has nothing left to run.
// A kernel that defines ASCENDC_CUBE_ONLY before including this header makes pure-cube objects
// (the Matmul usage page): the AIC calls them itself and goes on past REGIST_MATMUL_OBJ.
#ifdef ASCENDC_CUBE_ONLY
inline constexpr bool kCubeOnly = true;
#else
inline constexpr bool kCubeOnly = false;
#endif
template <class MM, class... Rest>
inline bool aic_serves(MM&, Rest&&...) {
    using namespace sage::sim;
    return !kCubeOnly && coop().active && coop().mixed && blk().core == AIC && !MM::kMixDualMaster;
}
inline bool aic_serves() { return false; }
}  // namespace matmul_detail

}  // namespace AscendC

// REGIST_MATMUL_OBJ(&pipe, workspace, mm1, &tiling1[, mm2, &tiling2 ...]): each object's Init at
// this line. The workspace (GetSysWorkSpacePtr()) is the device's AIV-AIC message area, unused here.
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...)                        \
    if (::AscendC::matmul_detail::aic_serves(__VA_ARGS__)) return;      \
    ::AscendC::matmul_detail::regist(::sage::sim::SrcLoc::here(), tpipe, __VA_ARGS__)
#define REGIST_MATMUL_OBJ_STATIC REGIST_MATMUL_OBJ
#define REGIST_CUBE_OBJ REGIST_MATMUL_OBJ
