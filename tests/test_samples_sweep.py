"""benchmarks/samples_sweep.py, the sweep of asc-devkit's samples, and benchmarks/readme_cases.py,
which builds a case list from sample READMEs: the CMake reading, the selection rule on a small fake
checkout, the verdict read from `sage-npu run --json`, the README parsing, the checked-in list of
asc-devkit's first commit, and one case run end to end on a sample folder written here."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from sage_npu.npu_eval.program import LaunchReport, ProgramReport, ProgramStatus
from sage_npu.npu_eval.report import Diagnostic, Timing
from sage_npu.npu_eval.settings import DEFAULT_TIMEOUT_S

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
CASES_3D5CEE = BENCH / "asc_devkit_3d5cee08792f_cases.json"


def _load(name: str):
    # The benchmarks are scripts, not a package; readme_cases imports its sibling by name.
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


sweep = _load("samples_sweep")
readme_cases = _load("readme_cases")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ---- the CMake reading ----

SCENARIO_CMAKE = """\
cmake_minimum_required(VERSION 3.16)
project(kernel_samples LANGUAGES ASC CXX)
set(MODE "fast")  # a comment (with parentheses)
if(NOT DEFINED SCENARIO_NUM)
  set(SCENARIO_NUM 1)
endif()
if(SCENARIO_NUM EQUAL 2)
  add_definitions(-DSCENARIO=2)
  set(MODE "slow")
elseif(SCENARIO_NUM EQUAL 3)
  add_definitions(-DSCENARIO=3)
else()
  add_definitions(-DSCENARIO=1)
endif()
add_executable(demo
    main.asc
    ${CMAKE_CURRENT_SOURCE_DIR}/helper.cpp
)
add_executable(other other.asc)
target_compile_definitions(demo PRIVATE MODE_${MODE} TILE=16 $<$<CONFIG:Debug>:DBG>)
target_compile_definitions(other PRIVATE NOT_MINE)
add_compile_definitions(GLOBAL_FLAG)
if(CMAKE_ASC_ARCHITECTURES STREQUAL "dav-2201")
  target_compile_options(demo PRIVATE -DARCH_910B -O2 $<$<COMPILE_LANGUAGE:ASC>:--npu-arch=dav-2201>)
