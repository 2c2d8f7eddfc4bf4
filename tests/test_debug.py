"""Debugging a block in gdb (npu_eval/debug.py, `sage-npu eval --debug`): gdb, driven in batch
mode, stops in the kernel at the entry's first statement of the block asked for, with
block_idx == N there, on the user's own file (a `.asc` file's too), and a breakpoint on a line
of the user's kernel is hit; the VS Code launch configuration does the same under gdb's MI, as
the C/C++ extension drives it; `sage-npu run --debug` stops in the block of every launch."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sage_npu.npu_eval.debug import DebugTarget
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.stages import StageFailure
from sage_npu.npu_eval.task import load_task

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"
GDB = shutil.which("gdb")
pytestmark = pytest.mark.skipif(GDB is None, reason="gdb is not installed (apt-get install gdb, as .ci/run does)")


def _line_of(path: Path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


def _batch(target: DebugTarget, *commands: str) -> str:
    """gdb as the target runs it, in batch mode, with `commands` run at the stop."""
    argv = target.gdb_argv(GDB or "gdb")
    at = argv.index("--args")
    extra = [x for c in commands for x in ("-ex", c)]
    done = subprocess.run([*argv[:at], "-batch", *extra, *argv[at:]], capture_output=True, text=True, timeout=120,
                          cwd=target.folder)
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def add_task(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("debug") / "add_custom"
    shutil.copytree(EXAMPLES / "add_custom", root)
    return root


def test_gdb_stops_at_the_kernel_entry_of_the_block_asked_for(add_task):
    kernel = add_task / "add_custom.cpp"
    with Evaluator() as ev:
        target = ev.debug_target(load_task(add_task), 3)
    assert isinstance(target, DebugTarget), target
    assert target.folder == add_task / ".sage" / "debug" and target.block_dim == 8
    entry_body = _line_of(kernel, "KernelAdd op;")
    assert (target.stop.file, target.stop.line) == (str(kernel), entry_body)
    out = _batch(target, "print (int)::block_idx", "list")
    assert "add_custom (x=0x" in out, out  # a GM_ADDR shows as an address, not as a string of its bytes
    assert re.search(rf"at {re.escape(str(kernel))}:{entry_body}\n{entry_body}\s+KernelAdd op;", out), out
    assert "$1 = 3" in out, out
    assert "op.Init(x, y, z, tiling.totalLength, tiling.tileNum);" in out  # `list` shows the user's code

    # A breakpoint on a line of the user's kernel, by its file name as the user sees it, is hit in that block.
    compute = _line_of(kernel, "AscendC::Add(zLocal, xLocal, yLocal, tileLength);")
    out = _batch(target, f"break add_custom.cpp:{compute}", "continue", "print (int)::block_idx", "frame")
    assert re.search(rf"Breakpoint 2, .*Compute.* at {re.escape(str(kernel))}:{compute}", out), out
    assert "$1 = 3" in out, out


def test_the_vs_code_launch_configuration_stops_in_the_block_under_gdb_mi(add_task):
    """The cppdbg launch configuration the server answers, driven as the C/C++ extension drives gdb
    (MI: its setupCommands, the program, its arguments and folder, VS Code's conditional breakpoint
    at the stop, run): it stops at the stop, in the block, with GM_ADDR arguments as addresses."""
    from sage_npu.server.features.debugging import launch_configuration

    with Evaluator() as ev:
        target = ev.debug_target(load_task(add_task), 5)
    assert isinstance(target, DebugTarget), target
    launch = launch_configuration(target, GDB or "gdb").model_dump(by_alias=True)
    stop = target.stop
    commands = [c["text"] for c in launch["setupCommands"]] + [
        f"-file-exec-and-symbols {launch['program']}", f"-environment-cd {launch['cwd']}",
        f"-exec-arguments {' '.join(launch['args'])}",
        f'-break-insert -f -c "{stop.condition}" {stop.file}:{stop.line}', "-exec-run",
        "-data-evaluate-expression (int)::block_idx", "-gdb-exit"]
    done = subprocess.run([launch["miDebuggerPath"], "--interpreter=mi2", "-q"], input="\n".join(commands) + "\n",
                          capture_output=True, text=True, timeout=120)
    stopped = next((ln for ln in done.stdout.splitlines() if ln.startswith("*stopped")), "")
    assert 'reason="breakpoint-hit"' in stopped and f'line="{stop.line}"' in stopped, done.stdout[-3000:]
    assert f'fullname="{stop.file}"' in stopped and re.search(r'name="x",value="0x[0-9a-f]+"', stopped), stopped
    assert '^done,value="5"' in done.stdout, done.stdout[-3000:]


def test_eval_debug_starts_gdb_stopped_in_the_block(add_task):
    kernel = add_task / "add_custom.cpp"
    entry_body = _line_of(kernel, "KernelAdd op;")
    # gdb reads its commands from stdin when it is not a terminal: the session a user would type.
    done = subprocess.run([sys.executable, "-m", "sage_npu.cli", "eval", str(add_task), "--debug", "--block", "6"],
                          input="print (int)::block_idx\ninfo source\n", capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert f"gdb stops at {kernel}:{entry_body}" in done.stderr
    assert "Breakpoint 1, add_custom" in out and f"at {kernel}:{entry_body}" in out, out
    assert "$1 = 6" in out, out
    assert f"Located in {kernel}" in out, out


def test_a_block_the_launch_does_not_run_is_refused_at_the_launch(add_task):
    with Evaluator() as ev:
        failed = ev.debug_target(load_task(add_task), 8)
    assert isinstance(failed, StageFailure)
    [d] = failed.diagnostics
    assert d.file.endswith("host.py") and "no block 8" in d.message and "0 to 7" in d.message
    done = subprocess.run([sys.executable, "-m", "sage_npu.cli", "eval", str(add_task), "--block", "2"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "use it with --debug" in done.stderr


def test_a_single_source_asc_file_is_debugged_on_its_own_lines(tmp_path):
    """A CANN sample's .asc (host main and kernel in one file): the build includes its kernel part,
    but gdb names and lists the .asc file itself."""
    root = tmp_path / "add_asc"
    shutil.copytree(EXAMPLES / "add_custom", root)
    cpp = root / "add_custom.cpp"
    asc = root / "add_custom.asc"
    asc.write_text(cpp.read_text() + "\nint main()\n{\n    add_custom<<<8, nullptr, nullptr>>>(nullptr, nullptr, "
                   "nullptr, AddTiling{});\n    return 0;\n}\n")
    cpp.unlink()
    with Evaluator() as ev:
        target = ev.debug_target(load_task(root), 1)
    assert isinstance(target, DebugTarget), target
    entry_body = _line_of(asc, "KernelAdd op;")
    out = _batch(target, "print (int)::block_idx", "list")
    assert f"at {asc}:{entry_body}" in out and "$1 = 1" in out, out
    assert "op.Process();" in out, out


FILL_PROGRAM = """\
#include "acl/acl.h"
#include "kernel_operator.h"

