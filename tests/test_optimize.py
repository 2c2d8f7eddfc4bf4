"""The offline optimizer end to end: it finds a correct, faster kernel for a draft, writes
the suggestion next to the task, applies it only on request, and leaves an optimal or
incorrect kernel alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sage_npu.agent.driver import run_episode
from sage_npu.agent.offline import CatalogSearcher
from sage_npu.agent.transforms import Sources, propose
from sage_npu.cli import main
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    e = Evaluator(EvalSettings(trials=2, cache_dir=tmp_path_factory.getbasetemp() / "opt-cache"))
    yield e
    e.close()


def test_catalog_locates_each_transform_in_the_source():
    d = EXAMPLES / "vadd_naive"
    cands = propose(Sources("vadd_naive.cpp", (d / "vadd_naive.cpp").read_text(), (d / "host.py").read_text()),
                    chip_profile("910B2"))
    kinds = {c.transform for c in cands}
    assert {"double-buffering", "all-vector-cores", "bigger-tiles"} <= kinds
    db = next(c for c in cands if c.transform == "double-buffering")
    assert "constexpr int32_t BUFFER_NUM = 2;" in db.files["vadd_naive.cpp"]
    cores = next(c for c in cands if c.transform == "all-vector-cores")
    assert "MAX_CORES = 48" in cores.files["host.py"]


def test_the_catalog_proposes_only_unevaluated_files_and_never_fixes(ev):
    from sage_npu.agent.driver import SearchState, SearchStop
    from sage_npu.agent.episode import digest

    d = EXAMPLES / "vadd_naive"
    base = {"vadd_naive.cpp": (d / "vadd_naive.cpp").read_text(), "host.py": (d / "host.py").read_text()}
    seed = ev.evaluate(d).report

    def state(best, evaluated):
        return SearchState(operator="vadd_naive", kernel_name="vadd_naive.cpp", reference=d / "reference.py",
                           chip=chip_profile("910B2"), turn=0, base_files=base, base_report=seed, best=best,
                           shown=None, evaluated=frozenset(evaluated))

    first = CatalogSearcher().propose(state(seed, {digest(base)}))
    assert isinstance(first, list) and len(first) > 2
    tried = {digest(base)} | {digest({**base, **c.files}) for c in first[:2]}
    again = CatalogSearcher().propose(state(seed, tried))
    assert isinstance(again, list) and [c.description for c in again] == [c.description for c in first[2:]]
    assert isinstance(CatalogSearcher().propose(state(seed, tried | {digest({**base, **c.files}) for c in first})),
                      SearchStop)
    assert isinstance(CatalogSearcher().propose(state(None, {digest(base)})), SearchStop)


def test_optimizer_speeds_up_a_draft_and_every_step_is_correct(ev, tmp_path):
    task = tmp_path / "vadd"
    shutil.copytree(EXAMPLES / "vadd_naive", task)
    seen = []
    r = run_episode(task, ev, CatalogSearcher(), turns=8, on_attempt=seen.append)
    assert r.status == "improved" and r.speedup > 2
    assert r.best.status == "correct" and r.best.correctness.passed == r.best.correctness.trials
    assert r.best.timing.estimated_us < r.seed.timing.estimated_us
    assert len(seen) == r.turns <= 8
    assert any(a.chosen for a in seen) and all(a.status == "correct" or not a.improves for a in seen)
    assert "BUFFER_NUM = 2" in r.diff or "MAX_CORES = 48" in r.diff


def test_cli_writes_a_suggestion_and_applies_only_when_asked(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SAGE_NPU_MEMORY__EMBEDDER", "hashing")  # the real MiniLM is tested in the memory tests
    db = str(tmp_path / "mem")
    task = tmp_path / "vadd"
    shutil.copytree(EXAMPLES / "vadd_naive", task)
    before = (task / "host.py").read_text()
    assert main(["optimize", str(task), "--turns", "3", "--json", "--trials", "2", "--db", db]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"task", "status", "seed", "best", "speedup", "turns", "episode_id"} <= set(out)
    assert out["status"] == "improved" and out["speedup"] > 1
    assert (task / ".sage" / "suggestion" / "suggestion.diff").read_text() == out["diff"]
    assert out["memory"]["credited"] and out["memory"]["reward"] > 0
    assert (task / "host.py").read_text() == before  # nothing applied without --apply
    assert main(["optimize", str(task), "--turns", "3", "--apply", "--trials", "2", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "applied to" in out and "memory: episode" in out and "credited (the fastest correct kernel is" in out
    assert (task / "host.py").read_text() != before or "BUFFER_NUM = 2" in (task / "vadd_naive.cpp").read_text()


def test_incorrect_kernel_is_not_optimized(ev, tmp_path):
    task = tmp_path / "bad"
    shutil.copytree(EXAMPLES / "vadd_naive", task)
    k = task / "vadd_naive.cpp"
    k.write_text(k.read_text().replace("AscendC::Add(", "AscendC::Sub("))
    r = run_episode(task, ev, CatalogSearcher(), turns=5)
    assert r.status == "seed_not_correct" and r.turns == 0 and not (task / ".sage").exists()


def test_an_episode_credits_what_it_followed_and_remembers_what_worked(ev, tmp_path):
    from sage_npu.agent.episode_memory import EpisodeRecorder
    from sage_npu.memory.experience_memory import ExperienceMemory
    from sage_npu.memory.settings import MemorySettings

    memory = ExperienceMemory.open(MemorySettings(db=tmp_path / "mem", embedder="hashing"))
    task = tmp_path / "vadd"
    shutil.copytree(EXAMPLES / "vadd_naive", task)
    recorder = EpisodeRecorder(memory, operator="vadd_naive")
    r = run_episode(task, ev, CatalogSearcher(), turns=6, recorder=recorder)
    assert r.status == "improved"
    credit = r.memory
    assert credit.credited and credit.reward == pytest.approx(1 - r.best.timing.estimated_us
                                                             / r.seed.timing.estimated_us, rel=1e-6)
    # credit follows the attempt: items followed by a new best gain, the others do not
    best = {c.item_id for c in credit.changes if c.credit == "new_best"}
    assert best, "the transforms that won follow some starter experience"
    for item_id in best:
        assert memory.item(item_id).u > 0
    assert all(c.xi is None for c in credit.changes if c.credit == "correct")
    # Every shown item has a status in every turn that followed a transform.
    assert {a.turn for a in recorder.adoptions} == set(range(1, r.turns + 1))
    # Reflection: what worked is remembered, tied to the attempt that proves it.
    assert r.new_experiences
    new = memory.item(r.new_experiences[0])
    assert new.evidence and new.evidence[0].startswith(r.episode_id + "/")
    # Crediting the same episode again changes nothing.
    assert recorder.credit(r.turns).already_credited


def test_the_suggestion_diff_applies_even_without_final_newlines(tmp_path):
    import subprocess

    from sage_npu.agent.episode import unified_diff

    before = {"k.cpp": "int a;\nint b;", "host.py": "x = 1\n"}
    after = {"k.cpp": "int a;\nint c;", "host.py": "x = 2\n"}
    for name, text in before.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "s.diff").write_text(unified_diff(before, after))
    subprocess.run(["git", "apply", "s.diff"], cwd=tmp_path, check=True, capture_output=True)
    assert {n: (tmp_path / n).read_text() for n in after} == after
