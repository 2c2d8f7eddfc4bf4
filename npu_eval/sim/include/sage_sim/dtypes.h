// half and bfloat16_t as the hardware stores them: 16 bits, every conversion rounding to
// nearest even. Arithmetic goes through float and rounds back, which for one +,-,*,/ or
// sqrt gives the correctly rounded half result (float has more than 2*11+2 bits).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace sage {
namespace sim {

inline float half_bits_to_float(uint16_t h) {
    _Float16 v;
    memcpy(&v, &h, 2);
    return static_cast<float>(v);
}
inline uint16_t float_to_half_bits(float f) {
    _Float16 v = static_cast<_Float16>(f);  // IEEE round to nearest even
    uint16_t h;
    memcpy(&h, &v, 2);
    return h;
}
inline float bf16_bits_to_float(uint16_t b) {
    uint32_t u = uint32_t(b) << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
inline uint16_t float_to_bf16_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    return uint16_t(u >> 16);
}

}  // namespace sim
}  // namespace sage

// Mixed with a built-in number, a 16-bit float promotes to float (as __fp16 does), which
// also keeps `h * 2` from being ambiguous between half and float arithmetic.
#define SAGE_FP16_MIXED(NAME, OP)                                                          \
    template <typename U, typename = typename std::enable_if<std::is_arithmetic<U>::value>::type> \
    inline auto operator OP(NAME a, U b) { return float(a) OP b; }                         \
    template <typename U, typename = typename std::enable_if<std::is_arithmetic<U>::value>::type> \
    inline auto operator OP(U a, NAME b) { return a OP float(b); }

#define SAGE_FP16_LIKE(NAME, TO_FLOAT, FROM_FLOAT)                                         \
    struct NAME {                                                                          \
        uint16_t bits_;                                                                    \
        NAME() = default;                                                                  \
        constexpr NAME(const NAME&) = default;                                             \
        NAME& operator=(const NAME&) = default;                                            \
        NAME(float f) : bits_(FROM_FLOAT(f)) {}                                            \
        NAME(double f) : bits_(FROM_FLOAT(static_cast<float>(f))) {}                       \
        NAME(int v) : bits_(FROM_FLOAT(static_cast<float>(v))) {}                          \
        NAME(unsigned v) : bits_(FROM_FLOAT(static_cast<float>(v))) {}                     \
        NAME(long v) : bits_(FROM_FLOAT(static_cast<float>(v))) {}                         \
        NAME(unsigned long v) : bits_(FROM_FLOAT(static_cast<float>(v))) {}                \
        NAME(long long v) : bits_(FROM_FLOAT(static_cast<float>(v))) {}                    \
        NAME(unsigned long long v) : bits_(FROM_FLOAT(static_cast<float>(v))) {}           \
        operator float() const { return TO_FLOAT(bits_); }                                 \
        static NAME from_bits(uint16_t b) {                                                \
            NAME h;                                                                        \
            h.bits_ = b;                                                                   \
            return h;                                                                      \
        }                                                                                  \
        NAME& operator+=(NAME o) { return *this = NAME(float(*this) + float(o)); }         \
        NAME& operator-=(NAME o) { return *this = NAME(float(*this) - float(o)); }         \
        NAME& operator*=(NAME o) { return *this = NAME(float(*this) * float(o)); }         \
        NAME& operator/=(NAME o) { return *this = NAME(float(*this) / float(o)); }         \
        NAME operator-() const { return from_bits(uint16_t(bits_ ^ 0x8000u)); }            \
    };                                                                                     \
    inline NAME operator+(NAME a, NAME b) { return NAME(float(a) + float(b)); }            \
    inline NAME operator-(NAME a, NAME b) { return NAME(float(a) - float(b)); }            \
    inline NAME operator*(NAME a, NAME b) { return NAME(float(a) * float(b)); }            \
    inline NAME operator/(NAME a, NAME b) { return NAME(float(a) / float(b)); }            \
    inline bool operator==(NAME a, NAME b) { return float(a) == float(b); }                \
    inline bool operator!=(NAME a, NAME b) { return float(a) != float(b); }                \
    inline bool operator<(NAME a, NAME b) { return float(a) < float(b); }                  \
    inline bool operator>(NAME a, NAME b) { return float(a) > float(b); }                  \
    inline bool operator<=(NAME a, NAME b) { return float(a) <= float(b); }                \
    inline bool operator>=(NAME a, NAME b) { return float(a) >= float(b); }                \
    SAGE_FP16_MIXED(NAME, +) SAGE_FP16_MIXED(NAME, -) SAGE_FP16_MIXED(NAME, *)              \
    SAGE_FP16_MIXED(NAME, /) SAGE_FP16_MIXED(NAME, <) SAGE_FP16_MIXED(NAME, >)              \
    SAGE_FP16_MIXED(NAME, <=) SAGE_FP16_MIXED(NAME, >=) SAGE_FP16_MIXED(NAME, ==)           \
    SAGE_FP16_MIXED(NAME, !=)

