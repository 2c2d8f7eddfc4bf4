// Drives the emulator's vector API families outside a kernel launch: every case fills UB
// tensors with deterministic inputs, runs the ops in their count and mask/repeat forms, and
// dumps inputs and outputs as raw files (<out>/<case>.bin) for test_sim_vector_ops.py to
// check against numpy/torch. Fault cases print "FAULT<TAB>code<TAB>line" for each finding
// and "EXPECT<TAB>code<TAB>line" for each one the case meant to provoke.
//
// usage: vector_ops OUTDIR            run every case
//        vector_ops --bench N REPS    time Add on N halves, print Melem/s
#include "kernel_operator.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

using namespace AscendC;

static std::string g_out;

static void write_raw(const std::string& name, const void* p, size_t bytes) {
    std::string path = g_out + "/" + name + ".bin";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        std::perror(path.c_str());
        std::exit(2);
    }
    if (bytes) std::fwrite(p, 1, bytes, f);
    std::fclose(f);
}
template <typename T>
static void dump(const std::string& name, const LocalTensor<T>& t, uint32_t n) {
    write_raw(name, t.data(), size_t(n) * sizeof(T));
}

// One case's UB: a TPipe and a TBuf per tensor, released when the case ends.
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

static uint32_t g_seed = 12345;
static float rnd() {  // uniform in [-1, 1)
    g_seed = g_seed * 1664525u + 1013904223u;
    return float(int32_t(g_seed >> 8) - (1 << 23)) / float(1 << 23);
}
// Fills every element of t (its whole buffer) through SetValue, so it counts as written.
template <typename T, class F>
static void fill(const LocalTensor<T>& t, F f) {
    for (uint32_t i = 0; i < t.GetSize(); ++i) t.SetValue(i, T(f(i)));
}
static void expect(const char* code, int line) { std::printf("EXPECT\t%s\t%d\n", code, line); }

// ---------------------------------------------------------------- binary

template <typename T>
static void binary_count(const char* tag, float scale) {
    Case c;
    const uint32_t n = 1000, cap = 1024;
    auto a = c.get<T>(cap), b = c.get<T>(cap);
    fill(a, [&](uint32_t) { return rnd() * scale; });
    fill(b, [&](uint32_t) { float v = rnd() * scale; return v == 0 ? 1.0f : v; });
    dump(std::string(tag) + "_a", a, cap);
    dump(std::string(tag) + "_b", b, cap);
    auto run = [&](const char* op, auto fn) {
        auto d = c.get<T>(cap);
        Duplicate(d, T(7), int32_t(cap));  // the sentinel past `n` must survive
        fn(d);
        dump(std::string(tag) + "_" + op, d, cap);
    };
    run("add", [&](auto& d) { Add(d, a, b, n); });
    run("sub", [&](auto& d) { Sub(d, a, b, n); });
    run("mul", [&](auto& d) { Mul(d, a, b, n); });
    run("max", [&](auto& d) { Max(d, a, b, n); });
    run("min", [&](auto& d) { Min(d, a, b, n); });
    if constexpr (std::is_same<T, half>::value || std::is_same<T, float>::value) {
        run("div", [&](auto& d) { Div(d, a, b, n); });
        run("addrelu", [&](auto& d) { AddRelu(d, a, b, n); });
    }
    if constexpr (std::is_same<T, int16_t>::value) {
        run("and", [&](auto& d) { And(d, a, b, n); });
        run("or", [&](auto& d) { Or(d, a, b, n); });
    }
    // In place: dst is src0.
    Add(a, a, b, n);
    dump(std::string(tag) + "_inplace", a, cap);
}

