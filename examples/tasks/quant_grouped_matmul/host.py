import torch

from sage_npu.npu_eval import Launch, Tiling

MAX_AI_CORES = 8   # AI Cores (each one AIC and RATIO AIVs)
RATIO = 2          # AIVs per AIC: 1 runs the kernel as MIX_AIC_1_1, 2 as MIX_AIC_1_2
SLOTS = 4          # workspace slots (base blocks of int32) per AI Core between its AIC and AIVs
BUFFER_NUM = 2     # UB buffers per vector queue
# int8 base block [128, 256, 128]: L0A 16 KB, L0B 32 KB, L0C 128 KB of int32. A's 8 K slices of 128 in L1
# (128 KB, two of them: 256 KB), B's 4 (128 KB, two: 256 KB): all of L1.
BASE_M, BASE_N, BASE_K = 128, 256, 128
SINGLE_N = 1024    # columns of a block: its BASE_N-wide base blocks reuse A's copy in L1
STEP_KA, STEP_KB = 8, 4


def round_up(x, a):
    return (x + a - 1) // a * a


def ceil_div(x, a):
    return (x + a - 1) // a


def launch(x, w_nz, group_list, scale, per_token_scale):
    m, k = x.shape
    groups, n_blocks, k_nz, c0 = w_nz.shape
    n = n_blocks * c0
    if c0 != 32 or k_nz != k or k % 32 or n % 16:
        raise ValueError(f"quant_grouped_matmul needs w in NZ [groups, n / 32, k, 32], k a multiple of 32 and n of 16, "
                         f"got w {tuple(w_nz.shape)} for x {tuple(x.shape)}")
    # The group sizes are data (host.py plans from shapes only): at most m / BASE_M + one partial block a group
    # of rows. A core left without a block returns at once.
    blocks = (ceil_div(m, BASE_M) + groups) * ceil_div(n, SINGLE_N)
    cores = max(1, min(MAX_AI_CORES, blocks))
    single_n = min(SINGLE_N, round_up(n, 16))
    base_n = min(BASE_N, single_n)
    base_k = min(BASE_K, k)
    step_ka = min(STEP_KA, ceil_div(k, base_k))
    step_kb = min(STEP_KB, ceil_div(k, base_k))
    ws = torch.empty(cores * SLOTS * BASE_M * base_n, dtype=torch.int32)
    y = torch.empty(m, n, dtype=torch.float16)
    tiling = Tiling(type="TCubeTiling", usedCoreNum=cores, M=m, N=n, Ka=k, Kb=k, singleCoreM=BASE_M,
                    singleCoreN=single_n, singleCoreK=k, baseM=BASE_M, baseN=base_n, baseK=base_k,
                    depthA1=2 * step_ka, depthB1=2 * step_kb, stepM=1, stepN=1, stepKa=step_ka, stepKb=step_kb,
                    dbL0A=2, dbL0B=2, dbL0C=1, isBias=0, iterateOrder=1)
    # block_dim of a mixed kernel counts AI Cores: the launch runs `cores` AICs and RATIO * `cores` AIVs
    return Launch(kernel="quant_grouped_matmul", block_dim=cores,
                  args=[x, w_nz, group_list, scale, per_token_scale, y, ws, tiling, groups], outputs=[y],
                  defines={"RATIO": RATIO, "SLOTS": SLOTS, "BUFFER_NUM": BUFFER_NUM})
