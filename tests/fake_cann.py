"""A fake CANN install for tests/test_backend_ascend.py: laid out as the 8.x toolkit is
(`bin/bisheng`, `tools/profiler/bin/msprof`, `tools/mssanitizer/bin/mssanitizer`,
`include/acl/acl.h`, `lib64/libascendcl.so`, `ascend_toolkit_install.info`) plus the driver's
`npu-smi`. Each fake accepts only the options the CANN documentation lists and prints or writes
what it shows (docs/device.md names the pages):

- bisheng (Python): clang's `file:line:col: error:` for `#error`, a missing header or -l
  library; otherwise its `-o` output is a fake device program (C, built with the system
  compiler) that reads our launcher's manifest, prints the ACL calls the launcher makes (and
  whether it ran inside the sandbox) on a `FAKE-ACL {...}` line, and computes the outputs as the
  device model says (`add`, `wrong`, or a `fault` printed as CANN's log prints an AI Core
  exception).
- msprof op [simulator] (shell: it runs in the sandbox, which as root hides Python's install):
  runs the program, then writes `OPPROF_<time>_<id>/OpBasicInfo.csv` and `PipeUtilization.csv`
  (or `simulator/core0.veccore0/core0.veccore0_code_exe.csv`) with the test's rows, in either
  header spelling.
- mssanitizer (shell): runs the program, then prints the memcheck report the test gives.
- npu-smi info (Python): the chip table with the test's chip name and health.

These prove the plumbing (flags, files, parsing, the report), not the device.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

_COMMON = r'''
import json, os, sys, subprocess
CONFIG = json.loads(open(CONFIG_PATH).read())

def fail(msg, code=1):
    print(msg, file=sys.stderr)
    sys.exit(code)

'''

_BISHENG = r'''
ARCHS = {"dav-2201", "dav-2002", "dav-3002", "dav-3510"}
args = sys.argv[1:]
out, sources, incs, libdirs, libs, arch, i = None, [], [], [], [], None, 0
while i < len(args):
    a = args[i]
    if a == "-o":
        out = args[i + 1]; i += 2; continue
    if a in ("-I", "-L"):
        (incs if a == "-I" else libdirs).append(args[i + 1]); i += 2; continue
    if a.startswith("--npu-arch="):
        arch = a.split("=", 1)[1]
    elif a.startswith("-I"):
        incs.append(a[2:])
    elif a.startswith("-L"):
        libdirs.append(a[2:])
    elif a.startswith("-l"):
        libs.append(a[2:])
    elif a in ("-xasc", "-std=c++17", "-fPIC", "-O0", "-O1", "-O2", "-O3", "-g", "--sanitizer", "-c", "-shared") \
            or a.startswith("-D") or a.startswith("-Wl,"):
        pass
    elif a.startswith("-"):
        fail(f"bisheng: error: unknown argument: '{a}'")
    else:
        sources.append(a)
    i += 1
# bisheng -xasc finds the Ascend C headers of its own install without -I
incs.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compiler", "tikcpp", "include"))
if arch not in ARCHS:
    fail(f"bisheng: error: unsupported --npu-arch: '{arch}'" if arch else "bisheng: error: -xasc needs --npu-arch")
if len(sources) != 1 or out is None:
    fail("bisheng: error: expected one source file and -o")
errors = []
seen = set()
def scan(path):
    if path in seen: return
    seen.add(path)
    for n, line in enumerate(open(path, errors="replace").read().splitlines(), 1):
        s = line.strip()
        if s.startswith("#error"):
            errors.append(f"{path}:{n}:{line.index('#') + 1}: error: {s[len('#error'):].strip()}")
        elif s.startswith("#include \""):
            name = s.split('"')[1]
            for d in [os.path.dirname(path), *incs]:
                cand = os.path.join(d, name)
                if os.path.isfile(cand):
                    scan(os.path.abspath(cand)); break
            else:
                errors.append(f"{path}:{n}:10: fatal error: '{name}' file not found")
scan(os.path.abspath(sources[0]))
if errors:
    print("\n".join(errors), file=sys.stderr)
    print(f"{len(errors)} error{'s' if len(errors) > 1 else ''} generated.", file=sys.stderr)
    sys.exit(1)
for lib in libs:
    if lib in ("m", "dl"): continue
    if not any(os.path.isfile(os.path.join(d, f"lib{lib}.so")) for d in libdirs):
        fail(f"ld.lld: error: unable to find library -l{lib}")
src = open(sources[0]).read()
if "<<<" not in src or "aclrtSynchronizeStream" not in src:
    fail(f"{sources[0]}:1:1: error: no kernel launch")
fake = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fake")
program = "sage_dev::" not in src  # a user's whole program, not our launcher
cc = subprocess.run(["cc", "-O1", "-o", out, os.path.join(fake, "program.c" if program else "device.c"),
                     f"-DFAKE_HOME=\"{os.path.dirname(fake)}\""], capture_output=True, text=True)
if cc.returncode != 0:
    fail("fake bisheng: the fake device program did not build:\n" + cc.stderr)
'''

# The fake device: a C program (the sandbox as root hides Python's install), built by the fake
# bisheng with the system compiler. It reads the launcher's manifest, prints the ACL calls the
# launcher makes on one `FAKE-ACL {...}` line, and computes the outputs as fake/device.cfg says.
_DEVICE_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define MAXB 64
static char roles[MAXB][8], paths[MAXB][4096];
static long sizes[MAXB];
static int used[MAXB];
static char calls[16384];
static void call(const char* c) { strcat(calls, calls[0] ? ", \"" : "\""); strcat(calls, c); strcat(calls, "\""); }
static void report(void) {
    const char* home = getenv("HOME");
    printf("FAKE-ACL {\"calls\": [%s], \"sandbox_marker\": %s, \"home\": \"%s\"}\n", calls,
           getenv("SAGE_SANDBOX_RUN") ? "true" : "false", home ? home : "");
}
static void* load(const char* path, long n) {
    char* d = calloc(1, n + 1);
    FILE* f = fopen(path, "rb");
    if (f) { if (fread(d, 1, n, f) != (size_t)n) {} fclose(f); }
    return d;
}
int main(int argc, char** argv) {
    char line[8192], outdir[4096] = "", mode[32] = "add", dtype[32] = "float16", p[4200];
    int block_dim = 1, ins[2] = {-1, -1}, nin = 0;
    FILE* cfg = fopen(FAKE_HOME "/fake/device.cfg", "r");
    if (cfg) { if (fscanf(cfg, "%31s %31s", mode, dtype) < 1) {} fclose(cfg); }
    FILE* m = argc > 1 ? fopen(argv[1], "r") : NULL;
    if (!m) { fprintf(stderr, "usage: launcher MANIFEST\n"); return 4; }
    while (fgets(line, sizeof line, m)) {
        char *f[8] = {0}, *save = NULL;
        int n = 0;
        line[strcspn(line, "\n")] = 0;
        for (char* t = strtok_r(line, "\t", &save); t && n < 8; t = strtok_r(NULL, "\t", &save)) f[n++] = t;
        if (n >= 2 && !strcmp(f[0], "block_dim")) block_dim = atoi(f[1]);
        else if (n >= 2 && !strcmp(f[0], "outdir")) snprintf(outdir, sizeof outdir, "%s", f[1]);
        else if (n >= 6 && !strcmp(f[0], "buffer") && atoi(f[1]) < MAXB) {
            int i = atoi(f[1]);
            used[i] = 1, sizes[i] = atol(f[3]);
            snprintf(roles[i], sizeof roles[i], "%s", f[2]);
            snprintf(paths[i], sizeof paths[i], "%s", f[5]);
        }
    }
    fclose(m);
    call("aclInit"); call("aclrtSetDevice"); call("aclrtCreateStream");
    for (int i = 0; i < MAXB; i++) if (used[i]) {
        call("aclrtMalloc"); call("aclrtMemcpy");
        if (!strcmp(roles[i], "in") && nin < 2) ins[nin++] = i;
    }
    snprintf(line, sizeof line, "launch<<<%d>>>", block_dim); call(line);
    call("aclrtSynchronizeStream");
    if (!strcmp(mode, "fault")) {
        printf("[ERROR] RUNTIME(1234,launcher):2026-12-03-20:00:00.000.000 [stream.cc:1023] EZ9999: Inner Error!\n");
        printf("EZ9999: [PID: 1234] The error from device(chipId:0, dieId:0), serial number is 1, there is an aivec "
               "error exception, core id is 0, error code = 0x800000, dump info: pc start: 0x124080000000, "
               "current: 0x124080000354\n");
        printf("rtStreamSynchronize execute failed, reason=[vector core exception] retCode=0x7100002\n");
        report();
        fprintf(stderr, "sage-npu launcher: aclrtSynchronizeStream(stream) failed: ACL error 507035\n");
        return 2;
    }
    int half = !strcmp(dtype, "float16");
    long esize = half ? 2 : 4;
    for (int i = 0; i < MAXB; i++) if (used[i] && !strcmp(roles[i], "out") && nin == 2) {
        long n = sizes[i] / esize;
        void *a = load(paths[ins[0]], sizes[i]), *b = load(paths[ins[1]], sizes[i]), *o = calloc(1, sizes[i] + 1);
        for (long k = 0; k < n; k++) {
            if (half) {
                _Float16 x = ((_Float16*)a)[k], y = ((_Float16*)b)[k];
                ((_Float16*)o)[k] = strcmp(mode, "add") ? (_Float16)(x - y) : (_Float16)(x + y);
            } else {
                float x = ((float*)a)[k], y = ((float*)b)[k];
                ((float*)o)[k] = strcmp(mode, "add") ? x - y : x + y;
            }
        }
        snprintf(p, sizeof p, "%s/out_%d.bin", outdir, i);
        FILE* out = fopen(p, "wb");
        if (out) { fwrite(o, 1, sizes[i], out); fclose(out); }
        call("aclrtMemcpy");
    }
    for (int i = 0; i < MAXB; i++) if (used[i]) call("aclrtFree");
    call("aclrtDestroyStream"); call("aclrtResetDevice"); call("aclFinalize");
    report();
    snprintf(p, sizeof p, "%s/done", outdir);
    FILE* d = fopen(p, "w");
    if (d) { fputs("ok\n", d); fclose(d); }
    return 0;
}
"""

