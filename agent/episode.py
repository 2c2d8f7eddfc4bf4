"""What every episode shares, whichever searcher drives it (the offline catalog or a model):
the statuses, the candidate, attempt, proof and result records, when a candidate counts, how a
variant is staged for evaluation, and the suggestion written next to the task. The loop itself
is `agent/driver.py`."""

from __future__ import annotations

import difflib
import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sage_npu.agent.adoption_block import Adoption
from sage_npu.memory.episodes import CreditResult
from sage_npu.memory.models import EpisodeLog
from sage_npu.npu_eval.report import Diagnostic, Report, Status

if TYPE_CHECKING:
    from sage_npu.memory.experience_memory import NewExperience

MIN_GAIN = 0.02  # a candidate must be at least 2% faster to count as better (estimates are noisy at the margin)

# A turn that produced nothing to evaluate: the answer was unusable after its retry, it repeated
# files evaluated earlier in the episode (`duplicate`: not evaluated again), the endpoint stayed
# down, or the request was cancelled.
FailedStatus = Literal["malformed", "duplicate", "llm_error", "cancelled"]
# An attempt's status: its Report's status, `flagged` for a kernel correct on every trial that still
# cannot be kept (an error finding, or no timing), or why nothing was evaluated.
AttemptStatus = Literal[Status, "flagged", FailedStatus]
# How an episode ended: `improved` (a correct seed made faster), `fixed` (an incorrect or missing
# seed made correct), `no_improvement` (a correct seed, nothing faster), `seed_not_correct`
# (nothing correct at all).
EpisodeStatus = Literal["improved", "fixed", "no_improvement", "seed_not_correct"]
# The statuses that leave a suggestion for the person (written, held open in the editor).
SUGGESTING: tuple[EpisodeStatus, ...] = ("improved", "fixed")


@dataclass
class Candidate:
    """What a searcher proposes: files replacing the base's, and what the change claims."""

    transform: str                 # the catalog transform, or "model" for an LLM rewrite
    description: str               # what changed, for people
    files: dict[str, str]          # file name -> new text (kernel and/or host.py); the rest stays the base's
    tags: tuple[str, ...] = ()     # what memory items about it are tagged
    adoptions: dict[str, Adoption] = field(default_factory=dict)  # declared statuses by shown item id;
    #                                                               a shown id left out is undeclared

    @property
    def adopted(self) -> tuple[str, ...]:
        return tuple(i for i, a in self.adoptions.items() if a.status == "adopted")


@dataclass
class Attempt:
    """One turn as the person sees it (`agent/progress.py` words it): what it was compared with,
    the best so far after it, and why it cannot be kept."""

    turn: int
    transform: str               # the catalog transform, or "model" for an LLM rewrite
    description: str
    status: AttemptStatus
    estimated_us: float | None   # only for a kernel that can be kept: never a time beside a wrong one
    improves: bool               # a new best: correct, error-free and MIN_GAIN faster than the best so far
    tags: tuple[str, ...] = ()
    chosen: bool = False         # kept as the next base (final in the result; progress may precede it)
    attempt_id: str = ""         # its id in the memory's attempts table
    adopted: tuple[str, ...] = ()  # memory item ids the turn declared it followed
    round: int = 0               # a searcher's proposal: a catalog round holds several candidates
    base_turn: int | None = 0    # the turn whose kernel the round's candidates change (0: the seed; None: none yet)
    vs_us: float | None = None   # the best correct time it was compared with (None: nothing correct before)
    vs_turn: int | None = None   # the turn of that best (0: the seed)
    best_us: float | None = None  # the best correct time after this turn
    best_turn: int | None = None
    reason: str = ""             # why it cannot be kept: the first error, the first wrong value, a repeat
    source_hash: str = ""        # `digest` of its files ("" when the answer had no code)
    speedup: float = 0.0         # T_first / its time when it can be kept (T_first: the first correct kernel)


@dataclass(frozen=True)
class Proof:
    """The evidence that a kept candidate made a correct kernel faster: reflection's input, and
    the experience it writes cites `attempt_id`."""

    attempt_id: str
    description: str
    before_us: float             # the best correct kernel's time before this candidate
    after_us: float
    tags: tuple[str, ...]
    trials: int                  # correctness trials it passed (all of them)
    estimated: bool              # the times are the CPU cost model's, not a device measurement
    change: str = ""             # its diff against the best before it (what a derived lesson states)

    @property
    def speedup(self) -> float:
        return self.before_us / self.after_us


@dataclass(frozen=True)
class RuleChange:
    """A resident rule the consolidation after the episode added to every prompt, or sent back to cold."""

    id: str
    title: str
    change: Literal["resident", "cold"]


@dataclass
class DeferredCredit:
    """What a deferred episode (a bench worker's) leaves for the one writer of the memory: its log,
    to credit, and its reflection's lessons, to store after it."""

    log: EpisodeLog
    lessons: list[NewExperience] = field(default_factory=list)


