// The C API's configuration words. The first public C API (asc-devkit 3d5cee08792f) passed the
// repeat and strides of an instruction as one 64-bit word, a union of bit fields; kernels written
// for it still build: the vector and copy families take these as well as the separate arguments.
#pragma once

#include <cstdint>

constexpr uint64_t CAPI_DEFAULT_BINARY_CONFIG_VALUE = 0x0100080808010101;  // repeat 1, strides 1 and 8
constexpr uint64_t CAPI_DEFAULT_UNARY_CONFIG_VALUE = 0x0100800800010001;
constexpr uint64_t CAPI_DEFAULT_DUPLICATE_CONFIG_VALUE = 0x0100800800010001;

// GM <-> UB copies: n_burst bursts of burst_len 32-byte blocks, gaps in blocks.
union asc_copy_config {
    uint64_t config;
    struct {
        uint64_t sid : 4;
        uint64_t n_burst : 12;
        uint64_t burst_len : 16;
        uint64_t src_gap : 16;
        uint64_t dst_gap : 16;
    };
};

union asc_binary_config {
    uint64_t config = CAPI_DEFAULT_BINARY_CONFIG_VALUE;
    struct {
        uint64_t dst_block_stride : 8;
        uint64_t src0_block_stride : 8;
        uint64_t src1_block_stride : 8;
        uint64_t dst_repeat_stride : 8;
        uint64_t src0_repeat_stride : 8;
        uint64_t src1_repeat_stride : 8;
        uint64_t reserved : 8;
        uint64_t repeat : 8;
    };
};

union asc_unary_config {
    uint64_t config = CAPI_DEFAULT_UNARY_CONFIG_VALUE;
    struct {
        uint64_t dst_block_stride : 16;
        uint64_t src_block_stride : 16;
        uint64_t dst_repeat_stride : 12;
        uint64_t src_repeat_stride : 12;
        uint64_t repeat : 8;
    };
};

union asc_duplicate_config {
    uint64_t config = CAPI_DEFAULT_DUPLICATE_CONFIG_VALUE;
    struct {
        uint64_t dst_block_stride : 16;
        uint64_t src_block_stride : 16;
        uint64_t dst_repeat_stride : 12;
        uint64_t src_repeat_stride : 12;
        uint64_t repeat : 8;
    };
};

constexpr asc_binary_config CAPI_DEFAULT_BINARY_CFG{};
constexpr asc_unary_config CAPI_DEFAULT_UNARY_CFG{};
constexpr asc_duplicate_config CAPI_DEFAULT_DUPLICATE_CFG{};
