// Stands for CANN's platform/soc_spec.h (not in the open-source repositories), included by
// asc-devkit's tiling/platform/platform_ascendc.h. Empty: nothing in airfuse's op_host, nor in
// the parts of platform_ascendc.h it reaches, uses a name from it, so any use is a compile error.
#pragma once
