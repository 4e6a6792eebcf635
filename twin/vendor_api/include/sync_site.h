// Force-included after CANN's headers into every kernel the vendor-API twin builds (build.cmake):
// each SetFlag, WaitFlag and PipeBarrier a kernel calls first tells the core model its source line,
// so the mutation test can remove one call site of the source, as on the home-made twin (whose
// SetFlag/WaitFlag/PipeBarrier take the site as defaulted arguments, twin/include/twin/sync.h). The
// call itself is the vendor's, unchanged; CANN's headers, parsed before this file, are untouched.
#pragma once

extern "C" void airfuse_vendor_twin_sync_site(const char* file, int line);

#define SetFlag airfuse_vendor_twin_sync_site(__FILE__, __LINE__), SetFlag
#define WaitFlag airfuse_vendor_twin_sync_site(__FILE__, __LINE__), WaitFlag
#define PipeBarrier airfuse_vendor_twin_sync_site(__FILE__, __LINE__), PipeBarrier
