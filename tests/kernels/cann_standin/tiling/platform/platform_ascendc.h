// Recording stand-in for CANN's platform_ascendc::PlatformAscendC (see register/op_def_registry.h).
#pragma once
#include <cstdint>
#include "register/op_def_registry.h"

namespace platform_ascendc {
enum class SocVersion { ASCEND910 = 0, ASCEND910B, ASCEND310P, RESERVED_VERSION };
enum class CoreMemType { L0_A = 0, L0_B, L0_C, L1, L2, UB, HBM, RESERVED };

class PlatformAscendC {
public:
    explicit PlatformAscendC(fe::PlatFormInfos* p) : p_(p) {}
    uint32_t GetCoreNumAiv() const { return p_->aivCores; }
    void GetCoreMemSize(CoreMemType t, uint64_t& size) const { size = t == CoreMemType::UB ? p_->ubBytes : 0; }
    SocVersion GetSocVersion() const { return SocVersion(p_->socVersion); }
    // RESERVED_WORKSPACE of the chip's arch: 16 MB on dav-2201, 2 MB on dav-2002.
    uint32_t GetLibApiWorkSpaceSize() const { return GetSocVersion() == SocVersion::ASCEND310P ? 2u << 20 : 16u << 20; }

private:
    fe::PlatFormInfos* p_;
};
}  // namespace platform_ascendc
