"""One C++ driver per API test module: its functions run the emulated APIs outside a launch and
dump raw outputs (<out>/<name>.bin) that the Python side checks against numpy. Fault cases print
"EXPECT<TAB>code<TAB>line" before the call meant to provoke one; every finding is printed at the
end as "FAULT<TAB>code<TAB>line<TAB>message". This module holds what every such driver shares:
the C++ prelude and main(), building and running it, and reading what it left."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from sage_npu.npu_eval.build import compile_flags
from sage_npu.npu_eval.chips import chip_profile

PRELUDE = r"""#include "kernel_operator.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace AscendC;

static std::string g_out;
static void write_raw(const std::string& name, const void* p, size_t bytes) {
    FILE* f = std::fopen((g_out + "/" + name + ".bin").c_str(), "wb");
    if (!f) std::exit(2);
    if (bytes) std::fwrite(p, 1, bytes, f);
    std::fclose(f);
}
template <typename T>
static void dump(const std::string& name, const LocalTensor<T>& t, uint32_t n) {
    write_raw(name, t.data(), size_t(n) * sizeof(T));
}
template <typename T, class F>
static void fill(const LocalTensor<T>& t, uint32_t n, F f) {
    for (uint32_t i = 0; i < n; ++i) t.data()[i] = T(f(i));
    sage::sim::ub_mark(t.range(n));
}
static void expect(const char* code, int line) { std::printf("EXPECT\t%s\t%d\n", code, line); }
// n zeroed elements of T registered as a GM buffer named `name` (what a launch's tensors are).
template <typename T>
static T* gm_alloc(const char* name, size_t n) {
    T* p = new T[n]();
    sage::sim::rt().gm.push_back(sage::sim::GmBuffer{reinterpret_cast<uint8_t*>(p), n * sizeof(T), 0, name, nullptr});
    return p;
}
"""


# A UB tensor of n elements from a LocalMemAllocator, its allocation rounded up to whole 32-byte
# blocks (each starts on one): what the advanced-API drivers' helpers below build on.
_UB_ALLOC = r"""
template <typename T>
static LocalTensor<T> al(LocalMemAllocator<Hardware::UB>& a, uint32_t n) {
    auto t = a.Alloc<T>((n * uint32_t(sizeof(T)) + 31) / 32 * 32 / uint32_t(sizeof(T)));
    t.SetSize(n);
    return t;
}
"""

# Helpers the advanced-API drivers share (append to PRELUDE): al(), an input filled by f(i) and
# dumped, a list of sizes dumped.
ADV_HELPERS = _UB_ALLOC + r"""
template <typename T, class F>
static LocalTensor<T> input(LocalMemAllocator<Hardware::UB>& a, const char* name, uint32_t n, F f) {
    auto t = al<T>(a, n);
    fill(t, n, f);
    dump(name, t, n);
    return t;
}
static void sizes_out(const char* name, const std::vector<uint32_t>& v) { write_raw(name, v.data(), v.size() * 4); }
"""

# The same with input() filling a fixed pattern times `scale` (the normalization and activation drivers).
UB_HELPERS = _UB_ALLOC + r"""
template <typename T>
static LocalTensor<T> input(LocalMemAllocator<Hardware::UB>& a, const char* name, uint32_t n, float scale,
                            int shift = 0) {
    auto t = al<T>(a, n);
    fill(t, n, [&](uint32_t i) { return float(int((i * 37u + uint32_t(shift)) % 101u) - 50) * scale; });
    dump(name, t, n);
    return t;
}
"""


def main_calling(*calls: str) -> str:
    """The driver's main(): one block's UB, then each call (a C++ statement) in order; a fault
    that aborts ends the calls, and every finding is printed."""
    body = "\n".join(f"        {c}" for c in calls)
    return f"""
int main(int argc, char** argv) {{
    std::vector<uint8_t> ub(sage::sim::local_bytes()), init(sage::sim::local_bytes());
    auto& blk = sage::sim::blk();
    blk.ub = ub.data();
    blk.ub_init = init.data();
    if (argc != 2) return 2;
    g_out = argv[1];
    try {{
{body}
    }} catch (const sage::sim::KernelAbort& e) {{
        std::printf("ABORT\\t%s\\n", e.code);
    }}
    for (auto& f : sage::sim::rt().faults)
        std::printf("FAULT\\t%s\\t%d\\t%s\\n", f.code.c_str(), f.line, f.message.c_str());
    return 0;
}}
"""


class Run:
    """What one driver run left: its dumps, its stdout and its source (for line checks)."""

    def __init__(self, folder: Path, stdout: str, source: Path):
        self.folder, self.stdout, self.source = folder, stdout, source

    def __call__(self, name: str, dtype) -> np.ndarray:
        return np.fromfile(self.folder / f"{name}.bin", dtype=dtype)

    def rows(self, tag: str) -> list[list[str]]:
        return [line.split("\t") for line in self.stdout.splitlines() if line.startswith(tag + "\t")]


def build_and_run(root: Path, source_text: str) -> Run:
    """Compile the driver for 910B2 with the evaluator's flags and run it once; it must neither
    fail to build nor abort."""
    source = root / "driver.cpp"
    source.write_text(source_text)
    binary = root / "driver"
    flags = compile_flags(chip_profile("910B2"), "-O1", {})
    build = subprocess.run(["g++", *flags, str(source), "-o", str(binary)], capture_output=True, text=True,
                           timeout=300)
    assert build.returncode == 0, build.stderr
    out = root / "out"
    out.mkdir()
    done = subprocess.run([str(binary), str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ABORT" not in done.stdout, done.stdout
    return Run(out, done.stdout, source)
