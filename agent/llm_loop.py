"""The SAGE loop with a model (DESIGN section 6): each turn retrieve, prompt, parse the rewrite and
its adoption block, evaluate, record.

The base a turn improves is the best correct kernel so far; until one exists, the latest attempt
(so the model iterates on its own fix). A turn the model answers badly costs that turn only: one
retry with the parse errors, one re-ask for missing adoption statuses, and otherwise the turn is
recorded as failed with every shown item undeclared. An endpoint that stays down ends the
episode with the reason, keeping what was found.
"""

from __future__ import annotations

import tempfile
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from sage_npu.agent.adoption_block import ParsedAnswer, parse_answer, reask_message
from sage_npu.agent.episode import (
    Attempt,
    OptimizeResult,
    acceptable,
    digest,
    evaluate_variant,
    faster,
    time_of,
    unified_diff,
)
from sage_npu.agent.episode_memory import EpisodeRecorder
from sage_npu.agent.llm import LLMCancelled, LLMClient, LLMError
from sage_npu.agent.prompt import LastTry, TaskView, chip_facts, retry_message, turn_messages
from sage_npu.agent.suites import has_kernel
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.report import Diagnostic, Report
from sage_npu.npu_eval.task import load_task

GOAL_DRAFT = ("There is no kernel yet: write the Ascend C kernel (one file with an extern \"C\" __global__ "
              "__aicore__ entry) and host.py, correct on every input group of the reference, then fast.")
GOAL_FIX = "The kernel is not correct yet: make it correct first (then fast)."
GOAL_SPEED = "The kernel is correct: make it faster while keeping it correct on every shape."


class _TurnFailed(Exception):
    """The model gave nothing usable this turn; the message says what."""


def optimize_llm(task_path: str | Path, evaluator: Evaluator, client: LLMClient, turns: int = 30, *,
                 on_attempt: Callable[[Attempt], None] | None = None, on_token: Callable[[str], None] | None = None,
                 recorder: EpisodeRecorder | None = None, hold: bool = False,
                 cancel: threading.Event | None = None) -> OptimizeResult:
    root = Path(task_path).expanduser().resolve()
    drafting = root.is_dir() and not has_kernel(root)
    if drafting:
        # No kernel yet (a benchmark task): the model writes kernel and host.py from the reference.
        kernel_name, reference = f"{root.name}.cpp", root / "reference.py"
        files: dict[str, str] = {}
        seed = _no_kernel_report(root, evaluator.settings.chip)
    else:
        task = load_task(root)
        root, kernel_name, reference = task.root, task.kernel.name, task.reference
        files = {kernel_name: task.kernel.read_text()}
        if task.host is not None:
            files["host.py"] = task.host.read_text()
        seed = evaluator.evaluate(task.root).report
    episode = recorder.episode_id if recorder is not None else uuid.uuid4().hex
    result = OptimizeResult(task=str(root), status="seed_not_correct", seed=seed, best=seed, speedup=1.0,
                            turns=0, episode_id=episode, best_files=dict(files), model=client.model or "")
    if recorder is not None:
        recorder.record(0, seed.status, time_of(seed))
    if reference is None or not reference.is_file() or (not drafting and "host.py" not in files):
        result.error = "the task has no host.py or reference.py: nothing to check a rewrite against"
        return _finish(result, recorder, hold, [], client)
    chip = chip_profile(evaluator.settings.chip)
    view = TaskView(operator=root.name, kernel_name=kernel_name, reference=reference.read_text(), chip=chip.name,
                    chip_facts=chip_facts(chip))
    best: Report | None = seed if acceptable(seed) else None
    base_files, base_report = dict(files), seed
    reports: dict[str, Report] = {digest(files): seed}
    last: LastTry | None = None
    proofs: list[tuple[str, str, float, list[str]]] = []
    first_ok_t = time_of(seed) if best is not None else None   # S_self divides by the first correct time
    with tempfile.TemporaryDirectory(prefix="sage-llm-") as tmp:
        for turn in range(1, turns + 1):
            if cancel is not None and cancel.is_set():
                result.error = "cancelled"
                break
            shown = recorder.retrieve(base_files.get(kernel_name, ""),
                                      [d.message for d in base_report.diagnostics]) if recorder else None
            ids = shown.shown_ids() if shown is not None else []
            goal = GOAL_SPEED if best is not None else GOAL_DRAFT if kernel_name not in base_files else GOAL_FIX
            messages = turn_messages(view, base_files, base_report, shown, last, goal)
            result.turns = turn
            try:
                parsed = _ask(client, messages, ids, on_token, cancel, need_host="host.py" not in base_files)
            except LLMCancelled:
                result.error = "cancelled"
                _record_failed(result, recorder, turn, "cancelled", "the request was cancelled", on_attempt)
                break
            except LLMError as e:
                result.error = str(e)
                _record_failed(result, recorder, turn, "llm_error", str(e), on_attempt)
                break
            except _TurnFailed as e:
                _record_failed(result, recorder, turn, "malformed", str(e), on_attempt)
                last = LastTry(turn, f"the answer could not be used ({e})")
                continue
            trial = dict(base_files)
            trial[kernel_name] = parsed.kernel
            if parsed.host is not None:
                trial["host.py"] = parsed.host
            key = digest(trial)
            report = reports.get(key)
            if report is None:
                report = evaluate_variant(evaluator, root, trial, Path(tmp) / f"turn{turn}")
                reports[key] = report
            t = time_of(report)
            improves = faster(report, time_of(best) if best is not None else None)
            adopted = tuple(i for i, a in parsed.adoptions.items() if a.status == "adopted")
            att = Attempt(turn, "model", _describe(parsed, adopted), report.status, t, improves,
                          tags=_tags_of(shown, adopted), adopted=adopted)
            if recorder is not None:
                att.attempt_id = recorder.record(turn, report.status, t, {
                    i: (a.status, a.reason) for i, a in parsed.adoptions.items()})
            result.attempts.append(att)
            change = unified_diff(base_files, trial)
            if improves:
                att.chosen = True
                if first_ok_t is None:
                    first_ok_t = t
                if best is not None:
                    proofs.append((att.attempt_id, att.description, time_of(best) / t, list(att.tags)))
                best = report
                base_files, base_report = trial, report
                result.applied.append(f"turn {turn}: {att.description}")
                last = None
            elif best is None:
                # Nothing correct yet: the next turn works on this attempt, whatever it got wrong.
                base_files, base_report = trial, report
                last = None
            else:
                last = LastTry(turn, _outcome(report, best), change)
            if on_attempt:
                on_attempt(att)
    if best is not None:
        result.best, result.best_files = best, base_files
        if best is seed:
            result.status = "no_improvement"
        elif acceptable(seed):
            result.status, result.speedup = "improved", time_of(seed) / time_of(best)
        else:
            result.status, result.speedup = "fixed", first_ok_t / time_of(best)
        result.diff = unified_diff(files, base_files)
        result.best_attempt_id = next((a.attempt_id for a in reversed(result.attempts) if a.chosen), "")
    return _finish(result, recorder, hold, proofs, client)


