"""The episode driver with a scripted searcher and an evaluator that reads the verdict from the
staged copy's kernel: the kept rule, rounds, no candidate evaluated twice, the stop reasons, the
base when nothing is correct yet, and hold versus credit and reflection."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sage_npu.agent.adoption_block import Adoption
from sage_npu.agent.driver import NO_CHECK, FailedTurn, Outcome, SearchState, SearchStop, run_episode
from sage_npu.agent.episode import Candidate, Proof, digest
from sage_npu.agent.reflection import Lessons, deterministic_lessons
from sage_npu.npu_eval.evaluate import Evaluation
from sage_npu.npu_eval.report import Correctness, Diagnostic, Mismatch, Report, Timing
from sage_npu.npu_eval.settings import EvalSettings

KERNEL = "k.cpp"


def kernel(status: str = "correct", us: float = 10.0, error: bool = False) -> str:
    return f'extern "C" __global__ __aicore__ void k() {{}}\n// status={status} us={us} error={int(error)}\n'


class FakeEvaluator:
    """Evaluates the folder it is given by reading `// status=... us=... error=...` from its kernel."""

    def __init__(self) -> None:
        self.settings = EvalSettings()
        self.evaluated: list[Path] = []

    def evaluate(self, where: Path) -> Evaluation:
        self.evaluated.append(where)
        text = next(where.glob("*.cpp")).read_text()
        m = re.search(r"status=(\w+) us=([\d.]+) error=(\d)", text)
        assert m is not None, text
        status, us, error = m.group(1), float(m.group(2)), m.group(3) == "1"
        diags = [Diagnostic(file=str(where / KERNEL), line=2, end_line=2, end_column=2, severity="error",
                            code="gm-race", message="a race")] if error else []
        return Evaluation(Report(task=str(where), kernel=str(where / KERNEL), status=status, diagnostics=diags,
                      correctness=Correctness(trials=2, passed=2 if status == "correct" else 0, max_abs_err=0,
                                              mean_rel_err=0, max_rel_err=0),
                      timing=Timing(estimated_us=us, launch_overhead_us=0, roofline_us=0.1, bottleneck="V",
                                    pipes={}) if status == "correct" else None))


@dataclass
class ScriptedSearcher:
    """Proposes the scripted rounds in order, then stops; remembers what it was shown and told."""

    script: list
    model: str = "fake"
    tokens: int = 0
    states: list[SearchState] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    lessons_for: list[list[Proof]] = field(default_factory=list)

    def propose(self, state: SearchState):
        self.states.append(state)
        if not self.script:
            return SearchStop("script done")
        step = self.script.pop(0)
        return step() if callable(step) else step

    def observe(self, outcome: Outcome, state: SearchState) -> None:
        self.outcomes.append(outcome)

    def lessons(self, operator: str, proofs: list[Proof], diff: str):
        self.lessons_for.append(proofs)
        return Lessons(deterministic_lessons(operator, proofs))


def cand(name: str, status: str = "correct", us: float = 10.0, error: bool = False, host: str | None = None,
         adopt: tuple[str, ...] = ()) -> Candidate:
    files = {KERNEL: kernel(status, us, error)}
    if host is not None:
        files["host.py"] = host
    return Candidate(name, f"{name}: {status} {us}", files,
                     adoptions={i: Adoption(id=i, status="adopted", reason="it applies") for i in adopt})


@pytest.fixture
def task(tmp_path: Path) -> Path:
    d = tmp_path / "op"
    d.mkdir()
    (d / KERNEL).write_text(kernel("correct", 10.0))
    (d / "host.py").write_text("def launch(x):\n    pass\n")
    (d / "reference.py").write_text("class Model: pass\n")
    return d


class FakeMemory:
    def __init__(self) -> None:
        self.added: list = []

    def add_experiences(self, new) -> list[str]:
        self.added += list(new)
        return [f"x{k}" for k in range(len(self.added))]


@dataclass
class FakeRecorder:
    """The EpisodeRecorder's interface, keeping the calls."""

    operator: str = "op"
    episode_id: str = "ep"
    memory: FakeMemory = field(default_factory=FakeMemory)
    records: list[tuple] = field(default_factory=list)
    held: list[int] = field(default_factory=list)
    credited: list[int] = field(default_factory=list)
    hashes: list[tuple[str, float]] = field(default_factory=list)
    calibrations: list = field(default_factory=list)

    def retrieve(self, kernel: str, diagnostics: list[str]):
        return None

    def record(self, turn, status, time_us, declared=None, source_hash="", speedup=0.0) -> str:
        self.records.append((turn, status, time_us, declared))
        self.hashes.append((source_hash, speedup))
        return f"{self.episode_id}/{turn}"

    def hold(self, turns: int) -> None:
        self.held.append(turns)

    def calibrate(self, records) -> None:
        self.calibrations.extend(records)

    def credit(self, turns: int):
        self.credited.append(turns)
        return "credit"

    def learn(self, experiences) -> list[str]:
        return self.memory.add_experiences(experiences)


