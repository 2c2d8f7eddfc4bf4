// Deterministic computation by block order: InitDetermineComputeWorkspace, WaitPreBlock and
// NotifyNextBlock make the blocks pass the section between WaitPreBlock and NotifyNextBlock in
// ascending block index, round after round (so atomic accumulation adds in a fixed order).
//
// The GM workspace holds one 32-byte slot per block; the ubWorkspace keeps the block's round
// number after them (at element blocks * 8). Block i may enter round k when slots 0..i-1 hold k
// and slots i.. hold 0; NotifyNextBlock writes k into its slot, and the last block clears them
// all, which opens round k + 1 for block 0. A WaitPreBlock whose predecessors never notify is a
// flag-deadlock at its line (the device hangs there).
#pragma once

#include <string>

#include "kernel_operator_block_sync_intf.h"

namespace AscendC {

namespace detail {

inline void determine_workspace_check(const GlobalTensor<int32_t>& gm, const LocalTensor<int32_t>& ub,
                                      const char* api, sage::sim::SrcLoc loc) {
    uint64_t blocks = uint64_t(sage::sim::blk().num);
    need_room(api, "gmWorkspace", blocks * 32, gm_room(gm), "GetBlockNum()*32 bytes", loc);
    need_room(api, "ubWorkspace", blocks * 32 + 32, ub_room(ub, api, loc), "GetBlockNum()*32+32 bytes", loc);
}

// The block's round number, kept in the ubWorkspace by InitDetermineComputeWorkspace.
inline int32_t determine_round(const LocalTensor<int32_t>& ub, const char* api, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    uint32_t at = uint32_t(blk().num) * 8;
    UbRange r{ub.addr_ + at * 4, 4};
    if (!ub_is_init(r)) {
        fail("api-misuse", loc,
             "%s before InitDetermineComputeWorkspace, in block %d: the ubWorkspace holds no round number yet "
             "(on the device the blocks would wait for garbage). Call InitDetermineComputeWorkspace(gmWorkspace, "
             "ubWorkspace) first, with the same tensors",
             api, blk().idx);
    }
    return ub.data()[at];
}

// Whether block `idx` may enter round `k`: slots 0..idx-1 hold k, the rest 0.
inline bool determine_turn(const int32_t* slots, int blocks, int idx, int32_t k) {
    for (int b = 0; b < blocks; ++b)
        if (slots[b * 8] != (b < idx ? k : 0)) return false;
    return true;
}

}  // namespace detail

// Block 0 clears the GM slots; every block starts its round count at 1.
__aicore__ inline void InitDetermineComputeWorkspace(GlobalTensor<int32_t>& gmWorkspace,
                                                     LocalTensor<int32_t>& ubWorkspace, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    const char* api = "InitDetermineComputeWorkspace";
    detail::determine_workspace_check(gmWorkspace, ubWorkspace, api, loc);
    uint32_t n = uint32_t(blk().num) * 8;
    if (blk().idx == 0) {
        memset(ubWorkspace.data(), 0, n * 4);
        ub_mark(ubWorkspace.range(n));
        auto* b = gm_check(gmWorkspace.addr_, n * 4, loc, true, api, 4, gmWorkspace.gm_);
        memset(gmWorkspace.addr_, 0, n * 4);
        gm_mark_written(b, gmWorkspace.addr_, n * 4);
        trace_instr(Pipe::V, "Duplicate", "int32", n, n * 4, loc, ubWorkspace.range(n));
        detail::trace_flag_exchange(api, gmWorkspace.addr_, ubWorkspace.range(n), 0, true, loc);
    }
    ubWorkspace.data()[n] = 1;
    ub_mark(UbRange{ubWorkspace.addr_ + n * 4, 4});
}

// Waits until every lower block has passed NotifyNextBlock in this round (block 0: until the
// last block has closed the previous round).
__aicore__ inline void WaitPreBlock(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace,
                                    SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    const char* api = "WaitPreBlock";
    detail::determine_workspace_check(gmWorkspace, ubWorkspace, api, loc);
    int blocks = blk().num, idx = blk().idx;
    int32_t k = detail::determine_round(ubWorkspace, api, loc);
    uint32_t n = uint32_t(blocks) * 8;
    int polls = 1;
    for (;;) {
        gm_check(gmWorkspace.addr_, n * 4, loc, false, api, 4, gmWorkspace.gm_);
        memcpy(ubWorkspace.data(), gmWorkspace.addr_, n * 4);  // the device reads the slots into UB
        ub_mark(ubWorkspace.range(n));
        if (detail::determine_turn(gmWorkspace.addr_, blocks, idx, k)) break;
        detail::poll_again(
            idx == 0 ? format("WaitPreBlock (round %d) waits for the last block's NotifyNextBlock of round %d, "
                              "which never comes: every block must call WaitPreBlock and NotifyNextBlock the same "
                              "number of times",
                              k, k - 1)
                     : format("WaitPreBlock (round %d) waits for block %d's NotifyNextBlock, which never comes: "
                              "every block must call WaitPreBlock and NotifyNextBlock the same number of times, "
                              "after InitDetermineComputeWorkspace",
                              k, idx - 1),
            loc);
        ++polls;
    }
    gm_acquire();  // ordered after the blocks before it
    detail::trace_flag_exchange(api, gmWorkspace.addr_, ubWorkspace.range(n), polls, false, loc);
}

// Lets the next block in: writes this round's number into the block's slot (the last block
// clears every slot, opening the next round), and counts the round.
__aicore__ inline void NotifyNextBlock(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace,
                                       SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    const char* api = "NotifyNextBlock";
    detail::determine_workspace_check(gmWorkspace, ubWorkspace, api, loc);
    int blocks = blk().num, idx = blk().idx;
    int32_t k = detail::determine_round(ubWorkspace, api, loc);
    uint32_t n = uint32_t(blocks) * 8;
    bool last = idx + 1 == blocks;
    uint32_t first = last ? 0 : uint32_t(idx) * 8, count = last ? n : 8;
    int32_t* ub = ubWorkspace.data();
    for (uint32_t i = first; i < first + count; ++i) ub[i] = last ? 0 : k;
    ub_mark(UbRange{ubWorkspace.addr_ + first * 4, count * 4});
    auto* b = gm_check(gmWorkspace.addr_ + first, count * 4, loc, true, api, 4, gmWorkspace.gm_);
    memcpy(gmWorkspace.addr_ + first, ub + first, count * 4);
    gm_mark_written(b, gmWorkspace.addr_ + first, count * 4);
    ub[n] = k + 1;
    trace_instr(Pipe::V, "Duplicate", "int32", count, count * 4, loc, UbRange{ubWorkspace.addr_ + first * 4, count * 4});
    detail::trace_flag_exchange(api, gmWorkspace.addr_ + first, UbRange{ubWorkspace.addr_ + first * 4, count * 4}, 0,
                                true, loc);
}

}  // namespace AscendC
