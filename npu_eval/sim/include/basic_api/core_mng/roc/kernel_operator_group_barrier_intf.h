// GroupBarrier: arriveSize blocks (the Arrive group) release waitSize blocks (the Wait group),
// round after round, through counters in a GM workspace the kernel zeroes. Layout as on the
// device: one 512-byte cache line per index; the Arrive counters at byte 0 of each, the Wait
// counters at byte 64. Arrive adds 1 to every Arrive counter (an MTE3 atomic add); Wait(i)
// waits until Arrive counter i reaches round * arriveSize, then adds 1 to every Wait counter;
// an Arrive from the second round on first waits until its Wait counter shows that the
// previous round's waiters all passed.
//
// Departure: the device adds the first word of each 32-byte block of UB (the constructor sets
// them to 1); the emulator adds 1, so a kernel that overwrites the start of UB between the
// constructor and an Arrive/Wait counts right here and may not on the device.
#pragma once

#include <algorithm>
#include <string>

#include "../../kernel_operator_block_sync_intf.h"

namespace AscendC {

enum class PipeMode : uint8_t { SCALAR_MODE = 0, MTE3_MODE = 1, MAX };

template <PipeMode pipeMode>
class GroupBarrier {
public:
    __aicore__ inline GroupBarrier(GM_ADDR groupWorkspace, uint32_t arriveSizeIn, uint32_t waitSizeIn, SAGE_LOC)
        : ws_(reinterpret_cast<uint8_t*>(groupWorkspace)), arriveSize_(arriveSizeIn), waitSize_(waitSizeIn) {
        using namespace sage::sim;
        touch(loc);
        const int blocks = blk().num;
        if (pipeMode != PipeMode::MTE3_MODE)
            fail("api-misuse", loc, "GroupBarrier supports PipeMode::MTE3_MODE only, in block %d", blk().idx);
        if (arriveSizeIn == 0 || waitSizeIn == 0 || arriveSizeIn > uint32_t(blocks) || waitSizeIn > uint32_t(blocks)) {
            fail("api-misuse", loc,
                 "GroupBarrier(arriveSize %u, waitSize %u) with %d blocks, in block %d: both sizes must be in "
                 "[1, GetBlockNum()]",
                 arriveSizeIn, waitSizeIn, blocks, blk().idx);
        }
        if (reinterpret_cast<uintptr_t>(ws_) % 512 != 0) {
            fail("api-misuse", loc,
                 "GroupBarrier's groupWorkspace starts %u bytes past a 512-byte boundary, in block %d: it must be "
                 "512-byte aligned (each counter has its own cache line)",
                 unsigned(reinterpret_cast<uintptr_t>(ws_) % 512), blk().idx);
        }
        GlobalTensor<uint8_t> g;
        g.addr_ = ws_;
        g.gm_ = gm_home(ws_);
        detail::need_room("GroupBarrier", "groupWorkspace", GetWorkspaceLen(), detail::gm_room(g),
                          "max(arriveSize, waitSize) * 512 bytes", loc);
    }

    // This block has done its share of the round: count it in every Arrive counter.
    __aicore__ inline void Arrive(uint32_t arriveIndex, SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        index_check("Arrive", arriveIndex, arriveSize_, "arriveSize", loc);
        int polls = 1;
        if (counter_ > 1) {
            uint32_t want = (counter_ - 1) * waitSize_;
            uint32_t* c = wait_counter(arriveIndex);
            while (load(c, "GroupBarrier::Arrive", loc) != want) {
                detail::poll_again(format("GroupBarrier::Arrive(%u) (round %u) waits until the %u waiters of round "
                                          "%u have passed (its Wait counter shows %u of %u): a block of the Wait "
                                          "group called Wait fewer times than the Arrive group arrived",
                                          arriveIndex, counter_, waitSize_, counter_ - 1, *c, want),
                                   loc);
                ++polls;
            }
            gm_acquire();  // ordered after the previous round's waiters
        }
        add_all(0, "GroupBarrier::Arrive", polls, loc);
        counter_ += 1;
        hasArrive_ = true;
    }

    // Waits until every block of the Arrive group has arrived in this round, then counts this
    // block in every Wait counter.
    __aicore__ inline void Wait(uint32_t waitIndex, SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        index_check("Wait", waitIndex, waitSize_, "waitSize", loc);
        uint32_t round = hasArrive_ ? counter_ - 1 : counter_;
        uint32_t want = round * arriveSize_;
        uint32_t* c = arrive_counter(waitIndex);
        int polls = 1;
        while (load(c, "GroupBarrier::Wait", loc) < want) {
            detail::poll_again(format("GroupBarrier::Wait(%u) (round %u) waits for %u arrivals, but only %u came and "
                                      "no block of the Arrive group will call Arrive again: every one of the %u "
                                      "Arrive blocks must call Arrive once per round",
                                      waitIndex, round, want, *c, arriveSize_),
                               loc);
            ++polls;
        }
        gm_acquire();  // ordered after this round's arrivals
        add_all(64, "GroupBarrier::Wait", polls, loc);
        if (!hasArrive_) counter_ += 1;
        hasArrive_ = false;
    }

    // The GM bytes the barrier uses: a 512-byte cache line per index of the larger group.
    __aicore__ inline uint64_t GetWorkspaceLen() { return uint64_t(std::max(arriveSize_, waitSize_)) * 512; }

private:
    uint32_t* arrive_counter(uint32_t i) const { return reinterpret_cast<uint32_t*>(ws_ + size_t(i) * 512); }
    uint32_t* wait_counter(uint32_t i) const { return reinterpret_cast<uint32_t*>(ws_ + size_t(i) * 512 + 64); }

    static uint32_t load(const uint32_t* p, const char* api, sage::sim::SrcLoc loc) {
        sage::sim::gm_check(p, 4, loc, false, api, 4);
        return *p;
    }

    void index_check(const char* api, uint32_t i, uint32_t size, const char* what, sage::sim::SrcLoc loc) const {
        if (i < size) return;
        sage::sim::fail("api-misuse", loc,
                        "GroupBarrier::%s(%u) with %s %u, in block %d: the index must be in [0, %u] (each block of "
                        "the group passes its own index)",
                        api, i, what, size, sage::sim::blk().idx, size - 1);
    }

    // The atomic add the device issues: 1 into the counter at `offset` of every cache line.
    void add_all(size_t offset, const char* api, int polls, sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        uint32_t lines = std::max(arriveSize_, waitSize_);
        for (uint32_t i = 0; i < lines; ++i) {
            auto* p = reinterpret_cast<uint32_t*>(ws_ + size_t(i) * 512 + offset);
            auto* b = gm_check(p, 4, loc, true, api, 4);
            *p += 1;
            gm_mark_written(b, p, 4);
        }
        trace_event(TraceKind::Barrier, Pipe::ALL, api, loc, int32_t(PIPE_ALL), 0);
        for (int i = 1; i < polls; ++i) trace_instr(Pipe::S, "GlobalTensor::GetValue", "uint32", 1, 4, loc);
        trace_instr(Pipe::MTE3, api, "int32", lines * 8, uint64_t(lines) * 32, loc);
        trace_gm_shape(ws_ + offset, lines);
    }

    uint8_t* ws_ = nullptr;
    uint32_t arriveSize_ = 0, waitSize_ = 0;
    uint32_t counter_ = 1;  // the round this block is in
    bool hasArrive_ = false;
};

}  // namespace AscendC
