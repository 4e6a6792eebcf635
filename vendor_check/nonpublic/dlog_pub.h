// Stands for CANN's slog interface (dlog_pub.h, shipped in the toolkit, not in the open-source
// repositories), which the OpDef registry (through ge_log.h) and opbuild log with. Safe because
// logging decides nothing: errors and warnings go to stderr so a failing opbuild run says why,
// info and debug lines are dropped, as slog drops them at its default level.
#pragma once
#include <cstdio>

// The module ids the vendor sources log under; the log calls here ignore them, so any value does.
enum { GE = 45, ASCENDCKERNEL = 57 };
enum { DLOG_DEBUG = 0, DLOG_INFO = 1, DLOG_WARN = 2, DLOG_ERROR = 3 };
#define RUN_LOG_MASK 0x01000000

inline int CheckLogLevel(int /*moduleId*/, int level) { return level >= DLOG_WARN ? 1 : 0; }

#define dlog_error(moduleId, fmt, ...) std::fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)
#define dlog_warn(moduleId, fmt, ...) std::fprintf(stderr, "[WARN] " fmt "\n", ##__VA_ARGS__)
#define dlog_info(moduleId, fmt, ...) ((void)(moduleId))
#define dlog_debug(moduleId, fmt, ...) ((void)(moduleId))
