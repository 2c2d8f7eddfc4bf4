"""Cross-block and task synchronisation, the data cache and the GM helpers of issue 16, run on the
emulator: IBSet/IBWait, InitDetermineComputeWorkspace/WaitPreBlock/NotifyNextBlock, GroupBarrier
(blocks that really wait for each other in sage_sim/coop.h's cooperative runner),
DataCacheCleanAndInvalid (a stale DCache line), WaitPreTaskEnd/SetNextTaskStart, the SliceInfo
DataCopy, ListTensorDesc, SetSysWorkspace/GetUserWorkspace, the `tik2` alias, TBuf's queue calls and
the compiled-away KERNEL_LOG/ASSERT.

One C++ driver runs every scenario (tests/sim_driver.py): the sync ones launch their blocks with
coop_run, so a waiting block parks and the others run. Each scenario writes what the blocks
computed; the Python side checks the order the sync imposes (a wrong order gives other values),
and that a wait no block can satisfy, a too-small workspace or a stale-cache spin is reported at
its own line. The slice copy is checked against numpy on the doc page's 2-D example and on 1-D
shapes with a tail piece."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim_driver import PRELUDE, Run, build_and_run, main_calling

F32, I32 = np.float32, np.int32

DRIVER = PRELUDE + r"""
#include "kernel_operator_list_tensor_intf.h"

using sage::sim::GmBuffer;

// Registers host vectors as the launch's GM buffers (arg i = vector i) and clears them after.
struct Gm {
    explicit Gm(std::initializer_list<std::pair<void*, size_t>> bufs) {
        int arg = 0;
        for (auto& b : bufs)
            sage::sim::rt().gm.push_back(GmBuffer{static_cast<uint8_t*>(b.first), b.second, arg++, "gm" +
                                                  std::to_string(arg), nullptr});
    }
    ~Gm() { sage::sim::rt().gm.clear(); }
};
template <class Body>
static int launch(int blocks, Body body) {
    return sage::sim::coop_run(blocks, 0x5A, [&](int) { body(); }, [](sage::sim::BlockState&) {});
}
static void status(const char* name, int s) { write_raw(name, &s, sizeof s); }
// A fresh block state over the same UB (as the next block of a launch gets).
static void next_block() {
    auto& b = sage::sim::blk();
    uint8_t *ub = b.ub, *init = b.ub_init;
    b = sage::sim::BlockState{};
    b.ub = ub;
    b.ub_init = init;
}

// ---------------------------------------------------------------- IBSet / IBWait

// Four blocks in reverse index order: block b waits for block b+1's IBSet, appends its index to
// the log, then lets block b-1 go. The cooperative runner starts block 0 first, so every block
// but the last must really wait.
static void ib_chain() {
    std::vector<int32_t> ws(64, 0), log(8, -1), pos(8, 0);
    Gm g{{ws.data(), ws.size() * 4}, {log.data(), log.size() * 4}, {pos.data(), pos.size() * 4}};
    int s = launch(4, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64);
        LocalTensor<int32_t> ub = buf.Get<int32_t>();
        GlobalTensor<int32_t> w, l, p;
        w.SetGlobalBuffer(ws.data(), 64);
        l.SetGlobalBuffer(log.data(), 8);
        p.SetGlobalBuffer(pos.data(), 8);
        int b = GetBlockIdx();
        if (b != 3) IBWait(w, ub, b, 0);
        DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(p);
        int32_t at = p.GetValue(0);
        l.SetValue(at, b);
        p.SetValue(0, at + 1);
        if (b != 0) IBSet(w, ub, b - 1, 0);
    });
    status("ib_status", s);
    write_raw("ib_log", log.data(), 16);
    write_raw("ib_ws", ws.data(), 4 * 32);
}

