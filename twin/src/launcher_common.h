// What both twins' launchers share (twin/src/runtime.cpp; twin/vendor_api/src/blocks.cpp and
// launch.cpp): calling a kernel entry point, and reporting the mutation test's sync sites.
#pragma once
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>

namespace airfuse_twin_launch {

// Calls `fn` with the `n` pointers of `a` (airfuse's kernels take 3 to 8 GM pointers: inputs,
// outputs, workspace and tiling); false when no kernel takes `n` parameters.
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

// twin_sync_sites: `seen` as "file:line" lines into `out`; returns the length needed, and clears
// `seen` only when the list fit.
inline int ReportSyncSites(std::set<std::string>& seen, char* out, int len) {
    std::string all;
    for (const std::string& s : seen) all += s + "\n";
    if (int(all.size()) < len) {
        std::snprintf(out, size_t(len), "%s", all.c_str());
        seen.clear();
    }
    return int(all.size());
}

}  // namespace airfuse_twin_launch
