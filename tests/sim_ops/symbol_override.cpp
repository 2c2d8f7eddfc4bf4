// Drives the whole-tensor operators on LocalTensor (dst = src0 + src1, ...) outside a kernel
// launch, beside the named API each stands for: every case dumps the operator's result and the
// named API's (<out>/<case>_op.bin, <case>_api.bin) and the inputs, for test_sim_symbol_override.py.
// The fault case prints "FAULT<TAB>code<TAB>line" per finding and "EXPECT<TAB>code<TAB>line".
#include "kernel_operator.h"

#include <cstdio>
#include <deque>
#include <string>
#include <vector>

using namespace AscendC;

static std::string g_out;

template <typename T>
static void dump(const std::string& name, const LocalTensor<T>& t) {
    std::string path = g_out + "/" + name + ".bin";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::exit(2);
    std::fwrite(t.data(), sizeof(T), t.GetSize(), f);
    std::fclose(f);
}

struct Case {
    TPipe pipe;
    std::deque<TBuf<TPosition::VECCALC>> bufs;
    Case() { pipe.Reset(); }
    ~Case() { pipe.Reset(); }
    template <typename T>
    LocalTensor<T> get(uint32_t n) {
        bufs.emplace_back();
        pipe.InitBuffer(bufs.back(), n * sizeof(T));
        return bufs.back().template Get<T>();
    }
};

static uint32_t g_seed = 777;
static float rnd() {  // uniform in [-1, 1)
    g_seed = g_seed * 1664525u + 1013904223u;
    return float(int32_t(g_seed >> 8) - (1 << 23)) / float(1 << 23);
}
template <typename T>
static void fill(const LocalTensor<T>& t, float scale) {
    for (uint32_t i = 0; i < t.GetSize(); ++i) {
        float v = rnd() * scale;
        t.SetValue(i, T(v == 0 ? 1.0f : v));
    }
}

// The arithmetic operators (and the bitwise ones for 16-bit integers) against their named API.
template <typename T>
static void arith(const char* tag, float scale, bool divide, bool bitwise) {
    Case c;
    const uint32_t n = 512;
    auto a = c.get<T>(n), b = c.get<T>(n);
    fill(a, scale);
    fill(b, scale);
    dump(std::string(tag) + "_a", a);
    dump(std::string(tag) + "_b", b);
    auto both = [&](const char* op, auto by_operator, auto by_api) {
        auto x = c.get<T>(n), y = c.get<T>(n);
        by_operator(x);
        by_api(y);
        dump(std::string(tag) + "_" + op + "_op", x);
        dump(std::string(tag) + "_" + op + "_api", y);
    };
    if constexpr (!std::is_same_v<T, uint16_t>) {
        both("add", [&](LocalTensor<T>& d) { d = a + b; }, [&](LocalTensor<T>& d) { Add(d, a, b, n); });
        both("sub", [&](LocalTensor<T>& d) { d = a - b; }, [&](LocalTensor<T>& d) { Sub(d, a, b, n); });
        both("mul", [&](LocalTensor<T>& d) { d = a * b; }, [&](LocalTensor<T>& d) { Mul(d, a, b, n); });
    }
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, float>) {
        if (divide) both("div", [&](LocalTensor<T>& d) { d = a / b; }, [&](LocalTensor<T>& d) { Div(d, a, b, n); });
    }
    if constexpr (std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t>) {
        if (bitwise) {
            both("and", [&](LocalTensor<T>& d) { d = a & b; }, [&](LocalTensor<T>& d) { And(d, a, b, n); });
            both("or", [&](LocalTensor<T>& d) { d = a | b; }, [&](LocalTensor<T>& d) { Or(d, a, b, n); });
        }
    }
}

// The comparisons: src0.GetSize() elements into a bit mask, against Compare.
template <typename T>
static void compare(const char* tag) {
    Case c;
    const uint32_t n = 256;
    auto a = c.get<T>(n), b = c.get<T>(n);
    fill(a, 4);
    for (uint32_t i = 0; i < n; ++i) b.SetValue(i, i % 3 == 0 ? a.GetValue(i) : T(rnd() * 4));
    dump(std::string(tag) + "_a", a);
    dump(std::string(tag) + "_b", b);
    const char* names[] = {"lt", "gt", "eq", "le", "ge", "ne"};
    for (int m = 0; m < 6; ++m) {
        auto x = c.get<uint8_t>(n / 8), y = c.get<uint8_t>(n / 8);
        switch (CMPMODE(m)) {
            case CMPMODE::LT: x = a < b; break;
            case CMPMODE::GT: x = a > b; break;
            case CMPMODE::EQ: x = a == b; break;
            case CMPMODE::LE: x = a <= b; break;
            case CMPMODE::GE: x = a >= b; break;
            case CMPMODE::NE: x = a != b; break;
        }
        Compare(y, a, b, CMPMODE(m), n);
        dump(std::string(tag) + "_" + names[m] + "_op", x);
        dump(std::string(tag) + "_" + names[m] + "_api", y);
    }
}

// dst longer than its sources: the operator computes dst's length, so it reads past src1's
// buffer, a fault at the operator's line.
static void faults() {
    Case c;
    auto a = c.get<float>(64), b = c.get<float>(64), d = c.get<float>(128);
    fill(a, 1);
    fill(b, 1);
    try {
        std::printf("EXPECT\tub-out-of-bounds\t%d\n", __LINE__ + 1);
        d = a + b;
    } catch (const sage::sim::KernelAbort&) {
        std::printf("ABORT\n");
    }
}

int main(int argc, char** argv) {
    std::vector<uint8_t> ub(sage::sim::rt().ub_bytes), init(sage::sim::rt().ub_bytes);
    auto& blk = sage::sim::blk();
    blk.ub = ub.data();
    blk.ub_init = init.data();
    if (argc != 2) return 2;
    g_out = argv[1];
    sage::sim::rt().tracing = false;
    try {
        arith<half>("half", 8, true, false);
        arith<float>("float", 8, true, false);
        arith<int16_t>("i16", 3000, false, true);
        arith<int32_t>("i32", 30000, false, false);
        arith<uint16_t>("u16", 30000, false, true);
        compare<half>("cmp_half");
        compare<float>("cmp_float");
        std::printf("CLEAN\t%zu\n", sage::sim::rt().faults.size());
        faults();
    } catch (const sage::sim::KernelAbort& e) {
        std::printf("UNEXPECTED ABORT %s\n", e.code);
        return 1;
    }
    for (auto& f : sage::sim::rt().faults) std::printf("FAULT\t%s\t%d\t%s\n", f.code.c_str(), f.line, f.message.c_str());
    return 0;
}