# A user's whole program on the fake device: says it ran (and its arguments), or faults.
_PROGRAM_C = r"""
#include <stdio.h>
#include <string.h>
int main(int argc, char** argv) {
    char mode[32] = "add", dtype[32] = "float16";
    FILE* cfg = fopen(FAKE_HOME "/fake/device.cfg", "r");
    if (cfg) { if (fscanf(cfg, "%31s %31s", mode, dtype) < 1) {} fclose(cfg); }
    if (!strcmp(mode, "fault")) {
        printf("EZ9999: [PID: 1234] there is an aivec error exception, core id is 0\n");
        fprintf(stderr, "rtStreamSynchronize execute failed, reason=[vector core exception]\n");
        return 1;
    }
    printf("fake NPU program ran with %d argument(s)\n", argc - 1);
    FILE* out = fopen("output.txt", "w");
    if (out) { fputs("written on the device\n", out); fclose(out); }
    return 0;
}
"""

# msprof and mssanitizer run inside the sandbox too: POSIX shell, reading what configure() wrote.
_MSPROF = r"""#!/bin/sh
FAKE=@FAKE@
fail() { echo "$1" >&2; exit 1; }
[ "$1" = op ] || fail "[ERROR] usage: msprof op [simulator] [options] app [args]"
shift
sim=0
if [ "$1" = simulator ]; then sim=1; shift; fi
out=$(pwd); metrics=Default; soc=
while [ $# -gt 0 ]; do
    case "$1" in
        --output=*) out="${1#--output=}" ;;
        --aic-metrics=*) [ $sim = 0 ] || fail "[ERROR] --aic-metrics is not a simulator option"; metrics="${1#*=}" ;;
        --warm-up=*|--kill=*|--launch-skip-before-match=*|--replay-mode=*|--application=*)
            [ $sim = 0 ] || fail "[ERROR] ${1%%=*} is not a simulator option" ;;
        --soc-version=*) [ $sim = 1 ] || fail "[ERROR] --soc-version is a simulator option"; soc="${1#*=}" ;;
        --dump=*) [ $sim = 1 ] || fail "[ERROR] --dump is a simulator option" ;;
        --kernel-name=*|--launch-count=*|--config=*|--timeout=*|--mstx=*) ;;
        --*) fail "[ERROR] unrecognized option '${1%%=*}'" ;;
        *) break ;;
    esac
    shift
done
for m in $(echo "$metrics" | tr , ' '); do
    case "$m" in
        ArithmeticUtilization|L2Cache|Memory|MemoryL0|MemoryUB|PipeUtilization|ResourceConflictRatio|Default|\
Occupancy|Roofline|TimelineDetail|Source|MemoryDetail) ;;
        *) fail "[ERROR] invalid --aic-metrics value '$m'" ;;
    esac
done
[ $sim = 0 ] || [ -n "$soc" ] || fail "[ERROR] msprof op simulator needs --soc-version"
[ $# -gt 0 ] || fail "[ERROR] no application to profile"
"$@"
rc=$?
if [ $rc -ne 0 ]; then echo "[ERROR] the application exited with $rc; no data collected" >&2; exit $rc; fi
d="$out/OPPROF_$(date +%Y%m%d%H%M%S)_$(printf %06d $$)"
mkdir -p "$d"
if [ $sim = 1 ]; then
    mkdir -p "$d/simulator/core0.veccore0"
    cp "$FAKE/code_exe.csv" "$d/simulator/core0.veccore0/core0.veccore0_code_exe.csv"
else
    # the launch's block count (the manifest's block_dim row) picks its own duration when the test gave one
    for a in "$@"; do last="$a"; done
    bd=
    tab=$(printf '\t')
    if [ -f "$last" ]; then
        while IFS="$tab" read -r k v rest; do [ "$k" = block_dim ] && bd="$v"; done < "$last"
    fi
    basic="$FAKE/OpBasicInfo.csv"
    if [ -n "$bd" ] && [ -f "$FAKE/OpBasicInfo_$bd.csv" ]; then basic="$FAKE/OpBasicInfo_$bd.csv"; fi
    cp "$basic" "$d/OpBasicInfo.csv"
    case ",$metrics," in
        *,PipeUtilization,*) [ -f "$FAKE/PipeUtilization.csv" ] && cp "$FAKE/PipeUtilization.csv" "$d/" ;;
    esac
fi
echo "[INFO] Profiling results saved in $d"
"""