@dataclass
class OptimizeResult:
    task: str
    status: EpisodeStatus
    seed: Report
    best: Report
    speedup: float
    turns: int
    episode_id: str
    attempts: list[Attempt] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)     # descriptions of the accepted changes
    best_files: dict[str, str] = field(default_factory=dict)
    diff: str = ""
    memory: CreditResult | None = None          # the episode's ATU credit, when a memory is used
    best_attempt_id: str = ""                   # the memory's id of the best candidate's attempt
    new_experiences: list[str] = field(default_factory=list)
    reflection_note: str = ""                   # what reflection did, when not as planned (nothing stored, ...)
    model: str = "offline"
    tokens: int = 0                             # LLM tokens the episode used (prompt + completion)
    retries: int = 0                            # requests to the endpoint that were tried again
    error: str = ""                             # why the episode stopped early (a dead endpoint, say)
    memory_held: bool = False                   # recorded open for a person's accept or reject (the editor)
    item_titles: dict[str, str] = field(default_factory=dict)  # titles of the memory items the credit changed
    rules: list[RuleChange] = field(default_factory=list)      # what consolidation after the episode changed
    deferred: DeferredCredit | None = None      # a deferred episode's memory writes (sage-npu bench), not done yet

    def to_json(self) -> dict:
        return {"task": self.task, "status": self.status, "seed": self.seed.model_dump(mode="json"),
                "best": self.best.model_dump(mode="json"), "speedup": self.speedup, "turns": self.turns,
                "episode_id": self.episode_id, "applied": self.applied, "model": self.model, "tokens": self.tokens,
                "retries": self.retries,
                "error": self.error or None,
                "attempts": [a.__dict__ | {"tags": list(a.tags), "adopted": list(a.adopted)} for a in self.attempts],
                "diff": self.diff, "memory": self.memory.model_dump(mode="json") if self.memory else None,
                "new_experiences": self.new_experiences,
                "reflection_note": self.reflection_note or None,
                "rules": [r.__dict__ for r in self.rules]}


def time_of(r: Report | None) -> float | None:
    return r.timing.estimated_us if r is not None and r.timing is not None else None


def acceptable(r: Report) -> bool:
    """Correct on every trial, no error finding, and timed: only such a kernel may be suggested."""
    return r.status == "correct" and not r.errors() and r.timing is not None


def why_not_kept(r: Report) -> str:
    """Why a report's kernel cannot be kept, in one line: the first wrong value with the error
    figures, else the first error finding, else its status ("" when it can be kept)."""
    c = r.correctness
    m = c.first_mismatch if c is not None else None
    if r.status == "mismatch" and c is not None and m is not None:
        where = f"index {m.index}" + (f" of output {m.output}" if m.output else "") + (
            f" (trial {m.trial + 1})" if m.trial else "")
        return (f"wrong at {where}: got {m.got:g}, expected {m.expected:g}; max abs err {c.max_abs_err:.3g}, "
                f"max rel err {c.max_rel_err:.3g}; {c.passed}/{c.trials} trials pass")
    first = next(iter(r.errors()), None)
    if first is not None:
        prefix = "correct on every trial, but " if r.status == "correct" else f"{r.status}: "
        return _bounded(f"{prefix}[{first.code}] {Path(first.file).name}:{first.line}: {first.message}")
    if r.status == "correct":
        return "" if r.timing is not None else "correct, but not timed"
    return r.status


def _bounded(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def attempt_status(r: Report) -> AttemptStatus:
    """A report's status as an attempt's: `flagged` when correct but not acceptable."""
    return "flagged" if r.status == "correct" and not acceptable(r) else r.status


def faster(r: Report, than_us: float | None) -> bool:
    """The kept rule: acceptable and at least MIN_GAIN faster than `than_us` (any acceptable
    kernel when there is no correct one yet)."""
    t = time_of(r)
    return acceptable(r) and t is not None and (than_us is None or t < than_us * (1 - MIN_GAIN))


def digest(files: dict[str, str]) -> str:
    return hashlib.sha256("\0".join(f"{k}\0{v}" for k, v in sorted(files.items())).encode()).hexdigest()


def stage_variant(root: Path, files: dict[str, str], where: Path) -> Path:
    """A copy of the task at `where` with `files` replaced, to evaluate: the person's folder is
    never touched."""
    shutil.copytree(root, where, ignore=shutil.ignore_patterns(".sage", "__pycache__"))
    for name, text in files.items():
        (where / name).write_text(text)
    return where


def no_kernel_report(root: Path, chip: str) -> Report:
    """The seed of a task with nothing to run yet (a benchmark task whose kernel is to be drafted)."""
    return Report(task=str(root), kernel=str(root / f"{root.name}.cpp"), chip=chip, backend="sim",
                  status="compile_error", diagnostics=[Diagnostic(
                      file=str(root / "reference.py"), line=1, column=1, end_line=1, end_column=1, severity="info",
                      code="task-error", message="no kernel yet: write the kernel and host.py for this reference")])


def unified_diff(before: dict[str, str], after: dict[str, str]) -> str:
    """A patch of the changed files that `patch`/`git apply` (and the editor) can apply: a last line
    without a newline gets the marker diff(1) writes, instead of running into the next line."""
    out = []
    for name in sorted(after):
        if before.get(name) != after[name]:
            for line in difflib.unified_diff(before.get(name, "").splitlines(keepends=True),
                                             after[name].splitlines(keepends=True), f"a/{name}", f"b/{name}"):
                out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def write_suggestion(result: OptimizeResult) -> Path:
    """The best candidate next to the task: `<task>/.sage/suggestion/` with its files and diff."""
    out = Path(result.task) / ".sage" / "suggestion"
    out.mkdir(parents=True, exist_ok=True)
    for name, text in result.best_files.items():
        (out / name).write_text(text)
    (out / "suggestion.diff").write_text(result.diff)
    return out


def apply_suggestion(result: OptimizeResult) -> list[str]:
    """Replace the task's kernel and host.py, only with a correct candidate."""
    if result.status not in SUGGESTING or not acceptable(result.best):
        return []
    changed = []
    for name, text in result.best_files.items():
        p = Path(result.task) / name
        if p.read_text() != text:
            p.write_text(text)
            changed.append(name)
    return changed