SAGE_FP16_LIKE(half, ::sage::sim::half_bits_to_float, ::sage::sim::float_to_half_bits)
SAGE_FP16_LIKE(bfloat16_t, ::sage::sim::bf16_bits_to_float, ::sage::sim::float_to_bf16_bits)
#undef SAGE_FP16_LIKE
#undef SAGE_FP16_MIXED

namespace AscendC {
// A signed 4-bit integer: two per byte, element 2i in the low nibble (the int4b_t packing of the
// LoadDataWithTranspose page: the even element's bits are the byte's low four). A tensor of it
// counts elements (GetSize, operator[], tileSize) but holds half as many bytes.
struct int4b_t {
    int4b_t() = default;
    // From an integer, as CANN's type converts (a pad value written `0`): its low four bits.
    constexpr int4b_t(int v) : storage(uint8_t(v & 0xF)) {}
    uint8_t storage;
};
}  // namespace AscendC

namespace sage {
namespace sim {
// Whether T is the 4-bit type: its tensors keep byte counts internally (sage::sim::LocalTensor's
// size_ counts storage bytes) and convert element counts at the API boundary.
template <typename T> constexpr bool is_int4() { return std::is_same<T, AscendC::int4b_t>::value; }
// Bytes of n elements of T (int4b_t: n / 2 rounded up) and elements in n bytes.
template <typename T> constexpr uint64_t elem_bytes(uint64_t n) { return is_int4<T>() ? (n + 1) / 2 : n * sizeof(T); }
template <typename T> constexpr uint64_t bytes_elems(uint64_t n) { return is_int4<T>() ? n * 2 : n / sizeof(T); }

// The dtype's name as the report and the trace spell it.
template <typename T> constexpr const char* dtype_name() { return "unknown"; }
template <> constexpr const char* dtype_name<AscendC::int4b_t>() { return "int4"; }
template <> constexpr const char* dtype_name<half>() { return "float16"; }
template <> constexpr const char* dtype_name<bfloat16_t>() { return "bfloat16"; }
template <> constexpr const char* dtype_name<float>() { return "float32"; }
template <> constexpr const char* dtype_name<double>() { return "float64"; }
template <> constexpr const char* dtype_name<int8_t>() { return "int8"; }
template <> constexpr const char* dtype_name<uint8_t>() { return "uint8"; }
template <> constexpr const char* dtype_name<int16_t>() { return "int16"; }
template <> constexpr const char* dtype_name<uint16_t>() { return "uint16"; }
template <> constexpr const char* dtype_name<int32_t>() { return "int32"; }
template <> constexpr const char* dtype_name<uint32_t>() { return "uint32"; }
template <> constexpr const char* dtype_name<int64_t>() { return "int64"; }
template <> constexpr const char* dtype_name<uint64_t>() { return "uint64"; }
template <> constexpr const char* dtype_name<bool>() { return "bool"; }
}  // namespace sim
}  // namespace sage