_MSSANITIZER = r"""#!/bin/sh
FAKE=@FAKE@
fail() { echo "$1" >&2; exit 1; }
tool=memcheck
while [ $# -gt 0 ]; do
    case "$1" in
        --tool=*) tool="${1#*=}" ;;
        --leak-check=*|--check-unused-memory=*|--check-uninitialized-read=*|--log-file=*|--full-backtrace=*) ;;
        --*) fail "[ERROR] unrecognized option '${1%%=*}'" ;;
        *) break ;;
    esac
    shift
done
case "$tool" in memcheck|racecheck|initcheck|synccheck) ;; *) fail "[ERROR] unknown --tool '$tool'" ;; esac
[ $# -gt 0 ] || fail "[ERROR] no application to check"
"$@"
rc=$?
[ -s "$FAKE/sanitizer.txt" ] && cat "$FAKE/sanitizer.txt" >&2
exit $rc
"""

_NPU_SMI = r'''
if sys.argv[1:] != ["info"]:
    fail("Error: invalid command (this fake answers `npu-smi info` only)")
name, health = CONFIG.get("npu", "910B2"), CONFIG.get("health", "OK")
print("+------------------------------------------------------------------------------------------------+")
print("| npu-smi 24.1.rc2                 Version: 24.1.rc2                                             |")
print("+---------------------------+---------------+----------------------------------------------------+")
print("| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|")
print("| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |")
print("+===========================+===============+====================================================+")
print(f"| 0     {name:<20}| {health:<14}| 93.6        40                0    / 0             |")
print("| 0                         | 0000:C1:00.0  | 0           0    / 0          3397 / 65536         |")
print("+===========================+===============+====================================================+")
'''