def test_kept_means_correct_error_free_and_two_percent_faster(task):
    ev = FakeEvaluator()
    s = ScriptedSearcher([[cand("marginal", us=9.9)], [cand("racy", us=5.0, error=True)],
                          [cand("wrong", "mismatch", 1.0)], [cand("good", us=9.0)], [cand("marginal2", us=8.9)]])
    r = run_episode(task, ev, s, turns=10)
    assert [(a.transform, a.improves, a.chosen) for a in r.attempts] == [
        ("marginal", False, False), ("racy", False, False), ("wrong", False, False), ("good", True, True),
        ("marginal2", False, False)]
    assert r.status == "improved" and r.speedup == pytest.approx(10 / 9) and r.turns == 5
    assert r.applied == ["turn 4: good: correct 9.0"] and "us=9.0" in r.best_files[KERNEL]
    assert (task / KERNEL).read_text() == kernel("correct", 10.0)          # evaluated in copies only
    assert all(p != task for p in ev.evaluated[1:])


def test_a_round_keeps_its_fastest_winner_and_proposals_start_from_the_new_base(task):
    s = ScriptedSearcher([[cand("a", us=9.0), cand("b", us=7.0), cand("c", us=8.0)], [cand("d", us=6.0)]])
    r = run_episode(task, FakeEvaluator(), s, turns=10)
    assert [a.transform for a in r.attempts if a.chosen] == ["b", "d"]
    # each candidate is compared with the best so far, this round's earlier candidates included
    assert [a.improves for a in r.attempts] == [True, True, False, True]
    assert [(a.round, a.vs_us, a.vs_turn, a.best_us, a.best_turn) for a in r.attempts] == [
        (1, 10.0, 0, 9.0, 1), (1, 9.0, 1, 7.0, 2), (1, 7.0, 2, 7.0, 2), (2, 7.0, 2, 6.0, 4)]
    assert r.attempts[2].reason == "not faster than the best so far (7.000 us, turn 2)"
    assert [a.base_turn for a in r.attempts] == [0, 0, 0, 2]
    assert "us=7.0" in s.states[1].base_files[KERNEL] and s.states[1].best.timing.estimated_us == 7.0
    assert r.speedup == pytest.approx(10 / 6)


def test_no_file_set_is_evaluated_twice_and_the_searcher_is_told_the_earlier_verdict(task):
    ev = FakeEvaluator()
    twin = cand("twin", us=9.0)
    s = ScriptedSearcher([[cand("seed-again")], [twin], [cand("twin-again", us=9.0)],
                          [cand("new", us=8.0), cand("twin-in-a-round", us=9.0)]])
    s.script[0][0].files = {KERNEL: (task / KERNEL).read_text()}
    r = run_episode(task, ev, s, turns=10)
    assert len(ev.evaluated) == 3                      # the seed, the twin and "new", nothing else
    assert [(a.transform, a.status, a.chosen) for a in r.attempts] == [
        ("seed-again", "duplicate", False), ("twin", "correct", True), ("twin-again", "duplicate", False),
        ("new", "correct", True)]                      # a repeat inside a round is dropped without a turn
    assert r.turns == 4 and r.attempts[0].estimated_us is None
    assert s.outcomes[0].reason == ("the same files as the seed, not evaluated again (correct, 10.000 us): "
                                    "propose a different change")
    assert "the same files as turn 2" in s.outcomes[2].reason
    key = digest({KERNEL: twin.files[KERNEL], "host.py": (task / "host.py").read_text()})
    assert key in s.states[-1].evaluated and r.attempts[1].source_hash == key == r.attempts[2].source_hash


