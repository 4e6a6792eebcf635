// Calling a kernel entry point with its GM parameters, for both twins' launchers
// (twin/src/runtime.cpp, twin/vendor_api/src/blocks.cpp): airfuse's kernels take 3 to 8 GM
// pointers (their inputs, outputs, workspace and tiling), all of type GM_ADDR.
#pragma once
#include <cstdint>

namespace airfuse_twin_launch {

// Calls `fn` with the `n` pointers of `a`; false when no kernel takes `n` parameters.
inline bool CallKernel(void* fn, int n, uint8_t** a) {
    using P = uint8_t*;
    switch (n) {
        case 3: reinterpret_cast<void (*)(P, P, P)>(fn)(a[0], a[1], a[2]); return true;
        case 4: reinterpret_cast<void (*)(P, P, P, P)>(fn)(a[0], a[1], a[2], a[3]); return true;
        case 5: reinterpret_cast<void (*)(P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4]); return true;
        case 6: reinterpret_cast<void (*)(P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5]); return true;
        case 7: reinterpret_cast<void (*)(P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]); return true;
        case 8: reinterpret_cast<void (*)(P, P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); return true;
        default: return false;
    }
}

}  // namespace airfuse_twin_launch
