"""Debug a block: a code lens "Debug block N" on the kernel entry of a runnable task, and the
command `sage.debugBlock(uri, block)`, which plans and builds the task for gdb off the event
loop (npu_eval/debug.py: `-g -O0`, stopped at the entry's first statement when block_idx is N)
and answers a `DebugLaunch`: the gdb command line on that build, the `sage-npu eval --debug`
line that does the same from any terminal, the stop, and a VS Code launch configuration
(cppdbg) whose stop the client sets as a conditional breakpoint.

The lens names block 0, or the block of the last verdict's first error when it names one (the
block worth a look). A client that starts a debugger itself says so in its experimental
capabilities (`sageDebugLaunch`, as the VS Code client does); any other (Neovim) gets the
command lines in a message, to run in a terminal.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from sage_npu.npu_eval.debug import DebugTarget, command_line
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.report import Report
from sage_npu.npu_eval.signature import find_entries
from sage_npu.npu_eval.stages import StageFailure
from sage_npu.npu_eval.task import Task
from sage_npu.server.features.base import Feature
from sage_npu.server.features.evaluation import task_of
from sage_npu.server.stores import ReportStore

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer

DEBUG_BLOCK = "sage.debugBlock"
STARTS_DEBUGGER = "sageDebugLaunch"  # experimental client capability: the client starts the debug session itself


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class DebugStopWire(_Wire):
    """Where gdb stops: a line of the user's kernel and the condition naming the block."""

    file: str
    line: int        # 1-based
    condition: str   # a gdb expression, `::block_idx == N`


class SetupCommand(_Wire):
    description: str
    text: str
    ignore_failures: bool = True


class LaunchConfiguration(BaseModel):
    """A VS Code launch configuration of the C/C++ extension's debugger (cppdbg), with its field
    names as VS Code spells them (on the wire: `model_dump(by_alias=True)`)."""

    name: str
    type: Literal["cppdbg"] = "cppdbg"
    request: Literal["launch"] = "launch"
    program: str
    args: list[str]
    cwd: str
    mi_mode: Literal["gdb"] = Field(default="gdb", serialization_alias="MIMode")
    mi_debugger_path: str = Field(serialization_alias="miDebuggerPath")
    stop_at_entry: bool = Field(default=False, serialization_alias="stopAtEntry")
    setup_commands: list[SetupCommand] = Field(serialization_alias="setupCommands")


class DebugLaunch(_Wire):
    """`sage.debugBlock`'s answer. `ready`: the task is built for gdb; else `reason` says why not."""

    ready: bool
    block: int
    reason: str | None = None
    task: str | None = None
    entry: str | None = None
    block_dim: int | None = None
    command_line: list[str] = []   # sage-npu eval TASK --debug --block N: builds and starts gdb in a terminal
    gdb: list[str] = []            # gdb on the build just made, stopped at `stop`
    terminal_line: str | None = None  # `gdb` as one shell line, to type or send to a terminal
    stop: DebugStopWire | None = None
    launch: LaunchConfiguration | None = None


def launch_configuration(target: DebugTarget, gdb: str) -> LaunchConfiguration:
    return LaunchConfiguration(
        name=f"SAGE: {target.entry}, block {target.block}", program=str(target.program), args=target.args,
        cwd=str(target.folder), mi_debugger_path=gdb, setup_commands=[
            SetupCommand(description="pretty printing", text="-enable-pretty-printing"),
            SetupCommand(description="the emulator's types", text=f"source {target.script}")])


def block_worth_a_look(report: Report | None) -> tuple[int, str | None]:
    """The block the lens offers: that of the verdict's first error naming one (with its code),
    else block 0."""
    for d in report.diagnostics if report is not None else []:
        if d.severity == "error" and d.block is not None and d.block >= 0:
            return d.block, d.code
    return 0, None


