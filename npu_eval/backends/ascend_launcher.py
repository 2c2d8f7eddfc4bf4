"""The device launcher: one C++ translation unit that includes the user's kernel and launches
its entry with `<<<block_dim, nullptr, stream>>>` through ACL, compiled by bisheng `-xasc`.

It is the device twin of the emulator's harness (harness.py): it reads the same manifest
(run.write_manifest: block_dim, buffers, scalars, tiling fields), so one binary serves every
trial, and writes each output buffer to `out_<arg>.bin` and `done` where the compare stage
looks. The ACL calls are the ones asc-devkit's samples make (aclInit, aclrtSetDevice,
aclrtCreateStream, aclrtMalloc, aclrtMemcpy, aclrtSynchronizeStream, aclrtFree, ...); a failed
call prints its name and error code and exits 2, which the backend turns into a
runtime_error at the entry. Tiling fields are assigned under `#line` directives pointing at
the host.py line that set them, so a wrong field name is a compiler error there.
"""

from __future__ import annotations

import json

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.harness import HarnessError
from sage_npu.npu_eval.launch_plan import LaunchArg, ScalarArg, TensorArg, TilingArg
from sage_npu.npu_eval.signature import Entry

LAUNCHER_NAME = "sage_launcher.cpp"
EXIT_ACL_FAILED = 2  # an ACL call returned an error (the device fault's code is on stderr)

_PRELUDE = r"""
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>
#include "acl/acl.h"

namespace sage_dev {
struct Buffer { std::string role; size_t bytes = 0; std::string path; void* device = nullptr; };
struct Manifest {
    uint32_t block_dim = 1;
    std::string outdir;
    std::map<int, Buffer> buffers;
    std::map<int, std::string> scalars;
    std::map<int, std::map<std::string, std::string>> tiling;
};
inline Manifest load(const char* path) {
    Manifest m;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, '\t')) f.push_back(cell);
        if (f.size() >= 2 && f[0] == "block_dim") m.block_dim = std::stoul(f[1]);
        else if (f.size() >= 2 && f[0] == "outdir") m.outdir = f[1];
        else if (f.size() >= 6 && f[0] == "buffer") m.buffers[std::stoi(f[1])] = Buffer{f[2], std::stoull(f[3]), f[5]};
        else if (f.size() >= 3 && f[0] == "scalar") m.scalars[std::stoi(f[1])] = f[2];
        else if (f.size() >= 4 && f[0] == "tiling") m.tiling[std::stoi(f[1])][f[2]] = f[3];
    }
    return m;
}
template <typename T> inline void assign(T& field, const std::string& text) {
    std::string t = text;
    if (t == "true" || t == "false") t = (t == "true") ? "1" : "0";
    double v = std::strtod(t.c_str(), nullptr);
    field = static_cast<T>(v);
}
template <typename T> inline T scalar(const std::string& text) { T v{}; assign(v, text); return v; }
inline std::vector<char> read_file(const std::string& path, size_t bytes) {
    std::vector<char> data(bytes);
    std::ifstream in(path, std::ios::binary);
    in.read(data.data(), static_cast<std::streamsize>(bytes));
    return data;
}
}  // namespace sage_dev

#define SAGE_ACL(call) do { aclError sage_e = (call); if (sage_e != ACL_SUCCESS) { \
    std::fprintf(stderr, "sage-npu launcher: %s failed: ACL error %d\n", #call, static_cast<int>(sage_e)); \
    std::exit(EXIT_CODE); } } while (0)
""".replace("EXIT_CODE", str(EXIT_ACL_FAILED))


def _c_string(s: str) -> str:
    return json.dumps(s)  # a JSON string literal is a valid C string literal for paths


