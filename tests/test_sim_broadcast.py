"""Broadcast as the device computes it (asc-devkit impl/adv_api/detail/pad/broadcast/
broadcast_common_impl.h, BroadCastCompute): the documented forms, and the shapes the doc page
rules out, which the device runs all the same from the destination shape alone. asc-devkit's
first commit's 00_introduction/05_broadcast sample calls Broadcast<float, 2, 1> from [1, 512] to
[1, 1536] (its gen_data.py means [512, 1] -> [512, 3]); its input is all zeros, so it passes on
the device whatever the shapes say. Here that call is a warning at its line and gives the
device's result: src[0] in every element."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim_driver import PRELUDE, Run, build_and_run, main_calling

DRIVER = PRELUDE + r"""
static void broadcasts() {
    LocalMemAllocator<Hardware::UB> a;
    auto src = a.Alloc<float, 512>();
    fill(src, 512, [](uint32_t i) { return float(i) + 1.0f; });
    auto dst = a.Alloc<float, 1536>();
    {
        const uint32_t srcShape[] = {16, 1}, dstShape[] = {16, 24};  // documented: [m, 1] -> [m, k], a tail k
        Broadcast<float, 2, 1>(dst, src, dstShape, srcShape);
        dump("axis1", dst, 16 * 24);
    }
    {
        const uint32_t srcShape[] = {1, 40}, dstShape[] = {6, 40};  // documented: [1, n] -> [m, n]
        Broadcast<float, 2, 0>(dst, src, dstShape, srcShape);
        dump("axis0", dst, 6 * 40);
    }
    {
        const uint32_t srcShape[] = {1}, dstShape[] = {72};
        BroadCast<float, 1, 0>(dst, src, dstShape, srcShape);
        dump("dim1", dst, 72);
    }
    {
        const uint32_t srcShape[] = {1, 512}, dstShape[] = {1, 1536};  // the first commit's sample
        expect("api-misuse", __LINE__ + 1);
        BroadCast<float, 2, 1>(dst, src, dstShape, srcShape);
        dump("sample", dst, 1536);
    }
    {
        const uint32_t srcShape[] = {4, 8}, dstShape[] = {8, 4};  // equal counts: the device copies
        expect("api-misuse", __LINE__ + 1);
        Broadcast<float, 2, 0>(dst, src, dstShape, srcShape);
        dump("copy", dst, 32);
    }
}
""" + main_calling("broadcasts();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("broadcast"), DRIVER)


SRC = np.arange(512, dtype=np.float32) + 1


def test_documented_shapes_broadcast_as_numpy_on_full_and_tail_shapes(run):
    assert np.array_equal(run("axis1", np.float32), np.broadcast_to(SRC[:16, None], (16, 24)).ravel())
    assert np.array_equal(run("axis0", np.float32), np.broadcast_to(SRC[None, :40], (6, 40)).ravel())
    assert np.array_equal(run("dim1", np.float32), np.full(72, SRC[0], np.float32))


def test_shapes_the_doc_rules_out_run_as_the_device_runs_them_with_a_warning(run):
    # [1, 512] -> [1, 1536] along axis 1: one row, so src[0] everywhere (numpy would refuse it).
    assert np.array_equal(run("sample", np.float32), np.full(1536, SRC[0], np.float32))
    assert np.array_equal(run("copy", np.float32), SRC[:32])
    faults = {(r[1], int(r[2])): r[3] for r in run.rows("FAULT")}
    expected = [int(r[2]) for r in run.rows("EXPECT")]
    sample, copy = expected
    assert "the device reads only the destination shape (row r repeats src[r])" in faults[("api-misuse", sample)]
    assert "equal element counts: a copy" in faults[("api-misuse", copy)]
    assert set(faults) == {("api-misuse", sample), ("api-misuse", copy)}