static int g_ib_wait_line = 0, g_ib_small_line = 0;
static void ib_faults() {
    std::vector<int32_t> ws(64, 0);
    Gm g{{ws.data(), ws.size() * 4}};
    // Block 1 waits on event 1, but block 0 sets event 0: the wait never ends.
    int s = launch(2, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 32);
        LocalTensor<int32_t> ub = buf.Get<int32_t>();
        GlobalTensor<int32_t> w;
        w.SetGlobalBuffer(ws.data(), 64);
        if (GetBlockIdx() == 0) IBSet(w, ub, 1, 0);
        g_ib_wait_line = __LINE__ + 1;
        if (GetBlockIdx() == 1) IBWait(w, ub, 1, 1);
    });
    status("ib_deadlock_status", s);
    expect("flag-deadlock", g_ib_wait_line);
    // Event 3 of block 1 with 2 cores needs (2*3 + 1)*32 + 32 = 256 bytes; the tensor has 128.
    std::fill(ws.begin(), ws.end(), 0);
    s = launch(2, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 32);
        LocalTensor<int32_t> ub = buf.Get<int32_t>();
        GlobalTensor<int32_t> w;
        w.SetGlobalBuffer(ws.data(), 32);
        g_ib_small_line = __LINE__ + 1;
        IBSet(w, ub, 1, 3);
    });
    status("ib_small_status", s);
    expect("api-misuse", g_ib_small_line);
}

// ---------------------------------------------------------------- deterministic order

// Five blocks, three rounds: inside WaitPreBlock..NotifyNextBlock each block appends
// block*10 + round to the log, so the log shows the order the blocks passed.
static void determine() {
    std::vector<int32_t> ws(5 * 8, 77), log(16, -1), pos(8, 0);
    Gm g{{ws.data(), ws.size() * 4}, {log.data(), log.size() * 4}, {pos.data(), pos.size() * 4}};
    int s = launch(5, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 5 * 32 + 32);
        LocalTensor<int32_t> ub = buf.Get<int32_t>();
        GlobalTensor<int32_t> w, l, p;
        w.SetGlobalBuffer(ws.data(), 40);
        l.SetGlobalBuffer(log.data(), 16);
        p.SetGlobalBuffer(pos.data(), 8);
        InitDetermineComputeWorkspace(w, ub);
        for (int r = 0; r < 3; ++r) {
            WaitPreBlock(w, ub);
            DataCacheCleanAndInvalid<int32_t, CacheLine::ENTIRE_DATA_CACHE>(p);
            int32_t at = p.GetValue(0);
            l.SetValue(at, GetBlockIdx() * 10 + r);
            p.SetValue(0, at + 1);
            NotifyNextBlock(w, ub);
        }
    });
    status("det_status", s);
    write_raw("det_log", log.data(), 15 * 4);
}

static int g_det_extra_line = 0, g_det_noinit_line = 0, g_det_small_line = 0;
static void determine_faults() {
    std::vector<int32_t> ws(3 * 8, 0);
    Gm g{{ws.data(), ws.size() * 4}};
    // Block 2 waits a second time, but the blocks before it notify only once.
    int s = launch(3, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 3 * 32 + 32);
        LocalTensor<int32_t> ub = buf.Get<int32_t>();
        GlobalTensor<int32_t> w;
        w.SetGlobalBuffer(ws.data(), 24);
        InitDetermineComputeWorkspace(w, ub);
        WaitPreBlock(w, ub);
        NotifyNextBlock(w, ub);
        g_det_extra_line = __LINE__ + 1;
        if (GetBlockIdx() == 2) WaitPreBlock(w, ub);
    });
    status("det_deadlock_status", s);
    expect("flag-deadlock", g_det_extra_line);
    s = launch(2, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 2 * 32 + 32);
        LocalTensor<int32_t> ub = buf.Get<int32_t>();
        GlobalTensor<int32_t> w;
        w.SetGlobalBuffer(ws.data(), 16);
        g_det_noinit_line = __LINE__ + 1;
        WaitPreBlock(w, ub);
    });
    status("det_noinit_status", s);
    expect("api-misuse", g_det_noinit_line);
    // The ubWorkspace needs 3*32 + 32 bytes with three blocks; it has 96.
    s = launch(3, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 96);
        LocalTensor<int32_t> ub = buf.Get<int32_t>();
        GlobalTensor<int32_t> w;
        w.SetGlobalBuffer(ws.data(), 24);
        g_det_small_line = __LINE__ + 1;
        InitDetermineComputeWorkspace(w, ub);
    });
    status("det_small_status", s);
    expect("api-misuse", g_det_small_line);
}

