// Stands for CANN's error-message manager (base/err_msg.h, not in the open-source repositories),
// which the real common/ge_common/debug/ge_log.h includes for its REPORT_* macros. Safe because
// the manager only queues text for the user-facing error report: here it goes to stderr, the
// caller's return codes and control flow are untouched.
#pragma once
#include <cstdio>
#include <vector>

#define REPORT_INNER_ERR_MSG(code, fmt, ...) std::fprintf(stderr, "[%s] " fmt "\n", (code), ##__VA_ARGS__)
#define REPORT_PREDEFINED_ERR_MSG(code, keys, values) std::fprintf(stderr, "[%s]\n", (code))