class Debugging(Feature):
    def __init__(self, server: SageServer, reports: ReportStore) -> None:
        super().__init__(server)
        self.reports = reports           # read: the block of the last verdict's first error
        self._one_at_a_time = threading.Lock()  # requests share the task's .sage/debug folder

    def commands(self) -> dict[str, Callable[..., Any]]:
        return {DEBUG_BLOCK: self.debug_block}

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri
        if not self.server.settings.server.code_lens:
            return []
        task = task_of(self.server, uri)
        if task is None or not task.runnable or Path(to_fs_path(uri) or "").resolve() != task.kernel:
            return []
        entries = find_entries(self.server.workspace.get_text_document(uri).source.encode("utf-8"))
        if not entries:
            return []
        found = self.reports.for_kernel(task.kernel)
        block, why = block_worth_a_look(found[0] if found is not None else None)
        pos = types.Position(line=entries[0].line - 1, character=0)
        title = f"Debug block {block}" + (f" ({why})" if why else "")
        return [types.CodeLens(range=types.Range(start=pos, end=pos),
                               command=types.Command(title=title, command=DEBUG_BLOCK, arguments=[uri, block]))]

    async def debug_block(self, uri: str, block: int = 0) -> dict:
        if not isinstance(uri, str):
            raise JsonRpcInvalidParams(f"{DEBUG_BLOCK}: the first argument must be a document URI, got {uri!r}")
        if not isinstance(block, int) or isinstance(block, bool) or block < 0:
            raise JsonRpcInvalidParams(f"{DEBUG_BLOCK}: block must be a block number (0 or more), got {block!r}")
        task = task_of(self.server, uri)
        if task is None:
            answer = DebugLaunch(ready=False, block=block, reason="not an Ascend C kernel task")
        else:
            answer = await self.server.off_loop(lambda: self._prepare(task, block), name="sage-debug")
        self._tell(answer)
        return answer.model_dump(mode="json", by_alias=True)

    def _prepare(self, task: Task, block: int) -> DebugLaunch:
        """In a thread: plan and build for gdb with a plan worker of its own, closed at the end."""
        settings = self.server.settings.eval
        cli = ["sage-npu", "eval", str(task.root), "--debug", "--block", str(block), "--chip", settings.chip]
        gdb = shutil.which("gdb")
        if gdb is None:
            return DebugLaunch(ready=False, block=block, task=str(task.root), command_line=cli,
                               reason="gdb is not installed where the server runs (Debian: apt-get install gdb)")
        with self._one_at_a_time, Evaluator(settings) as ev:
            target = ev.debug_target(task, block)
        if isinstance(target, StageFailure):
            first = next((d for d in target.diagnostics if d.severity == "error"), None)
            why = f"{Path(first.file).name}:{first.line}: {first.message}" if first else target.status
            return DebugLaunch(ready=False, block=block, task=str(task.root), command_line=cli,
                               reason=f"the task does not build for debugging: {why}")
        stop = DebugStopWire(file=target.stop.file, line=target.stop.line, condition=target.stop.condition)
        return DebugLaunch(ready=True, block=block, task=str(task.root), entry=target.entry,
                           block_dim=target.block_dim, command_line=cli, gdb=target.gdb_argv(gdb),
                           terminal_line=command_line(target.gdb_argv(gdb)), stop=stop,
                           launch=launch_configuration(target, gdb))

    def _tell(self, answer: DebugLaunch) -> None:
        """A client that does not start the debugger itself gets what to run in a terminal."""
        caps = self.server.client_capabilities
        experimental = caps.experimental if caps else None
        if isinstance(experimental, dict) and experimental.get(STARTS_DEBUGGER) is True:
            return
        if answer.ready:
            message = (f"SAGE: block {answer.block} of {answer.entry} is built for gdb (-g -O0). In a terminal: "
                       f"{answer.terminal_line}  (or, building again: {command_line(answer.command_line)})")
            kind = types.MessageType.Info
        else:
            message, kind = f"SAGE: block {answer.block} cannot be debugged: {answer.reason}", types.MessageType.Warning
        self.server.window_show_message(types.ShowMessageParams(type=kind, message=message))
