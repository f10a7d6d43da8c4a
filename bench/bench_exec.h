// vl_exec arguments for C++ callers: C writes &(vl_exec){.context = ctx}; C++ has no compound
// literals, so these return a temporary that lives to the end of the call's full expression.
#ifndef VL_BENCH_EXEC_H
#define VL_BENCH_EXEC_H

#include <cstddef>

#include <volley/volley.h>

struct exec_arg {
    vl_exec exec;
    operator const vl_exec*() const { return &exec; }
};

inline exec_arg on_scratch(void* scratch, size_t bytes) { return {{nullptr, scratch, bytes}}; }
inline exec_arg on_context(vl_context* ctx) { return {{ctx, nullptr, 0}}; }

#endif
