// What differs between the real binding (built against torch_npu) and the emulated one (built
// against CPU torch with tests/npu/emulated providing the "npu" PrivateUse1 backend): how the
// current stream is obtained and how phase 2 is launched.
#pragma once
#include <cstdint>
#include <functional>

#include <c10/core/Device.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/headeronly/version.h>

#include "aclnn_abi.h"

#ifdef AIRFUSE_WITH_TORCH_NPU
#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "torch_npu/csrc/framework/OpCommand.h"
#endif

namespace airfuse::npu::platform {

inline aclrtStream CurrentStream(const c10::Device& device) {
#ifdef AIRFUSE_WITH_TORCH_NPU
    // stream(false): the raw stream without draining torch_npu's task queue; Launch queues phase 2
    // behind the ops already in it, so ordering holds without a host wait (capturable in aclgraph).
    return c10_npu::getCurrentNPUStream(device.index()).stream(false);
#elif TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 11
    // torch 2.10 has no c10::Stream::native_handle() (nor the backend hook behind it, 2.11's
    // DeviceGuardImplInterface::getStreamNativeHandle): the emulated device's streams are told
    // apart by their id, made non-null as an aclrtStream is.
    const c10::Stream stream = c10::impl::VirtualGuardImpl(c10::DeviceType::PrivateUse1).getStream(device);
    return reinterpret_cast<aclrtStream>(static_cast<uintptr_t>(stream.id()) + 1);
#else
    return c10::impl::VirtualGuardImpl(c10::DeviceType::PrivateUse1).getStream(device).native_handle();
#endif
}

// Runs `phase2` in stream order. It may run later on another thread, so it owns what it uses.
inline void Launch(const char* opName, const std::function<int()>& phase2) {
#ifdef AIRFUSE_WITH_TORCH_NPU
    at_npu::native::OpCommand::RunOpApiV2(opName, phase2);
#else
    (void)opName;
    phase2();  // the emulated device has no task queue: everything runs in order on this thread
#endif
}

}  // namespace airfuse::npu::platform
