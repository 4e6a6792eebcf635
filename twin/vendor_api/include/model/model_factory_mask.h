// Stands for the CPU-debug model's model/model_factory_mask.h (libcpudebug_model, not public):
// the vector mask registers asc-tools' parameter checks (cpudebug/src/api_check/kernel_base_check.cpp)
// read, implemented by the vendor-API twin's core model (twin/vendor_api/src/core_model.cpp).
#pragma once
#include <cstdint>

uint64_t ModelFactoryGetMaskHigh();
uint64_t ModelFactoryGetMaskLow();
uint64_t ModelFactoryGetMaskMode();  // 0: normal (a bit per element), 1: counter (the low word counts elements)
