// The built-in policies of the matmul template's last parameter (the policy page of the matmul
// kernel api; asc-devkit keeps them in impl/adv_api/detail/matmul/policy/matmul_policy.h, reached
// through lib/matmul_intf.h in namespace impl::detail). Here a policy is a tag the emulated matmul
// reads through policy_of: the default schedule, the nbuffer33 schedule (the stepM x stepKa base
// blocks of a kept in l1 while the blocks of b stream past them), and the triangle ones (the base
// blocks below, or above, the diagonal of c are neither computed nor written).
// A user-defined policy (one deriving from these to swap a module) is refused at compile time:
// the emulator has no modules to swap.
#pragma once

#include <cstdint>

namespace AscendC {

enum class MatmulPolicyKind : uint8_t { Default, NBuffer33, TrianUpper, TrianLower, Custom };

namespace Impl {

constexpr int32_t QUEUE_DEPTH = 1;  // the depth of the matmul's own queues (kernels reuse it for a co1 queue)

namespace Detail {

template <const auto& MM_CFG, typename IMPL, typename A_TYPE, typename B_TYPE, typename C_TYPE, typename BIAS_TYPE>
struct MatmulPolicy {};
template <const auto& MM_CFG, typename IMPL, typename A_TYPE, typename B_TYPE, typename C_TYPE, typename BIAS_TYPE>
struct NBuffer33MatmulPolicy : MatmulPolicy<MM_CFG, IMPL, A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE> {};
template <const auto& MM_CFG, typename IMPL, typename A_TYPE, typename B_TYPE, typename C_TYPE, typename BIAS_TYPE>
struct TrianUpperMatmulPolicy : MatmulPolicy<MM_CFG, IMPL, A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE> {};
template <const auto& MM_CFG, typename IMPL, typename A_TYPE, typename B_TYPE, typename C_TYPE, typename BIAS_TYPE>
struct TrianLowerMatmulPolicy : MatmulPolicy<MM_CFG, IMPL, A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE> {};

}  // namespace Detail
}  // namespace Impl

using Impl::Detail::MatmulPolicy;

namespace matmul_detail {
// Which built-in policy a template is; a user-defined one (even one deriving from these) is the
// custom kind: only the four templates themselves are matched.
template <template <const auto&, typename, typename, typename, typename, typename> class P>
struct policy_of {
    static constexpr MatmulPolicyKind value = MatmulPolicyKind::Custom;
};
template <>
struct policy_of<Impl::Detail::MatmulPolicy> {
    static constexpr MatmulPolicyKind value = MatmulPolicyKind::Default;
};
template <>
struct policy_of<Impl::Detail::NBuffer33MatmulPolicy> {
    static constexpr MatmulPolicyKind value = MatmulPolicyKind::NBuffer33;
};
template <>
struct policy_of<Impl::Detail::TrianUpperMatmulPolicy> {
    static constexpr MatmulPolicyKind value = MatmulPolicyKind::TrianUpper;
};
template <>
struct policy_of<Impl::Detail::TrianLowerMatmulPolicy> {
    static constexpr MatmulPolicyKind value = MatmulPolicyKind::TrianLower;
};
}  // namespace matmul_detail

}  // namespace AscendC