def test_answers_without_a_usable_candidate_stop_the_episode(task):
    rec = FakeRecorder()
    s = ScriptedSearcher([FailedTurn("malformed", "only prose"), [cand("a", us=9.0)],
                          FailedTurn("malformed", "only prose"), [cand("a", us=9.0)],
                          FailedTurn("malformed", "no ```cpp block"), [cand("never", us=1.0)]])
    r = run_episode(task, FakeEvaluator(), s, turns=30, recorder=rec, max_unusable=3)
    assert [a.status for a in r.attempts] == ["malformed", "correct", "malformed", "duplicate", "malformed"]
    assert r.turns == 5 and r.status == "improved"     # what was found is kept
    assert r.error.startswith("no usable candidate in 3 answers in a row (the last: no ```cpp block)")
    assert "agent.max_unusable_answers" in r.error


def test_a_wrong_kernel_says_why_and_shows_no_time(task):
    def wrong(where: Path) -> Evaluation:
        rep = FakeEvaluator().evaluate(where).report
        rep.correctness = Correctness(trials=2, passed=0, max_abs_err=1.5, mean_rel_err=0.2, max_rel_err=0.75,
                                      first_mismatch=Mismatch(index=17, got=3.5, expected=2.0))
        rep.timing = Timing(estimated_us=1.0, launch_overhead_us=0, roofline_us=0.1, bottleneck="V", pipes={})
        return Evaluation(rep)

    ev = FakeEvaluator()
    s = ScriptedSearcher([[cand("w", "mismatch", 1.0), cand("racy", us=5.0, error=True)]])
    r = run_episode(task, ev, s, turns=5)
    ev2 = FakeEvaluator()
    ev2.evaluate = wrong   # the mismatch figures of a real report
    r2 = run_episode(task, ev2, ScriptedSearcher([[cand("w", "mismatch", 1.0)]]), turns=5)
    (w,) = r2.attempts
    assert (w.status, w.estimated_us, w.speedup) == ("mismatch", None, 0.0)
    assert w.reason == "wrong at index 17: got 3.5, expected 2; max abs err 1.5, max rel err 0.75; 0/2 trials pass"
    racy = r.attempts[1]
    assert (racy.status, racy.estimated_us, racy.improves) == ("flagged", None, False)
    assert racy.reason == "correct on every trial, but [gm-race] k.cpp:2: a race"


def test_the_episode_stops_at_the_budget(task):
    endless = [lambda k=k: [cand(f"c{k}", us=10.0 - k * 0.5)] for k in range(1, 50)]
    r = run_episode(task, FakeEvaluator(), ScriptedSearcher(endless), turns=4)
    assert r.turns == 4 and len(r.attempts) == 4 and not r.error


def test_a_round_is_cut_at_the_budget(task):
    r = run_episode(task, FakeEvaluator(), ScriptedSearcher([[cand(f"c{k}", us=9 - k) for k in range(5)]]), turns=3)
    assert [a.transform for a in r.attempts] == ["c0", "c1", "c2"] and r.attempts[2].chosen


def test_cancel_stops_before_the_next_candidate(task):
    cancel = threading.Event()
    s = ScriptedSearcher([[cand("a", us=9.0), cand("b", us=8.0)], [cand("c", us=7.0)]])
    r = run_episode(task, FakeEvaluator(), s, turns=10, cancel=cancel, on_attempt=lambda a: cancel.set())
    assert [a.transform for a in r.attempts] == ["a"] and r.error == "cancelled"
    assert r.status == "improved" and r.attempts[0].chosen        # what was found is kept


def test_a_dead_endpoint_ends_the_episode_and_a_bad_answer_costs_one_turn(task):
    rec = FakeRecorder()
    s = ScriptedSearcher([FailedTurn("malformed", "only prose"), [cand("a", us=9.0)],
                          FailedTurn("llm_error", "cannot connect to the endpoint"), [cand("never", us=1.0)]])
    r = run_episode(task, FakeEvaluator(), s, turns=10, recorder=rec)
    assert [a.status for a in r.attempts] == ["malformed", "correct", "llm_error"]
    assert r.error == "cannot connect to the endpoint" and r.turns == 3 and r.status == "improved"
    failed = [(t, st, d) for t, st, _, d in rec.records if st != "correct"]
    assert failed == [(1, "malformed", {}), (3, "llm_error", {})]
    assert s.outcomes[0].report is None and s.outcomes[0].reason == "only prose"


