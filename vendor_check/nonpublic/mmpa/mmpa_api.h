// Stands for CANN's portability layer (mmpa/mmpa_api.h, not in the open-source repositories), of
// which opbuild uses two things: the thread id for its log lines and MM_SYS_GET_ENV for the
// variables that steer its generators (OPS_PRODUCT_NAME: the chips to generate for;
// OPS_PROJECT_NAME / OPS_DIRECT_ACCESS_PREFIX: the aclnn name prefix; OPS_ACLNN_GEN: whether to
// generate aclnn at all). Safe because both are the plain POSIX calls mmpa wraps on Linux.
#pragma once
// CANN's mmpa_api.h brings the system headers mmpa wraps; opbuild relies on it for PATH_MAX and chmod.
#include <climits>
#include <sys/stat.h>
#include <cstdlib>
#include <sys/syscall.h>
#include <unistd.h>

inline int mmGetTid() { return static_cast<int>(syscall(SYS_gettid)); }

#define MM_ENV_OPS_PRODUCT_NAME "OPS_PRODUCT_NAME"
#define MM_ENV_OPS_PROJECT_NAME "OPS_PROJECT_NAME"
#define MM_ENV_OPS_DIRECT_ACCESS_PREFIX "OPS_DIRECT_ACCESS_PREFIX"
#define MM_ENV_OPS_ACLNN_GEN "OPS_ACLNN_GEN"
#define MM_SYS_GET_ENV(name, value) ((value) = std::getenv(name))