def _argument(i: int, arg: LaunchArg, entry: Entry, lines: list[str], launch: tuple[str, int]) -> str:
    """Append what argument i needs before the launch to `lines`; its text in the launch."""
    param = entry.params[i]
    if isinstance(arg, TensorArg):
        if not param.pointer:
            raise HarnessError(f"argument {i} is a tensor but parameter '{param.type} {param.name}' is not a GM "
                               "address (GM_ADDR or T*)", *launch)
        return f"({param.type})m.buffers[{i}].device"
    if isinstance(arg, ScalarArg):
        if param.pointer:
            raise HarnessError(f"argument {i} is a number but parameter '{param.name}' is a GM address", *launch)
        return f"sage_dev::scalar<{param.type}>(m.scalars[{i}])"
    if not isinstance(arg, TilingArg):
        raise HarnessError(f"argument {i}: unknown kind {type(arg).__name__}")
    ttype = arg.type or entry.tiling_type or (None if param.pointer else param.type)
    if not ttype:
        raise HarnessError(f"parameter '{param.name}' takes the tiling through GM (GET_TILING_DATA) but its struct "
                           "type is unknown: add REGISTER_TILING_DEFAULT(YourTilingData) in the kernel, or pass "
                           "Tiling(type=\"YourTilingData\", ...)", arg.file, arg.line)
    var = f"sage_tiling_{i}"
    lines.append(f"    {ttype} {var}{{}};")
    for name in arg.fields:
        lines.append(f"#line {arg.line or 1} {_c_string(arg.file or '')}")
        lines.append(f"    sage_dev::assign({var}.{name}, m.tiling[{i}][{_c_string(name)}]);")
    lines.append(f"#line 1 {_c_string(LAUNCHER_NAME)}")
    if not param.pointer:
        return var
    lines += [f"    void* {var}_gm = nullptr;",
              f"    SAGE_ACL(aclrtMalloc(&{var}_gm, sizeof({var}), ACL_MEM_MALLOC_HUGE_FIRST));",
              f"    SAGE_ACL(aclrtMemcpy({var}_gm, sizeof({var}), &{var}, sizeof({var}), ACL_MEMCPY_HOST_TO_DEVICE));"]
    return f"({param.type}){var}_gm"


_MAIN_HEAD = """\
int main(int argc, char** argv) {
    if (argc < 2) { std::fprintf(stderr, "usage: launcher MANIFEST\\n"); return 4; }
    sage_dev::Manifest m = sage_dev::load(argv[1]);
    SAGE_ACL(aclInit(nullptr));
    SAGE_ACL(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    SAGE_ACL(aclrtCreateStream(&stream));
    for (auto& [index, b] : m.buffers) {
        size_t size = b.bytes ? b.bytes : 32;
        SAGE_ACL(aclrtMalloc(&b.device, size, ACL_MEM_MALLOC_HUGE_FIRST));
        std::vector<char> host = sage_dev::read_file(b.path, b.bytes);
        if (b.bytes) SAGE_ACL(aclrtMemcpy(b.device, size, host.data(), b.bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    }
"""

_MAIN_TAIL = """\
    SAGE_ACL(aclrtSynchronizeStream(stream));
    for (auto& [index, b] : m.buffers) {
        if (b.role == "out" && b.bytes) {
            std::vector<char> host(b.bytes);
            SAGE_ACL(aclrtMemcpy(host.data(), b.bytes, b.device, b.bytes, ACL_MEMCPY_DEVICE_TO_HOST));
            std::ofstream(m.outdir + "/OUTPUT_PREFIX" + std::to_string(index) + ".bin", std::ios::binary)
                .write(host.data(), static_cast<std::streamsize>(b.bytes));
        }
        SAGE_ACL(aclrtFree(b.device));
    }
    SAGE_ACL(aclrtDestroyStream(stream));
    SAGE_ACL(aclrtResetDevice(0));
    SAGE_ACL(aclFinalize());
    std::ofstream(m.outdir + "/DONE") << "ok\\n";
    return 0;
}
""".replace("OUTPUT_PREFIX", protocol.OUTPUT_PREFIX).replace("DONE", protocol.DONE)


def generate(kernel: str, entry: Entry, kernel_call: str, args: list[LaunchArg], launch_file: str,
             launch_line: int) -> str:
    """The launcher for `entry` called as host.py named it (`kernel_call` may carry template
    arguments), with trial 0's argument kinds; values come from each trial's manifest."""
    if len(args) != len(entry.params):
        raise HarnessError(
            f"Launch passes {len(args)} arguments but {entry.qualified} takes {len(entry.params)} "
            f"({', '.join(p.type + ' ' + p.name for p in entry.params)})", launch_file, launch_line)
    setup: list[str] = []
    call = [_argument(i, a, entry, setup, (launch_file, launch_line)) for i, a in enumerate(args)]
    return "\n".join([
        "// Generated by sage-npu: the device launcher for one kernel entry. Do not edit.",
        _PRELUDE,
        f"#include {_c_string(kernel)}",
        f"#line 1 {_c_string(LAUNCHER_NAME)}",
        _MAIN_HEAD,
        *setup,
        f"    {kernel_call}<<<m.block_dim, nullptr, stream>>>({', '.join(call)});",
        _MAIN_TAIL,
    ])