_ACL_H = """\
/* The documented ACL runtime signatures the launcher uses (acl/acl.h, acl/acl_rt.h). */
#pragma once
#include <cstddef>
#include <cstdint>
typedef int aclError;
typedef void* aclrtStream;
static const aclError ACL_SUCCESS = 0;
typedef enum { ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY } aclrtMemMallocPolicy;
typedef enum { ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
               ACL_MEMCPY_DEVICE_TO_DEVICE } aclrtMemcpyKind;
aclError aclInit(const char* configPath);
aclError aclFinalize();
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
"""


def _csv(path: Path, header: list[str], rows: list[dict]) -> None:
    path.write_text("\n".join([",".join(header), *(",".join(str(r.get(h, "N/A")) for h in header) for r in rows)])
                    + "\n", encoding="utf-8")


@dataclass
class FakeCann:
    home: Path          # ASCEND_HOME_PATH
    driver_bin: Path    # where npu-smi is: put it on PATH
    config: Path        # the device model (JSON) the fake tools' files are written from

    def configure(self, **values) -> None:
        """Change the device model: `device` (add, wrong, fault), `dtype`, `npu`, `health`,
        `profile` (duration_us, block_dim, duration_by_block_dim {block count: us} for launches of that many
        blocks, spelling "8.0" or "8.2", blocks, code_lines),
        `sanitizer` (the report's lines)."""
        data = json.loads(self.config.read_text())
        data.update(values)
        self.config.write_text(json.dumps(data))
        fake = self.home / "fake"
        (fake / "device.cfg").write_text(f"{data.get('device', 'add')} {data.get('dtype', 'float16')}\n")
        prof = data.get("profile", {})
        new = prof.get("spelling", "8.0") != "8.0"
        basic = ["Op Name", "Op Type", "Task Duration(μs)" if new else "Task Duration(us)", "Block Dim",
                 "Mix Block Dim", "Device ID" if new else "Device Id", "PID" if new else "Pid", "Current Freq",
                 "Rated Freq"]
        for old in fake.glob("OpBasicInfo_*.csv"):
            old.unlink()
        # one row per launch shape: the default, and one for each block count given its own duration
        shapes = {"": (prof.get("duration_us", 1.0), prof.get("block_dim", 8)),
                  **{f"_{bd}": (us, int(bd)) for bd, us in prof.get("duration_by_block_dim", {}).items()}}
        for suffix, (us, bd) in shapes.items():
            _csv(fake / f"OpBasicInfo{suffix}.csv", basic, [{"Op Name": prof.get("op", "add_custom"),
                                                             "Op Type": "vector", basic[2]: us, "Block Dim": bd,
                                                             basic[5]: 0, basic[6]: 4242, "Current Freq": 1800,
                                                             "Rated Freq": 1800}])
        blocks = prof.get("blocks", [])
        util = fake / "PipeUtilization.csv"
        if blocks:
            _csv(util, ["block_id", "sub_block_id", *blocks[0]],
                 [{"block_id": i, "sub_block_id": 0, **b} for i, b in enumerate(blocks)])
        elif util.exists():
            util.unlink()
        _csv(fake / "code_exe.csv", ["code", "call_count", "cycles", "running_time(us)"], prof.get("code_lines", []))
        (fake / "sanitizer.txt").write_text("".join(f"{ln}\n" for ln in data.get("sanitizer", [])))

    def env(self) -> dict[str, str]:
        return {"ASCEND_HOME_PATH": str(self.home), "PATH": f"{self.driver_bin}{os.pathsep}{os.environ['PATH']}"}


