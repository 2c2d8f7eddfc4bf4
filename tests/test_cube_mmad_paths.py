"""The Mmad inner kernels agree to the bit (sage_sim/cube.h): the AVX2 kernel the emulator picks
where the CPU has it and the scalar one it falls back to, over random shapes (m, n and k tails
that are not whole fractals or vectors, GEMV's m = 1, a k1 rounded up as kDirectionAlign does),
every input type (half, bfloat16, float, int8, uint8, int4b_t) and every start of C (zero, the bias table,
accumulating onto L0C). The driver is built with the evaluator's flags at -O0, as a kernel is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sage_npu.npu_eval.build import compile_flags
from sage_npu.npu_eval.chips import chip_profile

CASES = 400

DRIVER = r"""#include "sage_sim/cube.h"

#include <cstdio>
#include <cstdlib>
#include <random>

using namespace sage::sim;

// Finite values of each type, exponents kept where no sum overflows (an overflow's NaN would
// make the comparison about NaN payloads, which no documented result depends on).
static void fill(uint8_t* p, uint32_t n, CubeType t, std::mt19937& g) {
    for (uint32_t x = 0; x < n; ++x) {
        uint32_t r = g();
        switch (t) {
            case CubeType::F16: {
                uint16_t h = uint16_t(r & 0xffff);
                if (((h >> 10) & 31) == 31) h &= 0xbfff;  // no inf or NaN: exponent 15 instead
                std::memcpy(p + 2 * x, &h, 2);
                break;
            }
            case CubeType::BF16: {
                uint16_t h = uint16_t((r & 0x807f) | ((r >> 16) % 150) << 7);  // below 2^23
                std::memcpy(p + 2 * x, &h, 2);
                break;
            }
            case CubeType::F32: {
                uint32_t u = (r & 0x807fffff) | ((r >> 7) % 130 + 60) << 23;  // 2^-67 .. 2^62
                if ((r & 15) == 0) u &= 0x80000000;                          // and some zeros
                std::memcpy(p + 4 * x, &u, 4);
                break;
            }
            default: p[x] = uint8_t(r); break;
        }
    }
}

int main(int argc, char** argv) {
    const int cases = std::atoi(argv[1]);
    std::mt19937 g(12345);
    std::vector<uint8_t> local(local_bytes()), init(local_bytes()), c0, scalar;
    const uint32_t A = mem_base(Mem::L0A), B = mem_base(Mem::L0B), C = mem_base(Mem::L0C), BT = mem_base(Mem::BT);
    const CubeType types[] = {CubeType::F16, CubeType::BF16, CubeType::F32, CubeType::S8, CubeType::U8, CubeType::S4};
    int differ = 0;
    for (int n = 0; n < cases; ++n) {
        MmadShape s{};
        s.in = types[g() % 6];
        const uint32_t esize = s.in == CubeType::F32 ? 4 : cube_integer(s.in) ? 1 : 2;  // int4b_t: bytes of pairs
        const uint32_t k0 = 256 / cube_bits(s.in);
        s.m = g() % 8 == 0 ? 1 : 1 + g() % 96, s.n = 1 + g() % 96, s.k = 1 + g() % (10 * k0);
        s.k1 = (s.k + k0 - 1) / k0 + g() % 2, s.init = int(g() % 3), s.bias = BT;
        const uint32_t M = (s.m + 15) / 16 * 16, N = (s.n + 15) / 16 * 16;
        fill(local.data() + A, M * s.k1 * 32 / esize, s.in, g);  // bytes: 32 a fractal row
        fill(local.data() + B, N * s.k1 * 32 / esize, s.in, g);
        const CubeType acc = esize == 1 ? CubeType::U8 : CubeType::F32;  // int32 start: any bits
        fill(local.data() + C, M * N * (acc == CubeType::U8 ? 4 : 1), acc, g);
        fill(local.data() + BT, N * (acc == CubeType::U8 ? 4 : 1), acc, g);
        c0.assign(local.begin() + C, local.begin() + C + M * N * 4);
        cube_mmad_kernel() = MmadKernel::Scalar;
        cube_mmad(local.data(), init.data(), C, A, B, s);
        scalar.assign(local.begin() + C, local.begin() + C + M * N * 4);
        std::copy(c0.begin(), c0.end(), local.begin() + C);
        cube_mmad_kernel() = MmadKernel::Avx2;
        cube_mmad(local.data(), init.data(), C, A, B, s);
        if (std::memcmp(scalar.data(), local.data() + C, M * N * 4) != 0) {
            std::printf("DIFFER\tm=%u n=%u k=%u k1=%u type=%d init=%d\n", s.m, s.n, s.k, s.k1, int(s.in), s.init);
            ++differ;
        }
        // the scalar result is not the start: the case computed something
        if (std::memcmp(scalar.data(), c0.data(), M * N * 4) == 0) std::printf("UNCHANGED\t%d\n", n);
    }
    cube_mmad_kernel() = MmadKernel::Auto;
    std::printf("AUTO\t%s\n", __builtin_cpu_supports("avx2") ? "avx2" : "scalar");
    std::printf("CASES\t%d\tDIFFER\t%d\n", cases, differ);
    return 0;
}
"""


def _avx2() -> bool:
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not _avx2(), reason="the AVX2 kernel needs a CPU with AVX2")
def test_avx2_and_scalar_mmad_give_the_same_bits(tmp_path):
    (tmp_path / "driver.cpp").write_text(DRIVER)
    flags = compile_flags(chip_profile("910B2"), "-O0", {})
    build = subprocess.run(["g++", *flags, "driver.cpp", "-o", "driver"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    done = subprocess.run([str(tmp_path / "driver"), str(CASES)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"CASES\t{CASES}\tDIFFER\t0" in lines, done.stdout[:2000]
    assert "AUTO\tavx2" in lines, "the emulator would not pick the AVX2 kernel on this CPU"
    unchanged = [line for line in lines if line.startswith("UNCHANGED")]
    assert len(unchanged) < CASES // 20, unchanged
