"""Cross-core flag faults of mixed launches (sage_sim/mix.h), one C++ driver: each scenario is a
launch through mix_run (one AI Core: its AIC and two AIVs as fibers) that provokes one fault, and
the Python side checks every fault's code and line, and what the messages say."""

from __future__ import annotations

import pytest

from tests.sim_driver import PRELUDE, Run, build_and_run, main_calling

DRIVER = PRELUDE + r"""
template <class Body>
static int mixed(int type, int block_dim, Body body) {
    return sage::sim::mix_run(type, block_dim, 0x5A, [&](int) { body(); }, [](sage::sim::BlockState&) {});
}
static bool aiv() { return g_coreType == AIV; }

static void pipe_s() {
    mixed(KERNEL_TYPE_MIX_AIC_1_2, 1, [] {
        expect("api-misuse", __LINE__ + 1);
        if (aiv()) CrossCoreSetFlag<2, PIPE_S>(0);
    });
}
static void mode_4() {
    mixed(KERNEL_TYPE_MIX_AIC_1_2, 1, [] {
        expect("api-misuse", __LINE__ + 1);
        if (aiv()) CrossCoreSetFlag<4, PIPE_V>(0);
    });
}
static void mode_1_on_aic() {
    mixed(KERNEL_TYPE_MIX_AIC_1_2, 1, [] {
        expect("api-misuse", __LINE__ + 1);
        if (!aiv()) CrossCoreSetFlag<1, PIPE_FIX>(0);
    });
}
static void mode_2_not_mixed() {
    mixed(KERNEL_TYPE_AIV_ONLY, 2, [] {
        expect("api-misuse", __LINE__ + 1);
        CrossCoreSetFlag<2, PIPE_MTE3>(0);
    });
}
static void counter_overflow() {
    // the AIC sets flag 5 sixteen times; no AIV waits: the AIVs' counters would reach 16
    mixed(KERNEL_TYPE_MIX_AIC_1_2, 1, [] {
        expect("api-misuse", __LINE__ + 1);
        for (int i = 0; i < 16 && !aiv(); ++i) CrossCoreSetFlag<2, PIPE_FIX>(5);
    });
}
static void counter_drained() {
    // the AIC sets flag 4 forty times before it waits for anything; the AIV takes each: the AIC runs
    // first, so it yields at a full counter until the AIV has taken one (no fault; 40 taken)
    static int taken;
    taken = 0;
    int s = mixed(KERNEL_TYPE_MIX_AIC_1_1, 1, [] {
        for (int i = 0; i < 40 && !aiv(); ++i) CrossCoreSetFlag<2, PIPE_FIX>(4);
        for (int i = 0; i < 40 && aiv(); ++i) CrossCoreWaitFlag(4), ++taken;
    });
    int out[2] = {s, taken};
    write_raw("drained", out, sizeof out);
}
static void never_set() {
    // AIV 1 waits for its sibling in mode 1, but AIV 0 never sets: only AIV 1 is stuck
    mixed(KERNEL_TYPE_MIX_AIC_1_2, 1, [] {
        expect("flag-deadlock", __LINE__ + 1);
        if (aiv() && GetSubBlockIdx() == 1) CrossCoreWaitFlag(7);
    });
}
static void only_one_aiv_sets() {
    // mode 2 needs both AIVs' sets before the AIC's counter moves: one is not enough
    mixed(KERNEL_TYPE_MIX_AIC_1_2, 1, [] {
        if (aiv() && GetSubBlockIdx() == 0) CrossCoreSetFlag<2, PIPE_MTE3>(2);
        expect("flag-deadlock", __LINE__ + 1);
        if (!aiv()) CrossCoreWaitFlag(2);
    });
}
static void one_aiv_sets_twice() {
    // each AIV must set once per increment: AIV 0 setting twice, AIV 1 never, releases nothing
    mixed(KERNEL_TYPE_MIX_AIC_1_2, 1, [] {
        if (aiv() && GetSubBlockIdx() == 0) CrossCoreSetFlag<2, PIPE_MTE3>(6);
        if (aiv() && GetSubBlockIdx() == 0) CrossCoreSetFlag<2, PIPE_MTE3>(6);
        expect("flag-deadlock", __LINE__ + 1);
        if (!aiv()) CrossCoreWaitFlag(6);
    });
}
static void flag_id_low_bits() {
    // flag 17 is flag 1 (the low 4 bits): the wait on 1 is satisfied, no fault
    int s = mixed(KERNEL_TYPE_MIX_AIC_1_1, 1, [] {
        if (!aiv()) CrossCoreSetFlag<2, PIPE_FIX>(17);
        if (aiv()) CrossCoreWaitFlag(1);
    });
    write_raw("low_bits_status", &s, sizeof s);
}
static void cube_on_aiv() {
    mixed(KERNEL_TYPE_MIX_AIC_1_2, 1, [] {
        TPipe pipe;
        TQue<TPosition::A1, 1> q1;
        TQue<TPosition::A2, 1> q2;
        pipe.InitBuffer(q1, 1, 512);
        pipe.InitBuffer(q2, 1, 512);
        LocalTensor<half> a1 = q1.AllocTensor<half>(), a2 = q2.AllocTensor<half>();
        expect("api-misuse", __LINE__ + 1);
        if (aiv()) LoadData(a2, a1, LoadData2DParams{0, 1, 0, 0, 0, false, 0});
    });
}
""" + main_calling("pipe_s();", "mode_4();", "mode_1_on_aic();", "mode_2_not_mixed();", "counter_overflow();",
                   "counter_drained();", "never_set();", "only_one_aiv_sets();", "one_aiv_sets_twice();",
                   "flag_id_low_bits();", "cube_on_aiv();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("sim_mix"), DRIVER)


def test_every_fault_is_reported_at_its_line(run):
    expected = {(row[1], int(row[2])) for row in run.rows("EXPECT")}
    found: dict[tuple[str, int], str] = {}
    for row in run.rows("FAULT"):
        found.setdefault((row[1], int(row[2])), row[3])
    assert expected and expected <= set(found), (expected - set(found), found)
    assert set(found) == expected, set(found) - expected
    msgs = sorted(found.values())
    assert any("the pipe must be PIPE_V" in m for m in msgs), msgs
    assert any("the 910B has modes 0, 1 and 2" in m for m in msgs), msgs
    assert any("mode 1 synchronises the AIVs" in m for m in msgs), msgs
    assert any("needs a mixed kernel" in m for m in msgs), msgs
    assert any("would reach 16, but it counts 0-15" in m for m in msgs), msgs
    assert any(m.startswith("AIV 1 (AI Core 0, sub-block 1) waits at CrossCoreWaitFlag(7)") for m in msgs), msgs
    assert any(m.startswith("AIC 0 waits at CrossCoreWaitFlag(2)") for m in msgs), msgs
    assert any(m.startswith("AIC 0 waits at CrossCoreWaitFlag(6)") for m in msgs), msgs
    assert any("LoadData on AIV 0 (AI Core 0, sub-block 0)" in m for m in msgs), msgs


def test_a_setter_ahead_of_its_waiter_yields_at_a_full_counter(run):
    assert run("drained", "int32").tolist() == [0, 40]


def test_a_flag_id_keeps_its_low_four_bits(run):
    assert int(run("low_bits_status", "int32")[0]) == 0
