/* vl_context and the default pool (volley/tasks.h) themselves: vl_context_create refuses an
 * enqueue without a finish, 0 workers and more than VL_MAX_WORKERS, and a NULL out;
 * vl_thread_pool_create refuses 0 workers; the accessors and destroyers take NULL; a context
 * without a job system has one worker. What each call does on a context: the test_*_context.c
 * programs. */
#include <volley/volley.h>

#include "test_util.h"
#include "toy_jobs.h"

int main(void) {
    vl_context* ctx = NULL;
    vl_task_system ts = {toy_enqueue, NULL, NULL, 2};
    CHECK(vl_context_create(&ts, &ctx) == VL_ERR_INVALID_ARGUMENT && !ctx, "enqueue without finish");
    ts.finish = toy_finish, ts.worker_count = 0;
    CHECK(vl_context_create(&ts, &ctx) == VL_ERR_INVALID_ARGUMENT, "no workers");
    ts.worker_count = VL_MAX_WORKERS + 1;
    CHECK(vl_context_create(&ts, &ctx) == VL_ERR_INVALID_ARGUMENT, "too many workers");
    CHECK(vl_context_create(NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "no out");
    vl_thread_pool* pool = NULL;
    CHECK(vl_thread_pool_create(0, &pool) == VL_ERR_INVALID_ARGUMENT && !pool, "pool of 0");
    vl_task_system none = vl_thread_pool_get_task_system(NULL);
    CHECK(!none.enqueue && none.worker_count == 0, "no pool");
    CHECK(vl_context_get_worker_count(NULL) == 0 && vl_context_get_scratch_bytes(NULL) == 0, "NULL context");
    vl_context_destroy(NULL);
    vl_thread_pool_destroy(NULL);

    CHECK(vl_context_create(NULL, &ctx) == VL_OK && vl_context_get_worker_count(ctx) == 1, "serial context");
    vl_context_destroy(ctx);
    CHECK(vl_get_bytes_in_use() == 0, "leak: %zu bytes", vl_get_bytes_in_use());
    return test_finish("test_context");
}
