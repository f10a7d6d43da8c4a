/* How a call runs (vl_exec, volley/tasks.h): on the allocator hooks, on the caller's scratch, or
 * on a context. Every entry point that takes a vl_exec reads it through these two helpers. */
#ifndef VL_CORE_EXEC_H
#define VL_CORE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <volley/tasks.h>

typedef enum vl_exec_mode {
    VL_EXEC_HOOKS,   /* exec NULL or all zero */
    VL_EXEC_SCRATCH, /* the caller's scratch */
    VL_EXEC_CONTEXT, /* the context's job system and memory */
    VL_EXEC_INVALID  /* both a context and scratch */
} vl_exec_mode;

static inline vl_exec_mode vl_exec_mode_of(const vl_exec* exec) {
    if (!exec) return VL_EXEC_HOOKS;
    bool scratch = exec->scratch || exec->scratch_bytes;
    if (exec->context) return scratch ? VL_EXEC_INVALID : VL_EXEC_CONTEXT;
    return scratch ? VL_EXEC_SCRATCH : VL_EXEC_HOOKS;
}

/* Whether the caller's scratch serves a call that needs `need` bytes (0: none needed, anything
 * does; SIZE_MAX: too large for any scratch). */
static inline bool vl_scratch_fits(const void* scratch, size_t bytes, size_t need) {
    if (!need) return true;
    return need != SIZE_MAX && scratch && bytes >= need && (uintptr_t)scratch % VL_SCRATCH_ALIGNMENT == 0;
}

#endif