// ---------------------------------------------------------------- GroupBarrier

// Blocks 0-3 wait, blocks 4-5 arrive, for two rounds: each arriver adds its contribution to GM
// before Arrive, each waiter reads the total after Wait. The waiters run first, so they must wait.
static void group_barrier() {
    alignas(512) static uint8_t ws[4 * 512];
    std::memset(ws, 0, sizeof ws);
    std::vector<int32_t> acc(8, 0), seen(8, -1);
    Gm g{{ws, sizeof ws}, {acc.data(), acc.size() * 4}, {seen.data(), seen.size() * 4}};
    int s = launch(6, [&] {
        GroupBarrier<PipeMode::MTE3_MODE> bar(ws, 2, 4);
        GlobalTensor<int32_t> a, v;
        a.SetGlobalBuffer(acc.data(), 8);
        v.SetGlobalBuffer(seen.data(), 8);
        int b = GetBlockIdx();
        for (int r = 0; r < 2; ++r) {
            if (b >= 4) {
                // Each arriver owns one word of acc: no race, and the waiters sum them.
                a.SetValue(b - 4, a.GetValue(b - 4) + (b - 3) * (r + 1));
                bar.Arrive(b - 4);
            } else {
                bar.Wait(b);
                DataCacheCleanAndInvalid<int32_t, CacheLine::ENTIRE_DATA_CACHE>(a);
                if (r == 1) v.SetValue(b, a.GetValue(0) + a.GetValue(1));
            }
        }
        if (b == 0) v.SetValue(4, int32_t(bar.GetWorkspaceLen()));
    });
    status("gb_status", s);
    write_raw("gb_seen", seen.data(), 5 * 4);
    write_raw("gb_ws", ws, sizeof ws);
}

static int g_gb_index_line = 0, g_gb_wait_line = 0, g_gb_small_line = 0;
static void group_barrier_faults() {
    alignas(512) static uint8_t ws[2 * 512];
    std::memset(ws, 0, sizeof ws);
    Gm g{{ws, sizeof ws}};
    int s = launch(2, [&] {
        GroupBarrier<PipeMode::MTE3_MODE> bar(ws, 1, 1);
        g_gb_index_line = __LINE__ + 1;
        if (GetBlockIdx() == 0) bar.Arrive(1);
    });
    status("gb_index_status", s);
    expect("api-misuse", g_gb_index_line);
    std::memset(ws, 0, sizeof ws);
    // Two arrivers are expected, but only block 1 arrives.
    s = launch(3, [&] {
        GroupBarrier<PipeMode::MTE3_MODE> bar(ws, 2, 1);
        g_gb_wait_line = __LINE__ + 1;
        if (GetBlockIdx() == 0) bar.Wait(0);
        if (GetBlockIdx() == 1) bar.Arrive(0);
    });
    status("gb_deadlock_status", s);
    expect("flag-deadlock", g_gb_wait_line);
    s = launch(3, [&] {
        g_gb_small_line = __LINE__ + 1;
        GroupBarrier<PipeMode::MTE3_MODE> bar(ws, 3, 1);
    });
    status("gb_small_status", s);
    expect("api-misuse", g_gb_small_line);
}

// ---------------------------------------------------------------- the data cache