endif()
"""


@pytest.fixture
def scenario_sample(tmp_path):
    for name in ("main.asc", "helper.cpp", "other.asc"):
        write(tmp_path / name, "// source\n")
    write(tmp_path / "CMakeLists.txt", SCENARIO_CMAKE)
    return tmp_path


@pytest.mark.parametrize(("cmake", "scenario", "mode"), [
    (["cmake .."], "1", "fast"),
    (["cmake -DSCENARIO_NUM=2 .. -DCMAKE_ASC_ARCHITECTURES=dav-2201"], "2", "slow"),
    (["cmake .. -DSCENARIO_NUM=3"], "3", "fast"),
])
def test_the_build_is_read_from_cmake_with_its_if_branches(scenario_sample, cmake, scenario, mode):
    build = sweep.understand_build(scenario_sample, "demo", cmake)
    assert build is not None
    assert [p.name for p in build.sources] == ["main.asc", "helper.cpp"]
    assert build.defines == {"SCENARIO": scenario, f"MODE_{mode}": "", "TILE": "16", "GLOBAL_FLAG": "",
                             "ARCH_910B": ""}


@pytest.mark.parametrize(("cmake", "defines"), [
    (["cmake .."], {}),
    (["cmake .. -DUSE_SILU_MODE=ON"], {"USE_SILU_MODE": ""}),
])
def test_an_option_is_off_unless_given_and_an_undefined_name_is_false(tmp_path, cmake, defines):
    # asc-devkit's swish sample: option(USE_SILU_MODE ... OFF) guards a definition
    write(tmp_path / "main.asc", "")
    write(tmp_path / "CMakeLists.txt", 'option(USE_SILU_MODE "Silu" OFF)\nadd_executable(demo main.asc)\n'
                                       "if(USE_SILU_MODE)\n  target_compile_definitions(demo PRIVATE USE_SILU_MODE)\n"
                                       "endif()\nif(NEVER_SET)\n  target_compile_definitions(demo PRIVATE NO)\n"
                                       "endif()\n")
    build = sweep.understand_build(tmp_path, "demo", cmake)
    assert build is not None and build.defines == defines


def test_a_build_the_sweep_cannot_stand_in_for_is_none(tmp_path):
    write(tmp_path / "main.asc", "")
    write(tmp_path / "kernel.o", "")
    write(tmp_path / "CMakeLists.txt", "add_executable(demo kernel.o main.asc)\nadd_executable(two main.asc)\n")
    assert sweep.understand_build(tmp_path, "demo", []) is None
    assert "not one executable from listed sources" in sweep.unbuildable(tmp_path, "demo")
    assert sweep.understand_build(tmp_path, "missing", []) is None


def test_an_ai_cpu_kernel_is_built_with_the_program(tmp_path):
    # asc-devkit's 12_aicpu: the AI CPU kernel (.aicpu) and the host program that launches it
    write(tmp_path / "main.asc", "")
    write(tmp_path / "hello.aicpu", "")
    write(tmp_path / "CMakeLists.txt", "add_executable(demo hello.aicpu main.asc)\n")
    build = sweep.understand_build(tmp_path, "demo", [])
    assert build is not None and [s.name for s in build.sources] == ["hello.aicpu", "main.asc"]


@pytest.mark.parametrize("kind", ["SHARED", "STATIC"])
def test_a_kernel_library_the_executable_links_is_built_with_it(tmp_path, kind):
    # asc-devkit's 02_dynamic_library_compile and 03_static_library_compile: main.cpp declares
    # run_add_custom, the library's add_kernel.asc defines it.
    for name in ("main.cpp", "add_kernel.asc", "helper.asc", "unused.asc"):
        write(tmp_path / name, "// source\n")
    write(tmp_path / "CMakeLists.txt", f"add_library(add_kernel {kind} add_kernel.asc)\n"
                                       "add_library(helper STATIC helper.asc)\nadd_library(unused SHARED unused.asc)\n"
                                       "target_link_libraries(add_kernel PRIVATE helper m)\n"
                                       "target_compile_definitions(add_kernel PRIVATE KERNEL_LIB=1)\n"
                                       "add_executable(demo main.cpp)\n"
                                       "target_link_libraries(demo PRIVATE add_kernel ascendcl)\n")
    build = sweep.understand_build(tmp_path, "demo", ["cmake .."])
    assert build is not None
    assert [p.name for p in build.sources] == ["main.cpp", "add_kernel.asc", "helper.asc"]
    assert build.defines == {"KERNEL_LIB": "1"}


def test_a_quoted_definition_value_stays_a_string_literal(tmp_path):
    # asc-devkit's aclrtc samples: ACL_RTC_NPU_ARCH="${CMAKE_ASC_ARCHITECTURES}" is the string "dav-2201".
    write(tmp_path / "rtc.cpp", "")
    write(tmp_path / "CMakeLists.txt", 'set(CMAKE_ASC_ARCHITECTURES "dav-2201" CACHE STRING "NPU arch")\n'
                                       "add_executable(demo rtc.cpp)\n"
                                       'target_compile_definitions(demo PRIVATE ARCH="${CMAKE_ASC_ARCHITECTURES}")\n')
    build = sweep.understand_build(tmp_path, "demo", ["cmake .. -DCMAKE_ASC_ARCHITECTURES=dav-2201"])
    assert build is not None and build.defines == {"ARCH": '"dav-2201"'}


def test_a_regex_python_cannot_compile_leaves_its_variable_unset(tmp_path):
    write(tmp_path / "main.asc", "")
    write(tmp_path / "CMakeLists.txt", 'string(REGEX MATCH "*x" BAD "dav-2201")\n'
                                       "add_executable(demo main.asc)\n"
                                       "target_compile_definitions(demo PRIVATE B=${BAD})\n")
    build = sweep.understand_build(tmp_path, "demo", ["cmake .."])
    assert build is not None and build.defines == {"B": ""}


def test_string_regex_sets_the_variables_a_definition_reads(tmp_path):
    # asc-devkit's fixpipe_l0c2l1: ASC_ARCHITECTURES=2201 comes from dav-2201 by string(REGEX MATCH);
    # MATCHALL and REPLACE are the other REGEX forms samples use.
    write(tmp_path / "main.asc", "")
    write(tmp_path / "CMakeLists.txt",
          'set(CMAKE_ASC_ARCHITECTURES "dav-2201" CACHE STRING "NPU arch")\n'
          'string(REGEX MATCH "([0-9]+)" ARCH_NUM "${CMAKE_ASC_ARCHITECTURES}")\n'
          'add_definitions(-DASC_ARCHITECTURES=${ARCH_NUM} -DGROUP=${CMAKE_MATCH_1})\n'
          'string(REGEX MATCHALL "[a-z]+" WORDS "ab-12-cd")\n'
          'string(REGEX REPLACE "^dav-([0-9])(.*)$" "\\\\2v\\\\1" SWAPPED ${CMAKE_ASC_ARCHITECTURES})\n'
          'string(REGEX MATCH "[x]+" NONE "dav")\n'
          'if(WORDS STREQUAL "ab;cd")\n  add_definitions(-DLIST_OK)\nendif()\n'
          "add_executable(demo main.asc)\n"
          "target_compile_definitions(demo PRIVATE SW=${SWAPPED} NONE=${NONE})\n")
    build = sweep.understand_build(tmp_path, "demo", ["cmake .. -DCMAKE_ASC_ARCHITECTURES=dav-3510"])
    assert build is not None
    assert build.defines == {"ASC_ARCHITECTURES": "3510", "GROUP": "3510", "LIST_OK": "", "SW": "510v3",
                             "NONE": ""}


# ---- the selection rule ----

VECTOR = "AscendC::Add(zLocal, xLocal, yLocal, 256);\n"
CUBE = "AscendC::Mmad(c1Local, a2Local, b2Local, params);\n"


def plan_entry(case: str, *, archs=("dav-2201",), commands=("cmake ..", "make -j", "./demo"), **extra) -> dict:
    return {"case": case, "source_case": extra.pop("source_case", case), "supported_archs": list(archs),
            "commands": list(commands), **extra}


@pytest.fixture
def fake_checkout(tmp_path):
    ex = tmp_path / "examples"
    write(ex / "00_intro/vec/add.asc", VECTOR)
    write(ex / "00_intro/cube/mmad.asc", CUBE)
    write(ex / "00_intro/two/cube.asc", CUBE)
    write(ex / "00_intro/two/vector.asc", VECTOR)
    write(ex / "00_intro/two/CMakeLists.txt", "add_executable(cube cube.asc)\nadd_executable(vector vector.asc)\n")
    write(ex / "04_advanced_api/softmax/softmax.asc", VECTOR)
    write(ex / "02_features/op/op.asc", VECTOR)
    write(ex / "02_features/op/run.sh", "export ASCEND_CUSTOM_OPP_PATH=$PWD/build_out\n")
    write(ex / "02_features/opgen/op.asc", VECTOR)
    write(ex / "02_features/aclnn/main.cpp", "#include \"aclnn_add_custom.h\"\n")
    write(ex / "02_features/aclnn/CMakeLists.txt",
          "add_executable(execute_add_op main.cpp)\n"
          "target_link_libraries(execute_add_op PRIVATE cust_opapi nnopbase)\n")
    plan = [
        plan_entry("00_intro/vec"),
        plan_entry("00_intro/vec__scenario_2", source_case="00_intro/vec",
                   commands=["cmake .. -DSCENARIO_NUM=2", "make -j", "./demo"]),
        plan_entry("00_intro/cube"),
        plan_entry("00_intro/two/cube", source_case="00_intro/two", commands=["./cube"]),
        plan_entry("00_intro/two/vector", source_case="00_intro/two", commands=["./vector"]),
        plan_entry("00_intro/vec_950", source_case="00_intro/vec", archs=["dav-3510"]),
        plan_entry("04_advanced_api/softmax"),
        plan_entry("00_intro/vec_skipped", source_case="00_intro/vec", skip=True),
        plan_entry("00_intro/vec_not_runnable", source_case="00_intro/vec", target_runnable=False),
        plan_entry("00_intro/gone"),
        plan_entry("02_features/op", commands=["bash run.sh -v float16"]),
        plan_entry("02_features/opgen", commands=["msopgen gen -i op.json", "./demo"]),
        plan_entry("02_features/aclnn", commands=["cmake ..", "make -j", "./execute_add_op"]),
    ]
    return tmp_path, [sweep.PlanCase.model_validate(c) for c in plan]


def test_the_selection_rule_counts_what_it_leaves_out(fake_checkout):
    root, plan = fake_checkout
    chosen, left = sweep.select(root, plan)
    assert [c.case for c in chosen] == ["00_intro/vec", "00_intro/vec__scenario_2", "00_intro/two/vector"]
    assert left == {"cube or mixed": 2, "not dav-2201": 1, "advanced API": 1, "skipped by the plan": 2,
                    "no sample folder": 1, "CANN framework step": 3}
    assert sweep.rule_count(root, plan).endswith("selects 4 cases: 3 outside 04_advanced_api and 1 in it (--advanced)")


def test_advanced_adds_the_advanced_api_samples_under_the_same_rules(fake_checkout):
    root, plan = fake_checkout
    chosen, left = sweep.select(root, plan, advanced=True)
    assert [c.case for c in chosen] == ["00_intro/vec", "00_intro/vec__scenario_2", "00_intro/two/vector",
                                        "04_advanced_api/softmax"]
    assert "advanced API" not in left and left["cube or mixed"] == 2


def test_a_commit_without_a_test_plan_asks_for_a_case_list(tmp_path):
    with pytest.raises(SystemExit, match="--cases"):
        sweep.load_plan(tmp_path)
    listed = write(tmp_path / "cases.json", json.dumps([plan_entry("00_intro/vec")]))
    assert [c.case for c in sweep.load_plan(tmp_path, listed)] == ["00_intro/vec"]


RUN_SH = """case_build() {
    (cd "$BUILD_DIR" && TESTCASE=1 soc_version=$SOC_VERSION bash -lc 'python3 gen.py --testcase $TESTCASE')
    (cd "$BUILD_DIR" && ASC_ARCH=$ARCH COPY_DST=UB bash -lc 'python3 gen.py -arch $ASC_ARCH')
}
"""


def test_the_runner_scripts_environment_reaches_the_cases_commands(tmp_path):
    # asc-devkit's broadcast case: the plan says `--testcase $TESTCASE`, its run.sh sets TESTCASE=1.
    write(tmp_path / "scripts/presmoke/cases/b/run.sh", RUN_SH)
    case = sweep.PlanCase.model_validate(plan_entry("b", runner="scripts/presmoke/cases/b/run.sh"))
    env = sweep.runner_env(tmp_path, case)
    # soc_version names the runner's own variable: left out; $ARCH is the architecture swept
    assert env == {"TESTCASE": "1", "ASC_ARCH": "dav-2201", "COPY_DST": "UB"}
    assert sweep.run_script('test "$TESTCASE" = 1', tmp_path, env) is None
    assert sweep.run_script('test "$TESTCASE" = 1', tmp_path, {}) is not None
    assert sweep.runner_env(tmp_path, sweep.PlanCase.model_validate(plan_entry("c"))) == {}
    # asc-devkit's data_copy best practice: `cmake -DCOPY_DST=$COPY_DST ..`, COPY_DST=UB from run.sh
    case.commands = ["cmake -DSCENARIO_NUM=1 -DCOPY_DST=$COPY_DST ..", "make -j", "./demo"]
    assert sweep.cmake_commands(case, env) == ["cmake -DSCENARIO_NUM=1 -DCOPY_DST=UB .."]


def test_a_script_missing_a_python_package_says_which(tmp_path):
    why = sweep.run_script("python3 -c 'import sage_no_such_pkg.sub'", tmp_path)
    assert why is not None and "needs the Python package sage_no_such_pkg" in why and "not the emulator" in why
    assert len(sweep.one_line(why)) <= sweep.REASON_MAX


# ---- the verdict on `sage-npu run --json` ----

def diagnostic(severity: str, code: str, message: str, line: int) -> Diagnostic:
    return Diagnostic.model_validate({"file": "/tmp/x/add.asc", "line": line, "end_line": line, "end_column": 2,
                                      "severity": severity, "code": code, "message": message})


def program_json(status: ProgramStatus = "ok", exit_code=0, stdout="", launch_diags=(), diags=(),
                 program_exit_code: int | None = None) -> str:
    launch = LaunchReport(index=1, kernel="add_custom", file="/tmp/x/add.asc", line=40, block_dim=8,
                          status="ok" if status == "ok" else "runtime_error", diagnostics=list(launch_diags))
    return ProgramReport(program="/tmp/x/add.asc", sources=["/tmp/x/add.asc"], status=status,
                         exit_code=exit_code, stdout=stdout, diagnostics=list(diags),
                         program_exit_code=program_exit_code, launches=[launch]).model_dump_json()


def test_a_clean_run_passes_and_lists_its_warnings():
    warn = diagnostic("warning", "uninitialized-gm-read", "reads bytes nobody wrote", 12)
    v = sweep.program_verdict(program_json(stdout="test pass\n", launch_diags=[warn]))
    assert v.why is None and v.errors == []
    assert v.warnings == ["add.asc:12: reads bytes nobody wrote [uninitialized-gm-read]"]


def test_a_program_that_prints_failure_fails_even_when_it_exits_0():
    why = sweep.program_verdict(program_json(stdout="compare...\n[ERROR] result error\n")).why
    assert why == "the program printed: [ERROR] result error"
    why = sweep.program_verdict(program_json(stdout="Test Failed!\n")).why
    assert why == "the program printed: Test Failed!"


def test_a_mismatch_line_fails_the_case_when_the_output_was_cut_before_test_failed():
    out = "CompareResult golden.bin failed. Output[0] is 2.0, golden is 1.0\n" * 3 + "\n[output truncated]"
    why = sweep.program_verdict(program_json(stdout=out)).why
    assert why is not None and "CompareResult golden.bin failed" in why


def test_a_faulted_run_fails_with_its_first_error():
    race = diagnostic("error", "gm-race", "blocks 0 and 1 write the same bytes", 30)
    v = sweep.program_verdict(program_json("faulted", 1, launch_diags=[race]))
    why, errors = v.why, v.errors
    assert why == "faulted: add.asc:30: blocks 0 and 1 write the same bytes [gm-race]"
    assert errors == ["add.asc:30: blocks 0 and 1 write the same bytes [gm-race]"]


def test_a_failed_assert_passes_only_in_a_program_that_ends_well_and_faults_no_other_way():
    # asc-devkit's 01_utilities/09_log asserts in its kernel on purpose and exits 0.
    fired = diagnostic("error", "assert-failed", "assertion failed in block 0: ascendc_assert(M < 100)", 40)
    race = diagnostic("error", "gm-race", "blocks 0 and 1 write the same bytes", 30)
    v = sweep.program_verdict(program_json("faulted", 1, launch_diags=[fired], program_exit_code=0))
    why, errors = v.why, v.errors
    assert why is None
    assert errors == ["add.asc:40: assertion failed in block 0: ascendc_assert(M < 100) [assert-failed]"]
    why = sweep.program_verdict(program_json("faulted", 1, launch_diags=[race, fired], program_exit_code=0)).why
    assert why is not None and "gm-race" in why
    why = sweep.program_verdict(program_json("faulted", 1, launch_diags=[fired], program_exit_code=3)).why
    assert why is not None and "assert-failed" in why
    why = sweep.program_verdict(program_json("faulted", 1, launch_diags=[fired], program_exit_code=0,
                                                   stdout="[ERROR] result error\n")).why
    assert why == "the program printed: [ERROR] result error"


def test_output_that_is_not_a_report_fails():
    why = sweep.program_verdict("Traceback (most recent call last):\n  boom").why
    assert why is not None and why.startswith("sage-npu run printed no report: ")


# ---- the case list from READMEs ----

README = """\
# 样例
## 支持的AI处理器
- Ascend 910B
- Atlas A2训练系列产品

