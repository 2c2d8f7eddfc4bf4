// The whole-tensor operators on LocalTensor (asc-devkit Add.md, Sub.md, Mul.md, Div.md, And.md,
// Or.md, Compare.md, "整个tensor参与计算"): `dst = src0 OP src1` is the named API over the whole
// tensor. The arithmetic and bitwise ones compute dst.GetSize() elements (the pages: "运算量为目的
// LocalTensor的总长度"); a comparison computes src0.GetSize() elements into dst's bit mask, which
// Compare requires to be 256 bytes' worth. Each runs the named API, so its dtype gate, operand
// checks and cost apply, reported at the line of the expression.
#pragma once

#include "kernel_operator_vec_binary_intf.h"
#include "kernel_operator_vec_cmpsel_intf.h"

namespace AscendC {

// The right operand: an operator cannot take a defaulted location, but the conversion from
// LocalTensor to this can, and runs at the expression.
template <typename T>
struct SymbolOperand {
    LocalTensor<T> tensor;
    sage::sim::SrcLoc loc;
    __aicore__ SymbolOperand(const LocalTensor<T>& t, SAGE_LOC) : tensor(t), loc(loc) {}
};

template <typename T, SymbolOp OP>
class SymbolOverride {
public:
    using SageSymbolOverride = void;  // what LocalTensor::operator= accepts
    __aicore__ SymbolOverride(const LocalTensor<T>& src0, const SymbolOperand<T>& src1, CMPMODE mode = CMPMODE::EQ)
        : src0_(src0), src1_(src1.tensor), loc_(src1.loc), mode_(mode) {}

    template <typename U>
    __aicore__ inline void AssignTo(const LocalTensor<U>& dst) const {
        if constexpr (OP == SymbolOp::Compare) {
            Compare(dst, src0_, src1_, mode_, src0_.GetSize(), loc_);
        } else {
            static_assert(std::is_same_v<U, T>, "dst = src0 OP src1 needs dst, src0 and src1 of one element type");
            const int32_t count = int32_t(dst.GetSize());
            if constexpr (OP == SymbolOp::Add) Add(dst, src0_, src1_, count, loc_);
            if constexpr (OP == SymbolOp::Sub) Sub(dst, src0_, src1_, count, loc_);
            if constexpr (OP == SymbolOp::Mul) Mul(dst, src0_, src1_, count, loc_);
            if constexpr (OP == SymbolOp::Div) Div(dst, src0_, src1_, count, loc_);
            if constexpr (OP == SymbolOp::And) And(dst, src0_, src1_, count, loc_);
            if constexpr (OP == SymbolOp::Or) Or(dst, src0_, src1_, count, loc_);
        }
    }

private:
    LocalTensor<T> src0_, src1_;
    sage::sim::SrcLoc loc_;
    CMPMODE mode_;
};

#define SAGE_SYMBOL_OP(SYM, OP, ...)                                                                      \
    template <typename T>                                                                                 \
    __aicore__ inline SymbolOverride<T, SymbolOp::OP> LocalTensor<T>::operator SYM(                       \
        const SymbolOperand<T>& src1) const {                                                             \
        return SymbolOverride<T, SymbolOp::OP>(*this, src1 __VA_ARGS__);                                  \
    }
SAGE_SYMBOL_OP(+, Add)
SAGE_SYMBOL_OP(-, Sub)
SAGE_SYMBOL_OP(*, Mul)
SAGE_SYMBOL_OP(/, Div)
SAGE_SYMBOL_OP(&, And)
SAGE_SYMBOL_OP(|, Or)
SAGE_SYMBOL_OP(<, Compare, , CMPMODE::LT)
SAGE_SYMBOL_OP(>, Compare, , CMPMODE::GT)
SAGE_SYMBOL_OP(<=, Compare, , CMPMODE::LE)
SAGE_SYMBOL_OP(>=, Compare, , CMPMODE::GE)
SAGE_SYMBOL_OP(==, Compare, , CMPMODE::EQ)
SAGE_SYMBOL_OP(!=, Compare, , CMPMODE::NE)
#undef SAGE_SYMBOL_OP

}  // namespace AscendC