// Block 0 polls a flag that block 1 sets. With DataCacheCleanAndInvalid before each read it sees
// the store; without, its cached line stays stale and it spins forever.
static int g_spin_line = 0;
static void dcache() {
    std::vector<int32_t> flag(16, 0), out(16, -1);
    Gm g{{flag.data(), flag.size() * 4}, {out.data(), out.size() * 4}};
    int s = launch(2, [&] {
        GlobalTensor<int32_t> f, o;
        f.SetGlobalBuffer(flag.data(), 16);
        o.SetGlobalBuffer(out.data(), 16);
        if (GetBlockIdx() == 1) {
            f.SetValue(0, 42);
            DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(f);
            return;
        }
        int32_t polls = 0, v = 0;
        for (;;) {
            v = f.GetValue(0);
            ++polls;
            if (v == 42) break;
            DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(f);
        }
        o.SetValue(0, v);
        o.SetValue(1, polls);
    });
    status("dcci_status", s);
    write_raw("dcci_out", out.data(), 8);
    std::fill(flag.begin(), flag.end(), 0);
    s = launch(2, [&] {
        GlobalTensor<int32_t> f;
        f.SetGlobalBuffer(flag.data(), 16);
        if (GetBlockIdx() == 1) {
            f.SetValue(0, 42);
            return;
        }
        int32_t first = f.GetValue(0);  // loads the line while the flag is still 0
        g_spin_line = __LINE__ + 1;
        while (f.GetValue(0) != 42 + first) {
        }
    });
    status("stale_status", s);
    expect("flag-deadlock", g_spin_line);
    // A DataCopy into GM does not update a cached line either: the scalar read stays stale until
    // the line is dropped.
    next_block();
    std::vector<int32_t> one(16, 1);
    Gm g2{{one.data(), one.size() * 4}};
    GlobalTensor<int32_t> t;
    t.SetGlobalBuffer(one.data(), 16);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64);
    LocalTensor<int32_t> u = buf.Get<int32_t>();
    int32_t vals[3];
    vals[0] = t.GetValue(3);
    Duplicate(u, int32_t(9), 8);
    DataCopy(t, u, 8);
    vals[1] = t.GetValue(3);
    DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(t);
    vals[2] = t.GetValue(3);
    write_raw("dcci_dma", vals, sizeof vals);
    try {
        expect("api-misuse", __LINE__ + 1);
        DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_ATOMIC>(t);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// A wait re-tags every byte stored so far as the waiter's (runtime.h, GmBuffer.epoch/alias): block 1
// waits for block 0 and overwrites the first 4 KB page of x, no race; block 2, which waited for no
// one, writes the second page, which block 0 stored and the wait made block 1's: a race with block 1.
static int g_retag_line = 0;
static void retag_after_wait() {
    std::vector<int32_t> ws(32 * 8, 0), x(2048, 0);
    Gm g{{ws.data(), ws.size() * 4}, {x.data(), x.size() * 4}};
    GmBuffer& xb = sage::sim::rt().gm[1];
    xb.tracked = true;  // as aclrtMalloc's buffers are
    int s = launch(3, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64);
        LocalTensor<int32_t> ub = buf.Get<int32_t>();
        GlobalTensor<int32_t> w, xg;
        w.SetGlobalBuffer(ws.data(), 32 * 8);
        xg.SetGlobalBuffer(x.data(), 2048);
        int b = GetBlockIdx();
        if (b == 0) {
            InitGlobalMemory(xg, 2048, int32_t(1));
            IBSet(w, ub, 0, 0);
        } else if (b == 1) {
            IBWait(w, ub, 0, 0);
            InitGlobalMemory(xg, 1024, int32_t(2));
        } else {
            GlobalTensor<int32_t> hi = xg[1024];
            g_retag_line = __LINE__ + 1;
            InitGlobalMemory(hi, 1024, int32_t(3));
        }
    });
    status("retag_status", s);
    expect("gm-race", g_retag_line);
    std::free(xb.writer);
}