def test_an_exhausted_searcher_ends_the_episode_without_an_error(task):
    r = run_episode(task, FakeEvaluator(), ScriptedSearcher([[cand("a", us=12.0)]]), turns=10)
    assert r.status == "no_improvement" and r.turns == 1 and not r.error and r.best is r.seed and r.diff == ""


def test_until_something_is_correct_the_base_is_the_latest_attempt_and_the_first_correct_is_kept(task):
    (task / KERNEL).write_text(kernel("mismatch", 1.0))
    s = ScriptedSearcher([[cand("a", "compile_error")], [cand("b", us=20.0)], [cand("c", us=10.0)]])
    r = run_episode(task, FakeEvaluator(), s, turns=10)
    assert "compile_error" in s.states[1].base_files[KERNEL] and s.states[1].best is None
    assert [a.chosen for a in r.attempts] == [False, True, True]
    assert r.status == "fixed" and r.speedup == pytest.approx(2.0)     # over the first correct


def test_nothing_correct_leaves_the_seed(task):
    (task / KERNEL).write_text(kernel("mismatch", 1.0))
    r = run_episode(task, FakeEvaluator(), ScriptedSearcher([[cand("a", "mismatch")]]), turns=10)
    assert r.status == "seed_not_correct" and r.best is r.seed and r.best_attempt_id == ""


def test_a_task_with_nothing_to_check_against_is_not_searched(task):
    (task / "host.py").unlink()
    s = ScriptedSearcher([[cand("a", us=1.0)]])
    r = run_episode(task, FakeEvaluator(), s, turns=10)
    assert r.error == NO_CHECK and not s.states and r.turns == 0


def test_a_task_without_a_kernel_is_drafted(task):
    (task / KERNEL).unlink()
    (task / "host.py").unlink()
    s = ScriptedSearcher([[cand("draft", us=10.0, host="def launch(x):\n    pass\n")]])
    r = run_episode(task, FakeEvaluator(), s, turns=10)
    assert s.states[0].base_files == {} and s.states[0].kernel_name == "op.cpp"
    assert r.seed.status == "compile_error" and r.status == "fixed" and set(r.best_files) == {KERNEL, "host.py"}


@pytest.mark.parametrize(("hold", "script", "held", "status"), [
    (True, [[cand("a", us=9.0)]], True, "improved"),
    (True, [[cand("a", us=11.0)]], False, "no_improvement"),
    (False, [[cand("a", us=9.0)]], False, "improved"),
])
def test_hold_only_an_episode_that_leaves_a_suggestion(task, hold, script, held, status):
    rec = FakeRecorder()
    r = run_episode(task, FakeEvaluator(), ScriptedSearcher(script), turns=5, recorder=rec, hold=hold)
    assert r.status == status
    assert (rec.held, rec.credited) == (([1], []) if held else ([], [1]))
    assert (r.memory is None) == held


def test_a_fix_is_held_and_reflection_needs_a_proof(task):
    (task / KERNEL).write_text(kernel("mismatch", 1.0))
    rec, s = FakeRecorder(), ScriptedSearcher([[cand("fix", us=10.0)]])
    r = run_episode(task, FakeEvaluator(), s, turns=5, recorder=rec, hold=True)
    assert r.status == "fixed" and rec.held == [1] and not s.lessons_for and r.new_experiences == []


def test_reflection_gets_one_proof_per_kept_speedup_with_its_evidence(task):
    rec = FakeRecorder()
    s = ScriptedSearcher([[cand("a", us=8.0, adopt=("m1",))], [cand("b", us=4.0)]])
    r = run_episode(task, FakeEvaluator(), s, turns=5, recorder=rec, hold=True)
    (proofs,) = s.lessons_for
    assert [(p.attempt_id, p.before_us, p.after_us, p.trials, p.estimated) for p in proofs] == [
        ("ep/1", 10.0, 8.0, 2, True), ("ep/2", 8.0, 4.0, 2, True)]
    assert r.new_experiences == ["x0", "x1"] and rec.memory.added[0].evidence == ["ep/1"]
    assert r.attempts[0].adopted == ("m1",) and rec.records[1][3]["m1"].status == "adopted"
    assert r.best_attempt_id == "ep/2" and rec.held == [2]
    # every attempt is recorded with its source hash and its speedup over the first correct kernel (the seed)
    assert [sp for _, sp in rec.hashes] == [1.0, 1.25, 2.5] and all(len(h) == 64 for h, _ in rec.hashes)
    assert rec.hashes[2][0] == r.attempts[1].source_hash
