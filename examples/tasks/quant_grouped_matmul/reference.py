import torch


class Model(torch.nn.Module):
    """y = FasterGelu((x_g @ w_g) * scale_g * per_token_scale) per group g of rows, as half.

    w arrives in NZ, [groups, n / 32, k, 32] (how the cube reads an int8 right matrix): column j of
    group g is w_nz[g, j // 32, :, j % 32]. The device's steps, each rounding to float as its
    instruction does: the int32 product cast to float, times the column scale (AscendDequant), times
    the row scale (Mul), FasterGelu x / (1 + exp(-1.702 x)), then a cast to half.
    """

    def forward(self, x, w_nz, group_list, scale, per_token_scale):
        groups, n_blocks, k, c0 = w_nz.shape
        w = w_nz.permute(0, 2, 1, 3).reshape(groups, k, n_blocks * c0)
        out, row = [], 0
        for g, rows in enumerate(group_list.tolist()):
            acc = x[row:row + rows].double() @ w[g].double()  # exact: |acc| <= k * 128 * 128 < 2^53
            v = acc.float() * scale[g]
            v = v * per_token_scale[row:row + rows, None]
            v = v / (torch.exp(v * torch.tensor(-1.702, dtype=torch.float32)) + 1)
            out.append(v.half())
            row += rows
        return torch.cat(out)


def _case(gen, sizes, k, n):
    m = sum(sizes)
    x = torch.randint(-128, 128, (m, k), generator=gen, dtype=torch.int8)
    w = torch.randint(-128, 128, (len(sizes), n // 32, k, 32), generator=gen, dtype=torch.int8)
    # Scales that bring the products (|acc| up to ~ 128 * 128 * sqrt(k)) to GELU's interesting range.
    scale = torch.rand(len(sizes), n, generator=gen) * 2e-4 + 1e-5
    per_token = torch.rand(m, generator=gen) * 2 + 0.1
    return [x, w, torch.tensor(sizes, dtype=torch.int64), scale, per_token]


def get_input_groups():
    gen = torch.Generator().manual_seed(11)
    # Groups of whole and partial base blocks, an empty group, more blocks than cores, a last block of
    # fewer columns than a block (n 1184: a block of 1024 columns and one of 160), and k of one K slice.
    return [_case(gen, [128, 100, 0, 37, 256], 256, 1184),
            _case(gen, [16, 16, 16], 128, 512),
            _case(gen, [300], 64, 256)]


def get_init_inputs():
    return []
