// This variant's kernel table, which dispatch.cpp picks from (compiled once per variant, as the kernels).
#include "kernels.h"

namespace airfuse::cpu {
inline namespace CPU_CAPABILITY {

const Kernels kernels = {
#define AIRFUSE_CPU_KERNEL_ENTRY(name, result, parameters, arguments) &name,
    AIRFUSE_CPU_KERNELS(AIRFUSE_CPU_KERNEL_ENTRY)
#undef AIRFUSE_CPU_KERNEL_ENTRY
};

}  // namespace CPU_CAPABILITY
}  // namespace airfuse::cpu