template <uint32_t blockLength>
__global__ __vector__ void fill_custom(__gm__ float* z, float value)
{
    AscendC::GlobalTensor<float> zGm;
    zGm.SetGlobalBuffer(z + blockLength * AscendC::GetBlockIdx(), blockLength);
    zGm.SetValue(0, value);
}

int main()
{
    float* zDevice = nullptr;
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtMalloc((void**)&zDevice, 8 * 256 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    fill_custom<256><<<4, nullptr, stream>>>(zDevice, 1.5f);
    aclrtSynchronizeStream(stream);
    fill_custom<128><<<8, nullptr, stream>>>(zDevice, 2.5f);
    aclrtSynchronizeStream(stream);
    aclrtFree(zDevice);
    return 0;
}
"""


def test_run_debug_stops_at_the_kernel_entry_in_the_block_of_every_launch(tmp_path):
    program = tmp_path / "fill.asc"
    program.write_text(FILL_PROGRAM)
    entry_body = _line_of(program, "AscendC::GlobalTensor<float> zGm;")
    done = subprocess.run([sys.executable, "-m", "sage_npu.cli", "run", str(program), "--debug", "--block", "3"],
                          input="print (int)::block_idx\ncontinue\nprint value\nprint (int)::block_idx\n",
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert f"gdb stops in block 3 at fill.asc:{entry_body}" in done.stderr
    # The first launch (4 blocks) stops in block 3, then the second (8 blocks) does, in its own instantiation.
    assert re.search(rf"fill_custom<256u> \(z=0x[0-9a-f]+, value=1\.5\)\s+at {re.escape(str(program))}:{entry_body}",
                     out), out
    assert re.search(r"fill_custom<128u> \(z=0x[0-9a-f]+, value=2\.5\)", out), out
    assert "$1 = 3" in out and "$2 = 2.5" in out and "$3 = 3" in out, out
