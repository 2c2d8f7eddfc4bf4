// CANN's host platform library (asc-devkit include/utils/tiling/platform/platform_ascendc.h, at the
// path host code includes it): platform_ascendc::PlatformAscendC answers a tiling function's
// questions about the chip (core counts, memory sizes, the system workspace). The answers are the
// chip profile's (npu_eval/chips.py ChipProfile.compile_defines() passes them as SAGE_CHIP_*
// defines), so the host and the emulated kernel see one chip.
#pragma once

#include <csignal>
#include <cstdint>
#include <mutex>

#if !defined(SAGE_CHIP_SOC_VERSION) || !defined(SAGE_CHIP_VECTOR_CORES) || !defined(SAGE_CHIP_L1_BYTES)
#error "platform_ascendc.h reads the chip from SAGE_CHIP_* defines: build with npu_eval.build.compile_flags"
#endif

#ifndef ASCENDC_ASSERT
#define ASCENDC_ASSERT(cond, behavior) \
    do {                               \
        if (!(cond)) {                 \
            behavior;                  \
            raise(SIGABRT);            \
        }                              \
    } while (0)
#endif

namespace fe {
class PlatFormInfos;  // the framework's platform record: op_host code passes context->GetPlatformInfo()
}
enum class NpuArch : uint32_t;  // its enumerators are the __NPU_ARCH__ numbers (2201 for Atlas A2)

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, FB = 7, BT = 8, RESERVED };

enum class SocVersion {
    ASCEND910 = 0,
    ASCEND910B,  // Ascend910B1~4 (Atlas A2), Ascend910_93
    ASCEND310P,  // Ascend310P1, Ascend310P3
    ASCEND310B,
    ASCEND950,
    ASCEND910_55,
    ASCEND910_95 = ASCEND950,
    AS31XM1,
    ASCEND031,
    ASCEND035,
    ASCEND310,
    ASCEND610,
    ASCEND610Lite,
    ASCEND910_93,
    BS9SX1A,
    BS9SX2A,
    HI3796CV300CS,
    HI3796CV300ES,
    MC61AM21A,
    MC62,
    SD3403,
    KIRINX90,
    KIRIN9030,
    MC32DM11A,
    ASCEND350,
    RESERVED_VERSION = 99999
};

enum class ReservedSize { RESERVED_SIZE_8K, RESERVED_SIZE_16K, RESERVED_SIZE_32K };

class PlatformAscendC {
public:
    PlatformAscendC() = delete;
    ~PlatformAscendC() = default;
    explicit PlatformAscendC(fe::PlatFormInfos* platformInfo) : platformInfo_(platformInfo) {}

    // Atlas A2 separates Cube and Vector cores: GetCoreNum counts Vector cores. The 310P couples
    // them: every count is the AI Core count.
    uint32_t GetCoreNum() const { return GetCoreNumAiv(); }
    uint32_t GetCoreNumAic() const { return SAGE_CHIP_CUBE_CORES; }
    uint32_t GetCoreNumAiv() const { return SAGE_CHIP_VECTOR_CORES; }
    uint32_t GetCoreNumVector() const { return SAGE_CHIP_STANDALONE_VECTOR_CORES; }  // 0 on Atlas A2

    // The blocks to launch for sliceNum slices: a Cube+Vector kernel runs in groups of one Cube
    // core and aiv/aic Vector cores, so the group count is the slices over the group's Vector cores.
    uint32_t CalcTschNumBlocks(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
    {
        if (aicCoreNum == 0 || aivCoreNum == 0 || aivCoreNum <= aicCoreNum) return sliceNum;
        const uint32_t ratio = aivCoreNum / aicCoreNum;
        return (sliceNum + ratio - 1) / ratio;
    }
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
    {
        return CalcTschNumBlocks(sliceNum, aicCoreNum, aivCoreNum);
    }

    uint32_t GetLibApiWorkSpaceSize() const { return SAGE_CHIP_LIB_API_WORKSPACE_BYTES; }
    uint32_t GetResCubeGroupWorkSpaceSize() const { return 0; }
    uint32_t GetResGroupBarrierWorkSpaceSize() const { return 0; }

    void GetCoreMemSize(const CoreMemType& memType, uint64_t& size) const
    {
        switch (memType) {
            case CoreMemType::L0_A: size = SAGE_CHIP_L0A_BYTES; break;
            case CoreMemType::L0_B: size = SAGE_CHIP_L0B_BYTES; break;
            case CoreMemType::L0_C: size = SAGE_CHIP_L0C_BYTES; break;
            case CoreMemType::L1: size = SAGE_CHIP_L1_BYTES; break;
            case CoreMemType::L2: size = SAGE_CHIP_L2_BYTES; break;
            case CoreMemType::UB: size = uint64_t(SAGE_CHIP_UB_BYTES) - reservedMemSize_; break;
            case CoreMemType::HBM: size = SAGE_CHIP_HBM_BYTES; break;
            default: size = 0; break;  // FB, BT: the cube's buffers, which the emulator has no use for
        }
    }
    // Bytes per cycle; the documentation supports L2 and HBM, and the profile knows HBM only.
    void GetCoreMemBw(const CoreMemType& memType, uint64_t& bwSize) const
    {
        bwSize = memType == CoreMemType::HBM ? uint64_t(SAGE_CHIP_HBM_BYTES_PER_CYCLE) : 0;
    }
    void ReserveLocalMemory(ReservedSize size)
    {
        reservedMemSize_ = size == ReservedSize::RESERVED_SIZE_8K ? 8 * 1024
                           : size == ReservedSize::RESERVED_SIZE_16K ? 16 * 1024 : 32 * 1024;
    }

    SocVersion GetSocVersion() const { return SocVersion::SAGE_CHIP_SOC_VERSION; }
    NpuArch GetCurNpuArch() const { return static_cast<NpuArch>(__NPU_ARCH__); }
    uint32_t GetVecRegLen() const { return 0; }  // 0 on chips that are not RegBase (Atlas A2, 310P)

private:
    [[maybe_unused]] fe::PlatFormInfos* platformInfo_;  // kept for the real constructor; the chip comes from the build
    uint32_t reservedMemSize_ = 0;
};

// The process-wide PlatformAscendC a program's host code gets without a framework context.
class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance()
    {
        static PlatformAscendC instance(nullptr);
        return &instance;
    }
    // The emulated chip is the one the build was made for (sage-npu --chip); the name is not read.
    static PlatformAscendC* GetInstance(const char* /*customSocVersion*/) { return GetInstance(); }

private:
    PlatformAscendCManager() = default;
};

}  // namespace platform_ascendc