// A chain of blocks in another order than their indices, handed on through GM flags read with
// ReadGmByPassDCache (asc-devkit's deterministic-atomics sample on AICs: 0 -> 2 -> 1): the reader
// yields at its spin loop, so the chain completes; a flag nobody sets is a deadlock at its read.
static int g_bypass_line = 0;
static void bypass_chain() {
    std::vector<int32_t> flags(3 * 32, 0), order(4, -1);
    Gm g{{flags.data(), flags.size() * 4}, {order.data(), order.size() * 4}};
    int32_t* f = flags.data();
    int32_t* o = order.data();
    int s = launch(3, [&] {
        int32_t me = GetBlockIdx(), prev = me == 2 ? 0 : me == 1 ? 2 : -1;
        if (prev >= 0) {
            while (ReadGmByPassDCache(f + prev * 32) != 1) {
            }
            WriteGmByPassDCache(f + prev * 32, int32_t(0));  // ordered after prev's store: no race
        }
        int32_t at = 0;
        while (ReadGmByPassDCache(o + at) != -1) ++at;
        WriteGmByPassDCache(o + at, me);
        WriteGmByPassDCache(f + me * 32, int32_t(1));
    });
    status("bypass_status", s);
    write_raw("bypass_order", order.data(), 3 * 4);
    std::fill(flags.begin(), flags.end(), 0);
    s = launch(2, [&] {
        if (GetBlockIdx() == 1) return;
        g_bypass_line = __LINE__ + 1;
        while (ReadGmByPassDCache(f + 32) != 1) {
        }
    });
    status("bypass_stuck_status", s);
    expect("flag-deadlock", g_bypass_line);
}

// ---------------------------------------------------------------- task sync, workspace, names

static void task_sync() {
    next_block();
    std::vector<float> x(64, 1.0f);
    Gm g{{x.data(), x.size() * 4}};
    GlobalTensor<float> xg;
    xg.SetGlobalBuffer(x.data(), 64);
    {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 256);
        LocalTensor<float> u = buf.Get<float>();
        WaitPreTaskEnd();
        DataCopy(u, xg, 64);
        SetNextTaskStart();
    }
    next_block();
    TPipe pipe2;
    TBuf<TPosition::VECCALC> buf2;
    pipe2.InitBuffer(buf2, 256);
    LocalTensor<float> u2 = buf2.Get<float>();
    DataCopy(u2, xg, 64);
    expect("api-misuse", __LINE__ + 1);
    WaitPreTaskEnd();
    try {
        expect("api-misuse", __LINE__ + 1);
        WaitPreTaskEnd();
    } catch (const sage::sim::KernelAbort&) {
    }
}

static void workspace() {
    next_block();
    std::vector<uint8_t> ws(RESERVED_WORKSPACE + 64, 0);
    Gm g{{ws.data(), ws.size()}};
    GM_ADDR user = GetUserWorkspace(ws.data());
    SetSysWorkspace(ws.data());
    SetSysWorkspace(ws.data() + 32);  // the first one stays
    int64_t offs[2] = {int64_t(user - ws.data()), int64_t(GetUserWorkspace(nullptr) - ws.data())};
    write_raw("ws_offsets", offs, sizeof offs);
    tik2::GlobalTensor<uint8_t> t;  // CANN 6's namespace
    t.SetGlobalBuffer(user, 64);
    t.SetValue(63, 7);
    sage::sim::rt().gm.clear();
    std::vector<uint8_t> small(4096, 0);
    Gm g2{{small.data(), small.size()}};
    sage::sim::blk().sys_workspace = nullptr;
    expect("api-misuse", __LINE__ + 1);
    (void)GetUserWorkspace(small.data());
    sage::sim::blk().sys_workspace = nullptr;
    // TBuf's queue calls (old samples call them on a TBuf): the whole buffer, no queue.
    {
        TPipe pipe;
        TBuf<TPosition::VECCALC> tb;
        pipe.InitBuffer(tb, 64);
        LocalTensor<float> a = tb.AllocTensor<float>();
        tb.EnQue(a);
        LocalTensor<float> d = tb.DeQue<float>();
        tb.FreeTensor(d);
        uint32_t got[3] = {a.GetSize(), uint32_t(a.addr_ == d.addr_), d.GetSize()};
        write_raw("tbuf", got, sizeof got);
    }
    // Compiled away, as on the device: their arguments may name what does not exist.
    ASSERT(not_declared_anywhere > 0);
    KERNEL_LOG(KERNEL_ERROR, "never printed %d", not_declared_either);
    ASCENDC_ASSERT(false, { no_such_call(); });
}