def _ask(client: LLMClient, messages: list[dict[str, str]], ids: list[str],
         on_token: Callable[[str], None] | None, cancel: threading.Event | None, need_host: bool) -> ParsedAnswer:
    """One answer, parsed; at most one retry for an unusable answer and one re-ask for missing statuses."""
    text = client.complete(messages, on_token=on_token, cancel=cancel).text
    parsed = _parse(text, ids, need_host)
    if not parsed.ok:
        messages = [*messages, {"role": "assistant", "content": text},
                    {"role": "user", "content": retry_message(parsed.errors)}]
        text = client.complete(messages, on_token=on_token, cancel=cancel).text
        parsed = _parse(text, ids, need_host)
        if not parsed.ok:
            raise _TurnFailed("; ".join(parsed.errors))
    if parsed.missing_ids:
        messages = [*messages, {"role": "assistant", "content": text},
                    {"role": "user", "content": reask_message(parsed)}]
        more = parse_answer(client.complete(messages, on_token=on_token, cancel=cancel).text, parsed.missing_ids,
                            code_required=False)
        parsed.adoptions.update(more.adoptions)
        parsed.missing_ids = more.missing_ids   # still missing: undeclared
    return parsed


def _parse(text: str, ids: list[str], need_host: bool) -> ParsedAnswer:
    parsed = parse_answer(text, ids)
    if need_host and parsed.host is None:
        parsed.errors.append("the task has no host.py yet: add the complete host.py (def launch(...) returning "
                             "Launch(...)) in a ```python block")
    return parsed


def _no_kernel_report(root: Path, chip: str) -> Report:
    """The seed of a task with nothing to run yet."""
    return Report(task=str(root), kernel=str(root / f"{root.name}.cpp"), chip=chip, backend="sim",
                  status="compile_error", diagnostics=[Diagnostic(
                      file=str(root / "reference.py"), line=1, column=1, end_line=1, end_column=1, severity="info",
                      code="task-error", message="no kernel yet: write the kernel and host.py for this reference")])


def _record_failed(result: OptimizeResult, recorder: EpisodeRecorder | None, turn: int, status: str, why: str,
                   on_attempt: Callable[[Attempt], None] | None) -> None:
    att = Attempt(turn, "model", why, status, None, False)
    if recorder is not None:
        att.attempt_id = recorder.record(turn, status, None, {})
    result.attempts.append(att)
    if on_attempt:
        on_attempt(att)


def _describe(parsed: ParsedAnswer, adopted: tuple[str, ...]) -> str:
    what = "rewrote the kernel" + (" and host.py" if parsed.host is not None else "")
    return what + (f", following {', '.join(adopted)}" if adopted else "")


def _tags_of(shown, adopted: tuple[str, ...]) -> tuple[str, ...]:
    if shown is None:
        return ()
    items = list(shown.resident) + [r.item for r in shown.items]
    return tuple(sorted({t for it in items if it.id in adopted for t in it.tags}))


def _outcome(report: Report, best: Report) -> str:
    if acceptable(report):
        return (f"correct but {time_of(report):.3f} us is not faster than the best so far "
                f"({time_of(best):.3f} us)")
    first = next((d for d in report.diagnostics if d.severity == "error"), None)
    detail = f": [{first.code}] line {first.line}: {first.message}" if first is not None else ""
    return f"{report.status}{detail}"


def _finish(result: OptimizeResult, recorder: EpisodeRecorder | None, hold: bool,
            proofs: list[tuple[str, str, float, list[str]]], client: LLMClient) -> OptimizeResult:
    """Credit the episode (or hold it for a person), then reflect on what proved itself."""
    if recorder is not None:
        _credit_and_reflect(result, recorder, hold, proofs, client)
    result.tokens = client.total_tokens   # reflection included
    return result


def _credit_and_reflect(result: OptimizeResult, recorder: EpisodeRecorder, hold: bool,
                        proofs: list[tuple[str, str, float, list[str]]], client: LLMClient) -> None:
    from sage_npu.agent.reflection import reflect

    if hold and result.status in ("improved", "fixed"):
        recorder.hold(result.turns)
    else:
        result.memory = recorder.credit(result.turns)
    if proofs:
        result.new_experiences = reflect(recorder, proofs, client, result.diff)