static void binary_masked() {
    Case c;
    // half: bit mask, 3 repeats, non-default block and repeat strides on every operand.
    auto a = c.get<half>(4096), b = c.get<half>(4096), d = c.get<half>(4096);
    fill(a, [](uint32_t) { return rnd() * 4; });
    fill(b, [](uint32_t) { return rnd() * 4; });
    Duplicate(d, half(-3.0f), 4096);
    uint64_t mask[2] = {0x5555555555555555ull, 0xF0F0F0F00000FFFFull};
    Add(d, a, b, mask, 3, {2, 1, 3, 20, 8, 24});
    dump("bm_half_a", a, 4096);
    dump("bm_half_b", b, 4096);
    dump("bm_half_add", d, 4096);

    // float: continuous mask of 37, 4 repeats.
    auto fa = c.get<float>(2048), fb = c.get<float>(2048), fd = c.get<float>(2048);
    fill(fa, [](uint32_t) { return rnd() * 4; });
    fill(fb, [](uint32_t) { return rnd() * 4; });
    Duplicate(fd, -3.0f, 2048);
    Mul(fd, fa, fb, 37, 4, {1, 2, 1, 8, 16, 9});
    dump("bm_float_a", fa, 2048);
    dump("bm_float_b", fb, 2048);
    dump("bm_float_mul", fd, 2048);

    // Counter mode with isSetMask = false: 150 elements, whatever the repeat argument says.
    auto cd = c.get<float>(256);
    Duplicate(cd, -3.0f, 256);
    SetMaskCount();
    SetVectorMask<float>(0, 150);
    Add<float, false>(cd, fa, fb, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
    SetMaskNorm();
    ResetMask();
    dump("bm_counter_add", cd, 256);

    // Normal mode with isSetMask = false: the mask SetVectorMask left, on 2 repeats.
    auto nd = c.get<half>(512);
    Duplicate(nd, half(-3.0f), 512);
    SetVectorMask<half>(0x8000000000000001ull, 0x00000000FFFF0000ull);
    Sub<half, false>(nd, a, b, MASK_PLACEHOLDER, 2, {1, 1, 1, 8, 8, 8});
    ResetMask();
    dump("bm_norm_sub", nd, 512);

    // AscendCUtils::SetMask(len): 37 elements; 8 (one block of floats) sets the whole mask;
    // isSetMask = false leaves the mask alone.
    auto ud = c.get<float>(192);
    Duplicate(ud, -3.0f, 192);
    AscendCUtils::SetMask<float>(37);
    Add<float, false>(ud, fa, fb, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
    AscendCUtils::SetMask<float>(8);
    AscendCUtils::SetMask<float, false>(3);
    Add<float, false>(ud[64], fa[64], fb[64], MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
    AscendCUtils::SetMask<float>(0, 0x5ull);
    Add<float, false>(ud[128], fa[128], fb[128], MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
    ResetMask();
    dump("bm_utils_add", ud, 192);
    std::printf("UTILS\t%d\t%d\t%d\t%d\n", AscendCUtils::GetBitSize(4), AscendCUtils::GetC0Size(),
                AscendCUtils::GetC0Count(2), AscendCUtils::GetDefaultBlockNum());
}

// ---------------------------------------------------------------- unary and scalar

template <typename T>
static void unary_count(const char* tag) {
    Case c;
    const uint32_t n = 777, cap = 1024;
    auto x = c.get<T>(cap), p = c.get<T>(cap);
    fill(x, [](uint32_t i) { return i % 97 == 0 ? 0.0f : rnd() * 6; });
    fill(p, [](uint32_t) { return rnd() * 4 + 4.01f; });  // positive, for Ln/Sqrt/Rsqrt
    dump(std::string(tag) + "_x", x, cap);
    dump(std::string(tag) + "_p", p, cap);
    auto run = [&](const char* op, auto fn) {
        auto d = c.get<T>(cap);
        Duplicate(d, T(7), int32_t(cap));
        fn(d);
        dump(std::string(tag) + "_" + op, d, cap);
    };
    run("exp", [&](auto& d) { Exp(d, x, n); });
    run("ln", [&](auto& d) { Ln(d, p, n); });
    run("abs", [&](auto& d) { Abs(d, x, n); });
    run("sqrt", [&](auto& d) { Sqrt(d, p, n); });
    run("rsqrt", [&](auto& d) { Rsqrt(d, p, n); });
    run("recip", [&](auto& d) { Reciprocal(d, p, n); });
    run("relu", [&](auto& d) { Relu(d, x, n); });
    run("adds", [&](auto& d) { Adds(d, x, T(1.25f), n); });
    run("muls", [&](auto& d) { Muls(d, x, T(-0.3f), n); });
    run("maxs", [&](auto& d) { Maxs(d, x, T(0.5f), n); });
    run("mins", [&](auto& d) { Mins(d, x, T(0.5f), n); });
    run("lrelu", [&](auto& d) { LeakyRelu(d, x, T(0.01f), n); });
}

static void unary_misc() {
    Case c;
    // Exp on floats with a bit mask and strides; Abs on halves with a continuous mask.
    auto x = c.get<float>(2048), d = c.get<float>(2048);
    fill(x, [](uint32_t) { return rnd() * 3; });
    Duplicate(d, -3.0f, 2048);
    uint64_t m1[1] = {0xFFFF00000000FFFFull};
    Exp(d, x, m1, 3, {2, 1, 16, 8});
    dump("um_exp_x", x, 2048);
    dump("um_exp", d, 2048);
    auto hx = c.get<half>(2048), hd = c.get<half>(2048);
    fill(hx, [](uint32_t) { return rnd() * 3; });
    Duplicate(hd, half(-3.0f), 2048);
    Abs(hd, hx, 100, 2, {1, 2, 8, 16});
    dump("um_abs_x", hx, 2048);
    dump("um_abs", hd, 2048);
    auto md = c.get<half>(2048);
    Duplicate(md, half(-3.0f), 2048);
    Muls(md, hx, half(2.5f), 64, 3, {1, 1, 10, 8});
    dump("um_muls", md, 2048);
    // Integers: Not on int16, Relu/Adds/Muls on int32.
    auto i16 = c.get<int16_t>(256), o16 = c.get<int16_t>(256);
    fill(i16, [](uint32_t i) { return int(i * 977 % 65536) - 32768; });
    Not(o16, i16, 256);
    dump("um_not_x", i16, 256);
    dump("um_not", o16, 256);
    auto i32 = c.get<int32_t>(256), o32 = c.get<int32_t>(256), q32 = c.get<int32_t>(256);
    fill(i32, [](uint32_t i) { return int64_t(i) * 16777259 - 2000000000; });
    Relu(o32, i32, 256);
    dump("um_i32_x", i32, 256);
    dump("um_i32_relu", o32, 256);
    Adds(q32, i32, int32_t(2000000000), 256);  // wraps
    dump("um_i32_adds", q32, 256);
}

static void axpy() {
    Case c;
    auto hx = c.get<half>(512), hd = c.get<half>(512);
    fill(hx, [](uint32_t) { return rnd() * 4; });
    fill(hd, [](uint32_t) { return rnd() * 4; });
    dump("ax_hx", hx, 512);
    dump("ax_hd0", hd, 512);
    Axpy(hd, hx, half(0.75f), 500);
    dump("ax_hh", hd, 512);
    auto fx = c.get<float>(512), fd = c.get<float>(512);
    fill(fx, [](uint32_t) { return rnd() * 4; });
    fill(fd, [](uint32_t) { return rnd() * 4; });
    dump("ax_fx", fx, 512);
    dump("ax_fd0", fd, 512);
    Axpy(fd, fx, 0.75f, 500);
    dump("ax_ff", fd, 512);
    auto md = c.get<float>(512);
    fill(md, [](uint32_t) { return rnd() * 4; });
    dump("ax_md0", md, 512);
    Axpy(md, hx, half(-1.5f), 300);  // float dst, half src
    dump("ax_fh", md, 512);
    auto kd = c.get<float>(512);
    fill(kd, [](uint32_t) { return rnd() * 4; });
    dump("ax_kd0", kd, 512);
    Axpy(kd, hx, half(2.0f), 40, 3, {1, 1, 8, 4});  // 64 elements per repeat, src half in 4-block steps
    dump("ax_fh_masked", kd, 512);
}

static void fill_ops() {
    Case c;
    auto d = c.get<half>(1024);
    Duplicate(d, half(0.0f), 1024);
    Duplicate(d, half(2.5f), 300);
    dump("dup_count", d, 1024);
    auto m = c.get<float>(1024);
    Duplicate(m, 0.0f, 1024);
    Duplicate(m, -1.5f, 20, 3, 2, 24);
    dump("dup_masked", m, 1024);
    auto bf = c.get<bfloat16_t>(64);
    Duplicate(bf, bfloat16_t(3.0f), 64);
    dump("dup_bf16", bf, 64);
    // Brcb: 8 elements per repeat, each spread over one 32-byte block.
    auto s = c.get<float>(64), b = c.get<float>(1024);
    fill(s, [](uint32_t i) { return float(i) + 0.5f; });
    Duplicate(b, 0.0f, 1024);
    Brcb(b, s, 3, {2, 24});
    dump("brcb_f", b, 1024);
    auto hs = c.get<half>(64), hb = c.get<half>(512);
    fill(hs, [](uint32_t i) { return float(i) - 4; });
    Duplicate(hb, half(0.0f), 512);
    Brcb(hb, hs, 2, {1, 8});
    dump("brcb_h", hb, 512);
    auto vi = c.get<int32_t>(256);
    auto vf = c.get<float>(256);
    CreateVecIndex(vi, int32_t(5), 200);
    dump("vidx_i32", vi, 200);
    Duplicate(vf, -1.0f, 256);
    CreateVecIndex(vf, 0.5f, uint64_t(10), 2, 1, 8);
    dump("vidx_f_masked", vf, 256);
}

// ---------------------------------------------------------------- Cast

// Values where rounding modes disagree: ties, negatives, halfway points in half/bf16,
// overflow, subnormals, NaN/inf, and plain random ones.
static std::vector<float> tricky_floats() {
    std::vector<float> v = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.5f, -3.5f, 0.49999997f, -0.49999997f,
                            1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, -(1.0f + 1.0f / 2048), -(1.0f + 3.0f / 2048),
                            1.0f + 1.0f / 4096, 1.0f + 5.0f / 8192, 65504.0f, 65519.0f, 65520.0f, 65536.0f, 1e6f,
                            -65520.0f, -1e6f, 6e-8f, 3e-8f, 1e-7f, -6e-8f, 2.9802322e-8f, 1e-30f, -1e-30f,
                            0.0f, -0.0f, 127.5f, 128.0f, -128.5f, -129.0f, 255.5f, 256.0f, 1.0f + 1.0f / 256,
                            1.0f + 3.0f / 256, 2147483520.0f, 3e9f, -3e9f, 1e-40f, std::nanf(""),
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            33000.5f, -33000.5f, 4097.0f, 4099.0f, 12345.678f};
    while (v.size() < 256) v.push_back(rnd() * (v.size() % 3 == 0 ? 300.0f : 3.0f));
    return v;
}

template <typename T, typename U>
static void cast_all_modes(Case& c, const char* tag, const LocalTensor<U>& src, uint32_t n, uint32_t modes) {
    for (int m = 0; m < 7; ++m) {
        if (!(modes & (1u << m))) continue;
        auto d = c.get<T>(n);
        Cast(d, src, RoundMode(m), n);
        dump(std::string("cast_") + tag + "_m" + std::to_string(m), d, n);
    }
}

static void casts() {
    Case c;
    const uint32_t n = 256;
    std::vector<float> tf = tricky_floats();
    auto f = c.get<float>(n);
    fill(f, [&](uint32_t i) { return tf[i]; });
    dump("cast_f_src", f, n);
    const uint32_t R = 0x3e, ALL = 0x7f;  // RINT..TRUNC, and every mode
    cast_all_modes<half>(c, "f2h", f, n, ALL);
    cast_all_modes<int32_t>(c, "f2i32", f, n, R);
    cast_all_modes<int16_t>(c, "f2i16", f, n, R);
    cast_all_modes<bfloat16_t>(c, "f2bf", f, n, R);
    cast_all_modes<float>(c, "f2f", f, n, R);

    // half sources: ties at integers and past int8/uint8 range.
    auto h = c.get<half>(n);
    fill(h, [&](uint32_t i) {
        static const float hv[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 127.5f, 128.0f, -128.5f, -129.0f,
                                   255.5f, 256.0f, -1.0f, 1000.0f, 65504.0f, -65504.0f, 0.25f, -0.75f};
        return i < 18 ? hv[i] : rnd() * 200;
    });
    dump("cast_h_src", h, n);
    cast_all_modes<float>(c, "h2f", h, n, 1);
    cast_all_modes<int32_t>(c, "h2i32", h, n, R);
    cast_all_modes<int8_t>(c, "h2i8", h, n, R | 1);
    cast_all_modes<uint8_t>(c, "h2u8", h, n, R | 1);

    // integer sources
    auto i32 = c.get<int32_t>(n);
    fill(i32, [](uint32_t i) {
        static const int64_t iv[] = {16777217, 16777219, -16777217, 33554435, 2147483647, -2147483647 - 1, 0, 1, -1,
                                     70000, -70000, 32767, 32768, -32769};
        return i < 14 ? iv[i] : int64_t(rnd() * 2e9);
    });
    dump("cast_i32_src", i32, n);
    cast_all_modes<float>(c, "i32f", i32, n, R | 1);
    cast_all_modes<int16_t>(c, "i32i16", i32, n, 1);
    auto i8 = c.get<int8_t>(n);
    fill(i8, [](uint32_t i) { return int(i) - 128; });
    dump("cast_i8_src", i8, n);
    cast_all_modes<half>(c, "i8h", i8, n, 1);
    auto u8 = c.get<uint8_t>(n);
    fill(u8, [](uint32_t i) { return int(i); });
    dump("cast_u8_src", u8, n);
    cast_all_modes<half>(c, "u8h", u8, n, 1);
    auto i16 = c.get<int16_t>(n);
    fill(i16, [](uint32_t i) { return i < 4 ? 2049 + 2 * int(i) : int(rnd() * 32767); });
    dump("cast_i16_src", i16, n);
    cast_all_modes<half>(c, "i16h", i16, n, R | 1);
    auto bf = c.get<bfloat16_t>(n);
    fill(bf, [&](uint32_t i) { return tf[i] > 3e9f || tf[i] < -3e9f ? 1.0f : tf[i]; });
    dump("cast_bf_src", bf, n);
    cast_all_modes<float>(c, "bf2f", bf, n, 1);
    cast_all_modes<int32_t>(c, "bf2i32", bf, n, R);

    // int32 -> half dequantises by SetDeqScale.
    auto q = c.get<int32_t>(64);
    auto qh = c.get<half>(64);
    fill(q, [](uint32_t i) { return int(i) * 37 - 1000; });
    SetDeqScale(half(0.125f));
    Cast(qh, q, RoundMode::CAST_NONE, 64);
    dump("cast_deq_src", q, 64);
    dump("cast_deq", qh, 64);

    // Mask form: float -> half, 64 per repeat, dst in half blocks with its own strides.
    auto mh = c.get<half>(1024);
    Duplicate(mh, half(-7.0f), 1024);
    Cast(mh, f, RoundMode::CAST_TRUNC, 48, 3, {2, 1, 12, 8});
    dump("cast_masked_f2h", mh, 1024);
}

// ---------------------------------------------------------------- Compare / Select

template <typename T>
static void compare_select(const char* tag) {
    Case c;
    const uint32_t n = 512;
    auto a = c.get<T>(n), b = c.get<T>(n);
    fill(a, [](uint32_t i) { return i % 5 == 0 ? 1.0f : float(int(rnd() * 4)); });
    fill(b, [](uint32_t i) { return i % 7 == 0 ? 1.0f : float(int(rnd() * 4)); });
    dump(std::string(tag) + "_a", a, n);
    dump(std::string(tag) + "_b", b, n);
    for (int m = 0; m < 6; ++m) {
        auto bits = c.get<uint8_t>(n / 8);
        Compare(bits, a, b, CMPMODE(m), n);
        dump(std::string(tag) + "_cmp" + std::to_string(m), bits, n / 8);
        auto sbits = c.get<uint8_t>(n / 8);
        Compares(sbits, a, T(1.0f), CMPMODE(m), n);
        dump(std::string(tag) + "_cmps" + std::to_string(m), sbits, n / 8);
    }
    auto bits = c.get<uint8_t>(n / 8);
    CompareScalar(bits, a, T(2.0f), CMPMODE::GE, n);
    dump(std::string(tag) + "_cmpscalar", bits, n / 8);
    // Select, count forms: tensor-tensor (mode 2), tensor-scalar (mode 1), per-repeat (mode 0).
    auto sel = c.get<uint8_t>(n / 8);
    fill(sel, [](uint32_t i) { return (i * 73 + 11) & 0xFF; });
    dump(std::string(tag) + "_sel", sel, n / 8);
    const uint32_t cnt = 300;  // Select takes any count
    auto d2 = c.get<T>(n), d1 = c.get<T>(n), d0 = c.get<T>(n);
    Duplicate(d2, T(-9.0f), int32_t(n));
    Duplicate(d1, T(-9.0f), int32_t(n));
    Duplicate(d0, T(-9.0f), int32_t(n));
    Select(d2, sel, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, cnt);
    Select(d1, sel, a, T(5.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, cnt);
    Select(d0, sel, a, b, SELMODE::VSEL_CMPMASK_SPR, cnt);
    dump(std::string(tag) + "_sel2", d2, n);
    dump(std::string(tag) + "_sel1", d1, n);
    dump(std::string(tag) + "_sel0", d0, n);
    // Mask forms of Compare (the mask is ignored; strides apply to the sources) and Select.
    auto mb = c.get<uint8_t>(64);
    Duplicate(mb.ReinterpretCast<int16_t>(), int16_t(0), 32);
    uint64_t full[2] = {~0ull, ~0ull};
    Compare(mb, a, b, CMPMODE::LT, full, 2, {1, 2, 1, 8, 8, 16});
    dump(std::string(tag) + "_cmp_masked", mb, 64);
    auto ms = c.get<T>(n);
    Duplicate(ms, T(-9.0f), int32_t(n));
    Select(ms, sel, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 20, 2, {1, 1, 1, 8, 8, 8});
    dump(std::string(tag) + "_sel_masked", ms, n);
    // Compare into CMPMASK, read it back, and Select mode 0 from the register.
    uint64_t lt[2] = {~0ull, ~0ull};
    Compare(a, b, CMPMODE::GT, lt, BinaryRepeatParams{});
    auto reg = c.get<uint8_t>(32);
    GetCmpMask(reg);
    dump(std::string(tag) + "_cmpmask", reg, 16);
    auto rs = c.get<T>(n);
    Duplicate(rs, T(-9.0f), int32_t(n));
    SetVectorMask<T>(0, 0xFFFFull);
    Select<T, SELMODE::VSEL_CMPMASK_SPR>(rs, a, b, 2, BinaryRepeatParams{});
    ResetMask();
    dump(std::string(tag) + "_sel_reg", rs, n);
}

static void compare_int32() {
    Case c;
    auto a = c.get<int32_t>(64), b = c.get<int32_t>(64);
    fill(a, [](uint32_t i) { return int(i % 3); });
    fill(b, [](uint32_t i) { return int(i % 2); });
    auto bits = c.get<uint8_t>(32);
    Compare(bits, a, b, CMPMODE::EQ, 64);
    dump("cmp_i32_a", a, 64);
    dump("cmp_i32_b", b, 64);
    dump("cmp_i32_eq", bits, 8);
}

// ---------------------------------------------------------------- reductions

template <typename T>
static void reductions(const char* tag) {
    Case c;
    const uint32_t cap = 4352;
    auto x = c.get<T>(cap), tmp = c.get<T>(cap), d = c.get<T>(64);
    fill(x, [](uint32_t i) { return rnd() * 2 + (i == 3001 ? 9.0f : 0.0f) - (i == 77 ? 9.0f : 0.0f); });
    dump(std::string(tag) + "_x", x, cap);
    for (uint32_t n : {1u, 7u, 129u, 1000u, 4097u}) {
        std::string s = std::string(tag) + "_" + std::to_string(n);
        Duplicate(d, T(0.0f), 64);
        ReduceSum(d, x, tmp, int32_t(n));
        dump(s + "_sum", d, 1);
        ReduceMax(d, x, tmp, int32_t(n), true);
        dump(s + "_max", d, 2);
        ReduceMin(d, x, tmp, int32_t(n), true);
        dump(s + "_min", d, 2);
    }
    // Mask form: continuous mask of 50 per repeat, 5 repeats, 16 blocks between repeats.
    ReduceMax(d, x, tmp, 50, 5, 16, true);
    dump(std::string(tag) + "_maxmask", d, 2);
    ReduceSum(d, x, tmp, 50, 5, 16);
    dump(std::string(tag) + "_summask", d, 1);

    // Per-repeat reductions.
    constexpr uint32_t epr = 256 / sizeof(T);
    auto w = c.get<T>(256);
    Duplicate(w, T(-5.0f), 256);
    WholeReduceSum(w, x, int32_t(epr - 3), 6, 2, 1, 8);
    dump(std::string(tag) + "_wsum", w, 256);
    Duplicate(w, T(-5.0f), 256);
    uint64_t mk[2] = {0x00FF00FF00FF00FFull, 0x1ull};
    WholeReduceMax(w, x, mk, 5, 1, 2, 16);
    dump(std::string(tag) + "_wmax_vi", w, 256);
    Duplicate(w, T(-5.0f), 256);
    WholeReduceMin(w, x, int32_t(epr), 4, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
    dump(std::string(tag) + "_wmin_v", w, 256);
    Duplicate(w, T(-5.0f), 256);
    ReduceRepeat<ReduceType::MAX, T>(w, x, int32_t(epr), 4, 1, 1, 8, ReduceOrder::ORDER_INDEX_VALUE);
    dump(std::string(tag) + "_rrmax_iv", w, 256);
    Duplicate(w, T(-5.0f), 256);
    ReduceRepeat<ReduceType::SUM, T>(w, x, int32_t(57), 13, 1, 1, 8);
    dump(std::string(tag) + "_rrsum57", w, 256);
    Duplicate(w, T(-5.0f), 256);
    BlockReduceSum(w, x, 3, int32_t(epr), 1, 1, 8);
    dump(std::string(tag) + "_bsum", w, 256);
    Duplicate(w, T(-5.0f), 256);
    BlockReduceMax(w, x, 2, int32_t(epr - 5), 2, 2, 16);
    dump(std::string(tag) + "_bmax", w, 256);
    Duplicate(w, T(-5.0f), 256);
    ReduceDataBlock<ReduceType::MIN, T>(w, x, int32_t(epr), 3, 1, 1, 8);
    dump(std::string(tag) + "_rdbmin", w, 256);
    Duplicate(w, T(-5.0f), 256);
    PairReduceSum(w, x, 2, int32_t(epr), 1, 1, 8);
    dump(std::string(tag) + "_psum", w, 256);
    Duplicate(w, T(-5.0f), 256);
    ReducePairElem<ReduceType::SUM, T>(w, x, int32_t(epr - 1), 2, 1, 1, 8);
    dump(std::string(tag) + "_rpe", w, 256);

    // The ReduceCustom sample's counter-mode chain (CANN 8 order: repeat before mask).
    Duplicate(w, T(-5.0f), 256);
    SetMaskCount();
    SetVectorMask<T>(0, 3 * epr + 11);
    WholeReduceSum<T, false>(tmp, x, MASK_PLACEHOLDER, 1, 1, 1, 8);
    SetVectorMask<T>(0, 4);
    WholeReduceSum<T, false>(w, tmp, MASK_PLACEHOLDER, 1, 1, 1, 8);
    SetMaskNorm();
    ResetMask();
    dump(std::string(tag) + "_counter_chain", w, 1);
}

static void reduce_overflow() {
    Case c;
    auto x = c.get<half>(128), d = c.get<half>(16);
    Duplicate(x, half(0.0f), 128);
    x.SetValue(0, half(60000.0f));
    x.SetValue(1, half(60000.0f));
    x.SetValue(2, half(-30000.0f));
    x.SetValue(3, half(100.0f));
    WholeReduceSum(d, x, 4, 1, 1, 1, 8);
    dump("red_overflow", d, 1);
}

// ---------------------------------------------------------------- faults

static void faults() {
    Case c;
    auto a = c.get<float>(256), b = c.get<float>(256), d = c.get<float>(256);
    fill(a, [](uint32_t) { return 1.0f; });
    // b is never written: a mask form reading it is an uninitialized read.
    expect("uninitialized-read", __LINE__ + 1);
    Add(d, a, b, 64, 1, {1, 1, 1, 8, 8, 8});
    auto bits = c.get<uint8_t>(64);
    expect("unaligned-copy", __LINE__ + 1);
    Compare(bits, a, a, CMPMODE::EQ, 100);
    auto i = c.get<int32_t>(64);
    fill(i, [](uint32_t k) { return int(k); });
    expect("dtype-unsupported", __LINE__ + 1);
    Compare(bits, i, i, CMPMODE::LT, 64);
    auto h = c.get<half>(64);
    Cast(h, a, RoundMode::CAST_ODD, 0);  // fine: float -> half takes CAST_ODD
    expect("dtype-unsupported", __LINE__ + 1);
    Cast(i, a, RoundMode::CAST_ODD, 64);  // float -> int32 does not
    try {
        // Repeat 3 with stride 8 reaches element 255 of a; 16 blocks between repeats runs past it.
        expect("ub-out-of-bounds", __LINE__ + 1);
        Add(d, a, a, 64, 3, {1, 1, 1, 8, 16, 8});
    } catch (const sage::sim::KernelAbort&) {
        std::printf("ABORT\n");
    }
}

static void print_faults() {
    for (auto& f : sage::sim::rt().faults) {
        std::printf("FAULT\t%s\t%d\t%s\n", f.code.c_str(), f.line, f.message.c_str());
    }
}

static int bench(uint32_t n, int reps) {
    Case c;
    auto x = c.get<half>(n), y = c.get<half>(n), z = c.get<half>(n);
    fill(x, [](uint32_t) { return rnd(); });
    fill(y, [](uint32_t) { return rnd(); });
    Add(z, x, y, int32_t(n));  // warm
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) Add(z, x, y, int32_t(n));
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%.3f\n", double(n) * reps / dt / 1e6);
    return 0;
}

int main(int argc, char** argv) {
    std::vector<uint8_t> ub(sage::sim::rt().ub_bytes), init(sage::sim::rt().ub_bytes);
    auto& blk = sage::sim::blk();
    blk.ub = ub.data();
    blk.ub_init = init.data();
    if (argc == 4 && std::string(argv[1]) == "--bench") {
        sage::sim::rt().tracing = true;  // as a kernel run records it
        return bench(uint32_t(std::atoi(argv[2])), std::atoi(argv[3]));
    }
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTDIR | --bench N REPS\n", argv[0]);
        return 2;
    }
    g_out = argv[1];
    sage::sim::rt().tracing = false;
    try {
        binary_count<half>("bin_half", 8);
        binary_count<float>("bin_float", 8);
        binary_count<int16_t>("bin_i16", 30000);
        binary_count<int32_t>("bin_i32", 2e9f);
        binary_masked();
        unary_count<half>("un_half");
        unary_count<float>("un_float");
        unary_misc();
        axpy();
        fill_ops();
        casts();
        compare_select<half>("cs_half");
        compare_select<float>("cs_float");
        compare_int32();
        reductions<half>("red_half");
        reductions<float>("red_float");
        reduce_overflow();
        std::printf("CLEAN\t%zu\n", sage::sim::rt().faults.size());
        faults();
    } catch (const sage::sim::KernelAbort& e) {
        std::printf("UNEXPECTED ABORT %s\n", e.code);
        print_faults();
        return 1;
    }
    print_faults();
    return 0;
}