def _script(path: Path, body: str, config: Path) -> None:
    """A Python fake (run outside the sandbox: bisheng, npu-smi)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\nCONFIG_PATH = {json.dumps(str(config))}\n" + _COMMON + body)
    path.chmod(0o755)


def _shell(path: Path, body: str, fake: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body.replace("@FAKE@", f"'{fake}'"))
    path.chmod(0o755)


def make_fake_cann(root: Path, **device) -> FakeCann:
    """The fake install under `root` (`root/Ascend/ascend-toolkit/latest`, `root/driver/bin`);
    `device` is the initial device model (see FakeCann.configure)."""
    home = root / "Ascend" / "ascend-toolkit" / "latest"
    driver_bin = root / "driver" / "bin"
    config = root / "fake_device.json"
    (home / "fake").mkdir(parents=True)
    config.write_text(json.dumps({"npu": "910B2", "device": "add", "dtype": "float16"}))
    (home / "fake" / "device.c").write_text(_DEVICE_C)
    (home / "fake" / "program.c").write_text(_PROGRAM_C)
    _script(home / "bin" / "bisheng", _BISHENG, config)
    _shell(home / "tools" / "profiler" / "bin" / "msprof", _MSPROF, home / "fake")
    _shell(home / "tools" / "mssanitizer" / "bin" / "mssanitizer", _MSSANITIZER, home / "fake")
    _script(driver_bin / "npu-smi", _NPU_SMI, config)
    (home / "include" / "acl").mkdir(parents=True)
    (home / "include" / "acl" / "acl.h").write_text(_ACL_H)
    for header in ("kernel_operator.h", "kernel_tiling/kernel_tiling.h", "tiling/platform/platform_ascendc.h"):
        stub = home / "compiler" / "tikcpp" / "include" / header
        stub.parent.mkdir(parents=True, exist_ok=True)
        stub.write_text("#pragma once\n")
    (home / "lib64").mkdir()
    for lib in ("ascendcl", "runtime", "tiling_api", "platform", "ascendc_runtime"):
        (home / "lib64" / f"lib{lib}.so").write_bytes(b"")
    sim = home / "tools" / "simulator" / "Ascend910B2" / "lib"
    sim.mkdir(parents=True)
    (sim / "libruntime_camodel.so").write_bytes(b"")
    (home / "ascend_toolkit_install.info").write_text("package_name=Ascend-cann-toolkit\nversion=8.0.0\n")
    cann = FakeCann(home, driver_bin, config)
    cann.configure(**device)
    return cann