## 编译运行
- 配置环境变量
  ```bash
  export ASCEND_INSTALL_PATH=/usr/local/Ascend/latest
  ```
- 样例执行
  ```bash
  mkdir -p build && cd build;   # 创建并进入build目录
  cmake ..;make -j;             # 编译工程
  ```
  ```bash
  python3 ../scripts/gen_data_cube.py
  ./cube | tee out.log
  python3 ../scripts/verify_result_cube.py output/output.bin output/golden.bin
  ```
  执行结果如下
  ```bash
  test pass
  ```
  ```bash
  python3 ../scripts/gen_data_vector.py
  ./vector
  python3 ../scripts/verify_result_vector.py output/output.bin output/golden.bin
  ```
- 进入gdb模式调试
  ```bash
  gdb --args ./vector
  ```
"""


def test_a_readme_gives_one_case_per_binary_it_runs():
    cases = readme_cases.cases_of("examples/01_utilities/02_dump/README.md", README)
    assert [c.case for c in cases] == ["01_utilities/02_dump/cube", "01_utilities/02_dump/vector"]
    assert {c.source_case for c in cases} == {"01_utilities/02_dump"}
    assert cases[0].supported_archs == ["dav-2201"]
    assert cases[0].readme_products == ["Ascend 910B", "Atlas A2训练系列产品"]
    assert cases[0].commands == ["cmake ..", "make -j", "python3 ../scripts/gen_data_cube.py", "./cube",
                                 "python3 ../scripts/verify_result_cube.py output/output.bin output/golden.bin"]
    assert cases[1].commands[2:] == ["python3 ../scripts/gen_data_vector.py", "./vector",
                                     "python3 ../scripts/verify_result_vector.py output/output.bin output/golden.bin"]


def test_a_readme_that_runs_nothing_gives_no_case():
    assert readme_cases.cases_of("examples/00_introduction/README.md", "# 目录\n| a | b |\n") == []


def test_the_checked_in_list_of_the_first_commit_loads_and_validates():
    raw = json.loads(CASES_3D5CEE.read_text())
    cases = [readme_cases.ReadmeCase.model_validate(c) for c in raw]
    assert len({c.case for c in cases}) == len(cases) == 26
    for c in cases:
        assert c.readme == f"examples/{c.source_case}/README.md"
        assert c.supported_archs == ["dav-2201"] and c.commands
    by_name = {c.case: c for c in cases}
    # Checked by hand against the READMEs and CMakeLists.txt files of 3d5cee08792f.
    assert by_name["00_introduction/01_add/basic_api_memory_allocator_add"].commands == [
        "cmake ..", "make -j", "python3 ../scripts/gen_data.py", "./add",
        "python3 ../scripts/verify_result.py output/output.bin output/golden.bin"]
    assert by_name["00_introduction/06_reduce"].commands == [
        "cmake ..", "make -j", "python3 ../scripts/gen_data.py", "./demo"]  # its README verifies nothing
    assert by_name["01_utilities/02_dumptensor/vector"].commands[2:] == [
        "python3 ../scripts/gen_data_vector.py", "./vector",
        "python3 ../scripts/verify_result_vector.py output_vector/output_z.bin output_vector/golden.bin"]
    assert by_name["02_features/01_c_api/01_async_add"].commands == ["cmake ..", "make -j", "./c_api_add"]
    assert by_name["02_features/00_framework_launch/00_add_template"].commands == ["bash run.sh -v float16"]


# ---- one case end to end ----

VADD = """\
#include <cstdio>
#include "acl/acl.h"
#include "kernel_operator.h"