// ---------------------------------------------------------------- SliceInfo DataCopy

template <typename T>
static void slice_case(const char* name, const std::vector<SliceInfo>& src_si, const std::vector<SliceInfo>& dst_si,
                       size_t src_elems, size_t dst_elems) {
    std::vector<T> src(src_elems), back(src_elems + 64, T(-1));
    for (size_t i = 0; i < src_elems; ++i) src[i] = T(i);
    Gm g{{src.data(), src.size() * sizeof(T)}, {back.data(), back.size() * sizeof(T)}};
    GlobalTensor<T> s, b;
    s.SetGlobalBuffer(src.data());
    b.SetGlobalBuffer(back.data());
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, uint32_t((dst_elems * sizeof(T) + 31) / 32 * 32));
    LocalTensor<T> u = buf.Get<T>();
    Duplicate(u, T(-7), uint32_t(dst_elems));
    uint32_t dims = uint32_t(src_si.size());
    DataCopy(u, s, dst_si.data(), src_si.data(), dims);
    dump(std::string(name) + "_ub", u, uint32_t(dst_elems));
    // And back: the UB pieces to the places the source slices came from.
    DataCopy(b, u, src_si.data(), dst_si.data(), dims);
    write_raw(std::string(name) + "_gm", back.data(), src_elems * sizeof(T));
}

