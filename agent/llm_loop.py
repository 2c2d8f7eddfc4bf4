"""The model as a searcher (docs/architecture.md, The agent): each turn it is prompted with the task, the memory's
items, the base and its report, and answers with a rewrite and its adoption block.

The driver (`agent/driver.py`) owns the loop: the base it shows is the best correct kernel so far,
or until one exists the latest attempt (so the model iterates on its own fix). A turn the model
answers badly costs that turn only: one retry with the parse errors, one re-ask for missing
adoption statuses (each quoting a bounded excerpt of the answer, never the whole), and otherwise a
failed turn (`malformed`) with every shown item undeclared. A rewrite identical to one evaluated
earlier is not evaluated again (`duplicate`): the next prompt names the earlier turn and its verdict.
The driver stops after `agent.max_unusable_answers` such turns in a row. A request that fails
(`llm_error`: the endpoint stays down) or is cancelled ends the episode, keeping what was found.
What the last rewrite did, when it was not kept, is told in the next prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from sage_npu.agent.adoption_block import ParsedAnswer, parse_answer, reask_message
from sage_npu.agent.driver import FailedTurn, Outcome, SearchState, SearchStop
from sage_npu.agent.episode import Candidate, Proof
from sage_npu.agent.llm import LLMCancelled, LLMClient, LLMError
from sage_npu.agent.prompt import LastTry, TaskView, chip_facts, excerpt, retry_message, turn_messages
from sage_npu.agent.reflection import Lessons, model_lessons
from sage_npu.memory.retrieval import Retrieval

GOAL_DRAFT = ("There is no kernel yet: write the Ascend C kernel (one file with an extern \"C\" __global__ "
              "__aicore__ entry) and host.py, correct on every input group of the reference, then fast.")
GOAL_FIX = "The kernel is not correct yet: make it correct first (then fast)."
GOAL_SPEED = "The kernel is correct: make it faster while keeping it correct on every shape."


class _TurnFailed(Exception):
    """The model gave nothing usable this turn; the message says what."""


class ModelSearcher:
    """A model behind an OpenAI-compatible endpoint as a `Searcher`: one rewrite per turn."""

    def __init__(self, client: LLMClient, *, on_token: Callable[[str], None] | None = None) -> None:
        self.client = client
        self.model = client.model or ""
        self.on_token = on_token
        self.last: LastTry | None = None     # the previous turn, when it was not kept

    @property
    def tokens(self) -> int:
        return self.client.total_tokens

    def propose(self, state: SearchState) -> list[Candidate] | FailedTurn | SearchStop:
        if state.reference is None:
            return SearchStop("no reference.py to show the model")
        view = TaskView(operator=state.operator, kernel_name=state.kernel_name, reference=state.reference.read_text(),
                        chip=state.chip.name, chip_facts=chip_facts(state.chip))
        goal = (GOAL_SPEED if state.best is not None else GOAL_DRAFT if state.kernel_name not in state.base_files
                else GOAL_FIX)
        messages = turn_messages(view, state.base_files, state.base_report, state.shown, self.last, goal)
        ids = state.shown.shown_ids() if state.shown is not None else []
        try:
            parsed = _ask(self.client, messages, ids, self.on_token, state.cancel,
                          need_host="host.py" not in state.base_files)
        except LLMCancelled:
            return FailedTurn("cancelled", "the request was cancelled")
        except LLMError as e:
            return FailedTurn("llm_error", str(e))
        except _TurnFailed as e:
            return FailedTurn("malformed", str(e))
        files = {state.kernel_name: parsed.kernel or ""}
        if parsed.host is not None:
            files["host.py"] = parsed.host
        adopted = tuple(i for i, a in parsed.adoptions.items() if a.status == "adopted")
        return [Candidate("model", _describe(parsed), files, tags=_tags_of(state.shown, adopted),
                          adoptions=dict(parsed.adoptions))]

    def observe(self, outcome: Outcome, state: SearchState) -> None:
        """What the next prompt says about this turn: nothing when it was kept or became the base."""
        turn = outcome.attempt.turn
        if outcome.attempt.status == "duplicate":
            self.last = LastTry(turn, f"it is {outcome.reason}")
        elif outcome.report is None:
            self.last = LastTry(turn, f"the answer could not be used ({outcome.reason})")
        elif outcome.kept or state.best is None:
            self.last = None
        else:
            self.last = LastTry(turn, outcome.attempt.reason or outcome.attempt.status, outcome.change)

    def lessons(self, operator: str, proofs: list[Proof], diff: str) -> Lessons:
        return model_lessons(self.client, operator, proofs, diff)


def _ask(client: LLMClient, messages: list[dict[str, str]], ids: list[str],
         on_token: Callable[[str], None] | None, cancel: threading.Event | None, need_host: bool) -> ParsedAnswer:
    """One answer, parsed; at most one retry for an unusable answer and one re-ask for missing statuses."""
    text = client.complete(messages, on_token=on_token, cancel=cancel).text
    parsed = _parse(text, ids, need_host)
    if not parsed.ok:
        messages = [*messages, {"role": "assistant", "content": excerpt(text)},
                    {"role": "user", "content": retry_message(parsed.errors)}]
        text = client.complete(messages, on_token=on_token, cancel=cancel).text
        parsed = _parse(text, ids, need_host)
        if not parsed.ok:
            raise _TurnFailed("; ".join(parsed.errors))
    if parsed.missing_ids:
        messages = [*messages, {"role": "assistant", "content": excerpt(text)},
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


def _describe(parsed: ParsedAnswer) -> str:
    return "rewrote the kernel" + (" and host.py" if parsed.host is not None else "")


def _tags_of(shown: Retrieval | None, adopted: tuple[str, ...]) -> tuple[str, ...]:
    if shown is None:
        return ()
    items = list(shown.resident) + [r.item for r in shown.items]
    return tuple(sorted({t for it in items if it.id in adopted for t in it.tags}))