constexpr uint32_t LENGTH = 2 * 256;

__global__ __aicore__ void vadd_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    constexpr uint32_t n = LENGTH / 2;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * n * sizeof(float));
    AscendC::GlobalTensor<float> xGm, yGm, zGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + n * AscendC::GetBlockIdx(), n);
    yGm.SetGlobalBuffer((__gm__ float*)y + n * AscendC::GetBlockIdx(), n);
    zGm.SetGlobalBuffer((__gm__ float*)z + n * AscendC::GetBlockIdx(), n);
    AscendC::LocalTensor<float> all = buf.Get<float>();
    AscendC::LocalTensor<float> xs = all[0];
    AscendC::LocalTensor<float> ys = all[n];
    AscendC::LocalTensor<float> zs = all[2 * n];
    AscendC::DataCopy(xs, xGm, n);
    AscendC::DataCopy(ys, yGm, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Add(zs, xs, ys, n);
    AscendC::Adds(zs, zs, (float)VADD_BIAS, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zGm, zs, n);
}

static void Load(const char* path, void* buf, size_t size)
{
    FILE* f = std::fopen(path, "rb");
    if (f != nullptr) {
        std::fread(buf, 1, size, f);
        std::fclose(f);
    }
}

int32_t main()
{
    size_t size = LENGTH * sizeof(float);
    void *xHost, *yHost, *zHost, *xDev, *yDev, *zDev;
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtMallocHost(&xHost, size);
    aclrtMallocHost(&yHost, size);
    aclrtMallocHost(&zHost, size);
    aclrtMalloc(&xDev, size, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&yDev, size, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&zDev, size, ACL_MEM_MALLOC_HUGE_FIRST);
    Load("./input/x.bin", xHost, size);
    Load("./input/y.bin", yHost, size);
    aclrtMemcpy(xDev, size, xHost, size, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(yDev, size, yHost, size, ACL_MEMCPY_HOST_TO_DEVICE);
    vadd_custom<<<2, nullptr, stream>>>((GM_ADDR)xDev, (GM_ADDR)yDev, (GM_ADDR)zDev);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(zHost, size, zDev, size, ACL_MEMCPY_DEVICE_TO_HOST);
    FILE* f = std::fopen("./output/output.bin", "wb");
    if (f != nullptr) {
        std::fwrite(zHost, 1, size, f);
        std::fclose(f);
    }
    aclrtFree(xDev);
    aclrtFree(yDev);
    aclrtFree(zDev);
    aclrtFreeHost(xHost);
    aclrtFreeHost(yHost);
    aclrtFreeHost(zHost);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""

GEN = """\
import array, os
os.makedirs("input", exist_ok=True)
os.makedirs("output", exist_ok=True)
x = array.array("f", [i * 0.5 for i in range(512)])
y = array.array("f", [1.0 - i for i in range(512)])
x.tofile(open("input/x.bin", "wb"))
y.tofile(open("input/y.bin", "wb"))
array.array("f", [a + b + 3 for a, b in zip(x, y)]).tofile(open("output/golden.bin", "wb"))
"""

VERIFY = """\
import array, sys
got, want = array.array("f"), array.array("f")
got.frombytes(open(sys.argv[1], "rb").read())
want.frombytes(open(sys.argv[2], "rb").read())
print("test pass" if len(got) == len(want) and all(abs(a - b) < 1e-5 for a, b in zip(got, want)) else "test failed!")
"""


def _vadd_sample(tmp_path, monkeypatch, source: str) -> tuple[Path, Path]:
    """The vadd sample (with `source` as its kernel file) in a fake asc-devkit, and its case list."""
    sample = tmp_path / "kit" / "examples" / "00_intro" / "vadd"
    write(sample / "vadd.asc", source)
    write(sample / "scripts" / "gen_data.py", GEN)
    write(sample / "scripts" / "verify_result.py", VERIFY)
    # VADD_BIAS reaches the build only through the CMake reading (a -D name must not be one the
    # emulator's headers use: BIAS is a TPosition).
    write(sample / "CMakeLists.txt", "if(NOT DEFINED BIAS_VALUE)\n  set(BIAS_VALUE 1)\nendif()\n"
                                     "add_executable(demo vadd.asc)\nadd_definitions(-DVADD_BIAS=${BIAS_VALUE})\n")
    cases = write(tmp_path / "cases.json", json.dumps([plan_entry("00_intro/vadd", commands=[
        "cmake .. -DBIAS_VALUE=3", "make -j", "python3 ../scripts/gen_data.py", "./demo",
        "python3 ../scripts/verify_result.py output/output.bin output/golden.bin"])]))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the build stays out of the user's cache
    return tmp_path / "kit", cases


def test_one_sample_runs_end_to_end_and_passes_its_own_check(tmp_path, monkeypatch, capsys):
    kit, cases = _vadd_sample(tmp_path, monkeypatch, VADD)
    out = tmp_path / "outcomes.json"
    assert sweep.main([str(kit), "--cases", str(cases), "--jobs", "1", "--json", str(out)]) == 0
    [outcome] = json.loads(out.read_text())["outcomes"]
    assert outcome["passed"], outcome["reason"]
    assert outcome["errors_on_pass"] == []
    captured = capsys.readouterr()
    printed = captured.out
    assert "1 cases selected" in printed and "PASS  00_intro/vadd" in printed and "summary: 1/1 pass" in printed
    # the progress line, on stderr as each case finishes
    assert re.search(r"^\[1/1\] PASS 00_intro/vadd \(\d+ s\)$", captured.err, re.M), captured.err


def test_a_program_is_held_to_the_sweeps_limit_not_sage_npu_runs_default(tmp_path, monkeypatch):
    # A host that sleeps 6 s: well inside `sage-npu run`'s default limit (DEFAULT_TIMEOUT_S), past
    # the sweep's 2 s. The case fails as the program's own timeout, which `sage-npu run` reports.
    slow = VADD.replace('#include <cstdio>', '#include <cstdio>\n#include <unistd.h>').replace(
        "    aclFinalize();", "    sleep(6);\n    aclFinalize();")
    assert DEFAULT_TIMEOUT_S > 6
    kit, cases = _vadd_sample(tmp_path, monkeypatch, slow)
    out = tmp_path / "outcomes.json"
    assert sweep.main([str(kit), "--cases", str(cases), "--jobs", "1", "--json", str(out), "--timeout", "2"]) == 0
    [outcome] = json.loads(out.read_text())["outcomes"]
    assert not outcome["passed"]
    assert outcome["reason"].startswith("timeout:") and "limit" in outcome["reason"], outcome["reason"]


def test_the_verdict_keeps_each_launchs_estimate():
    rep = ProgramReport.model_validate_json(program_json())
    rep.launches[0].timing = Timing(estimated_us=12.5, launch_overhead_us=3.0, roofline_us=9.0, bottleneck="MTE2",
                                    pipes={"MTE2": 9.0})
    v = sweep.program_verdict(rep.model_dump_json())
    assert v.why is None and v.estimates == [sweep.LaunchEstimate("add_custom", 8, 12.5, "MTE2")]
    text = sweep.report([sweep.Outcome("a/b", True, estimates=v.estimates)], "c0ffee", 1, {})
    assert "estimated: add_custom <<<8>>> 12.50 us (MTE2)" in text


def test_estimate_only_leaves_out_the_check_of_what_it_did_not_compute(tmp_path, monkeypatch, capsys):
    kit, cases = _vadd_sample(tmp_path, monkeypatch, VADD)
    write(kit / "examples" / "00_intro" / "vadd" / "scripts" / "verify_result.py", 'print("test failed!")\n')
    out = tmp_path / "outcomes.json"
    assert sweep.main([str(kit), "--cases", str(cases), "--jobs", "1", "--json", str(out)]) == 0
    assert not json.loads(out.read_text())["outcomes"][0]["passed"]  # the check runs, and fails
    assert sweep.main([str(kit), "--cases", str(cases), "--jobs", "1", "--json", str(out), "--estimate-only"]) == 0
    [outcome] = json.loads(out.read_text())["outcomes"]
    assert outcome["passed"], outcome["reason"]
    assert [e["kernel"] for e in outcome["estimates"]] == ["vadd_custom"]
    assert outcome["estimates"][0]["estimated_us"] > 0
    printed = capsys.readouterr().out
    assert "estimated: vadd_custom <<<2>>>" in printed and "outputs were not computed or verified" in printed
    failed = program_json("failed", 1, stdout="test failed!\n")  # a program checking the C it was not given
    assert sweep.program_verdict(failed, estimate_only=True).why is None
    assert sweep.program_verdict(failed).why == "the program printed: test failed!"
    assert sweep.program_verdict(program_json("faulted", 1), estimate_only=True).why is not None


def test_estimate_only_is_sage_npus_option_not_the_programs_argument(tmp_path):
    build = sweep.Build([tmp_path / "demo.asc"], {"SCENARIO_NUM": "2"})
    cmd = sweep.sage_run_command(build, tmp_path, tmp_path / "copy", ["1"], 60, estimate_only=True)
    assert cmd.index("--estimate-only") < cmd.index(str(tmp_path / "copy" / "demo.asc")) < cmd.index("--")
    assert cmd[-2:] == ["--", "1"]