static void slices() {
    // The doc page's example: rows 0 and 2 of a 3 x 87 float matrix, elements 16..70 in two
    // pieces of 24 with 7 between, into a 2 x 48 tile.
    slice_case<float>("doc", {{16, 70, 7, 3, 87}, {0, 2, 1, 1, 3}}, {{0, 47, 0, 3, 48}, {0, 1, 0, 1, 2}}, 3 * 87, 96);
    // 1-D half: five pieces of 16 with a gap of 5, the last one ending at the tail of the row.
    slice_case<half>("tail", {{3, 102, 5, 1, 103}}, {{0, 79, 0, 1, 80}}, 103, 80);
    // 3-D int32: planes 0 and 1, rows 1 and 3 of 4, elements 8..15 of 16.
    slice_case<int32_t>("cube", {{8, 15, 0, 1, 16}, {1, 3, 1, 1, 4}, {0, 1, 0, 1, 2}},
                        {{0, 7, 0, 1, 8}, {0, 1, 0, 1, 2}, {0, 1, 0, 1, 2}}, 2 * 4 * 16, 32);
    std::vector<float> src(64, 0.0f);
    Gm g{{src.data(), src.size() * 4}};
    GlobalTensor<float> s;
    s.SetGlobalBuffer(src.data());
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    LocalTensor<float> u = buf.Get<float>();
    SliceInfo bad_src[] = {{0, 20, 3, 1, 64}};  // 21 elements are not pieces of 8 with gaps of 3
    SliceInfo bad_dst[] = {{0, 15, 0, 1, 16}};
    try {
        expect("api-misuse", __LINE__ + 1);
        DataCopy(u, s, bad_dst, bad_src, 1);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// ---------------------------------------------------------------- ListTensorDesc

static void list_tensor() {
    next_block();
    std::vector<float> a(8, 1.0f), b(6, 2.0f);
    // Two 2-D tensors: word 0 = byte offset of the pointers, then per tensor dim|index<<32 and
    // its shape, then the data pointers.
    std::vector<uint64_t> blk = {8 + 2 * 3 * 8, 2, 2, 4, 2 | (1ull << 32), 3, 2,
                                 reinterpret_cast<uint64_t>(a.data()), reinterpret_cast<uint64_t>(b.data())};
    Gm g{{blk.data(), blk.size() * 8}, {a.data(), a.size() * 4}, {b.data(), b.size() * 4}};
    ListTensorDesc list(blk.data(), uint32_t(blk.size() * 8), 2);
    uint64_t shape[2] = {0, 0};
    TensorDesc<float> d;
    d.SetShapeAddr(shape);
    list.GetDesc(d, 1);
    GlobalTensor<float> obj = d.GetDataObj();
    uint64_t got[8] = {list.GetSize(), d.GetDim(), d.GetIndex(), d.GetShape(0), d.GetShape(1),
                       uint64_t(list.GetDataPtr<float>(0) == a.data()), uint64_t(d.GetDataPtr() == b.data()),
                       uint64_t(obj.GetValue(5) == 2.0f)};
    write_raw("list", got, sizeof got);
    try {
        expect("api-misuse", __LINE__ + 1);
        list.GetDataPtr<float>(2);
    } catch (const sage::sim::KernelAbort&) {
    }
}
""" + main_calling("ib_chain();", "ib_faults();", "determine();", "determine_faults();", "group_barrier();",
                   "group_barrier_faults();", "dcache();", "retag_after_wait();", "bypass_chain();", "task_sync();",
                   "workspace();", "slices();", "list_tensor();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("sim_sync"), DRIVER)


def same(got, want, what):
    assert np.array_equal(got, want), f"{what}: {got} != {want}"


def test_ib_set_wait_orders_blocks_against_their_index(run):
    assert run("ib_status", I32)[0] == 0
    same(run("ib_log", I32)[:4], np.array([3, 2, 1, 0], I32), "each block waited for the one above it")
    same(run("ib_ws", I32).reshape(4, 8)[:, 0], np.zeros(4, I32), "every flag set and consumed")


def test_determine_compute_passes_blocks_in_index_order_every_round(run):
    assert run("det_status", I32)[0] == 0
    want = [b * 10 + r for r in range(3) for b in range(5)]
    same(run("det_log", I32), np.array(want, I32), "round by round, block 0 to 4")


def test_group_barrier_releases_waiters_after_every_arrival(run):
    assert run("gb_status", I32)[0] == 0
    # after round 2: arriver 4 added 1 then 2, arriver 5 added 2 then 4
    same(run("gb_seen", I32), np.array([9, 9, 9, 9, 4 * 512], I32), "the waiters saw both rounds' arrivals")
    counters = run("gb_ws", np.uint32).reshape(4, 128)
    same(counters[:, 0], np.full(4, 4, np.uint32), "2 arrivers x 2 rounds in every Arrive counter")
    same(counters[:, 16], np.full(4, 8, np.uint32), "4 waiters x 2 rounds in every Wait counter")


def test_dcache_polls_see_other_blocks_only_after_clean_and_invalid(run):
    assert run("dcci_status", I32)[0] == 0
    same(run("dcci_out", I32), np.array([42, 2], I32), "block 0 read 0, dropped the line, then read block 1's 42")
    assert run("stale_status", I32)[0] == 3
    same(run("dcci_dma", I32), np.array([1, 1, 9], I32), "a DMA store stays unseen until the line is dropped")


def test_a_bypass_read_spin_loop_yields_to_the_block_it_waits_for(run):
    assert run("bypass_status", I32)[0] == 0
    same(run("bypass_order", I32), np.array([0, 2, 1], I32), "blocks ran their parts in the flags' order")
    assert run("bypass_stuck_status", I32)[0] == 3


def test_workspace_tbuf_queue_calls_and_compiled_away_macros(run):
    reserved = 16 * 1024 * 1024
    same(run("ws_offsets", np.int64), np.array([reserved, reserved], np.int64), "the user part after 16 MB")
    same(run("tbuf", np.uint32), np.array([16, 1, 16], np.uint32), "TBuf AllocTensor/DeQue give the whole buffer")


@pytest.mark.parametrize("name,dtype,src_shape,src_sel,dst_shape", [
    ("doc", F32, (3, 87), (slice(0, 3, 2), np.r_[16:40, 47:71]), (2, 48)),
    ("tail", np.float16, (103,), (np.r_[3:19, 24:40, 45:61, 66:82, 87:103],), (80,)),
    ("cube", I32, (2, 4, 16), (slice(0, 2), slice(1, 4, 2), slice(8, 16)), (32,)),
])
def test_slice_copy_moves_the_selected_pieces_both_ways(run, name, dtype, src_shape, src_sel, dst_shape):
    src = np.arange(int(np.prod(src_shape))).astype(dtype).reshape(src_shape)
    if name == "doc":
        picked = src[src_sel[0]][:, src_sel[1]]
    else:
        picked = src[src_sel]
    same(run(f"{name}_ub", dtype), picked.ravel(), f"{name}: GM -> UB")
    back = np.full(src.size, -1, dtype)
    flat_idx = np.arange(src.size).reshape(src_shape)
    if name == "doc":
        idx = flat_idx[src_sel[0]][:, src_sel[1]].ravel()
    else:
        idx = flat_idx[src_sel].ravel()
    back[idx] = src.ravel()[idx]
    same(run(f"{name}_gm", dtype), back, f"{name}: UB -> GM, into the same places")


def test_list_tensor_desc_decodes_the_list(run):
    same(run("list", np.uint64), np.array([2, 2, 1, 3, 2, 1, 1, 1], np.uint64), "count, dim, index, shape, pointers")


def test_faults_are_reported_at_their_lines(run):
    expected = {(code, int(line)) for _, code, line in run.rows("EXPECT")}
    found: dict[tuple[str, int], str] = {}
    for row in run.rows("FAULT"):
        found.setdefault((row[1], int(row[2])), row[3])
    assert len(expected) == 17
    missing = expected - set(found)
    assert not missing, (missing, found)
    assert set(found) == expected, set(found) - expected
    lines = run.source.read_text().splitlines()
    msgs = list(found.items())
    deadlocks = [m for (c, _), m in msgs if c == "flag-deadlock"]
    assert any("IBWait(blockIdx 1, eventID 1)" in m for m in deadlocks), deadlocks
    assert any("WaitPreBlock (round 2)" in m for m in deadlocks), deadlocks
    assert any("GroupBarrier::Wait(0) (round 1) waits for 2 arrivals, but only 1" in m for m in deadlocks), deadlocks
    assert any("DataCacheCleanAndInvalid" in m and "data cache" in m for m in deadlocks), deadlocks
    assert any("with ReadGmByPassDCache again and again" in m for m in deadlocks), deadlocks
    misuse = [m for (c, _), m in msgs if c == "api-misuse"]
    assert any("holds 128 bytes, but this call needs 256" in m for m in misuse), misuse
    assert any("before InitDetermineComputeWorkspace" in m for m in misuse), misuse
    assert any("GetBlockNum()*32+32" in m for m in misuse), misuse
    assert any("called 2 times" in m for m in misuse), misuse
    assert any("after the block's first DataCopy" in m for m in misuse), misuse
    assert any("16 MB system workspace" in m for m in misuse), misuse
    assert any("(N-1)*stride" in m for m in misuse), misuse
    assert any("GetDataPtr(2) on a list of 2 tensors" in m for m in misuse), misuse
    races = [m for (c, _), m in msgs if c == "gm-race"]
    assert races and all("block 2 writes" in m and "block 1 already wrote" in m for m in races), races
    for (code, line), _ in msgs:
        assert lines[line - 1].strip(), (code, line)


@pytest.mark.parametrize("api", ["IBWait", "IBSet", "WaitPreBlock", "NotifyNextBlock", "GroupBarrier",
                                 "DataCacheCleanAndInvalid", "SyncAll", "ReadGmByPassDCache"])
def test_a_kernel_naming_a_cross_block_wait_gets_the_cooperative_runner(api):
    from sage_npu.npu_eval.build import coop_define

    src = f"__global__ void k() {{ AscendC::{api}(); }}".encode()
    assert coop_define(b"// no sync here", src) == {"SAGE_SIM_COOP": "1"}
    assert coop_define(b"__global__ void k() { AscendC::PipeBarrier<PIPE_ALL>(); }") == {}
