/* Closest points on a context: the batch cut into blocks of queries by a rule of its size alone
 * (the sweeps' blocks), each block writing its own slice of the answers (on its worker's C
 * stack). Each answer is its query's walk alone, so the blocks change nothing in it. */
#include <stdatomic.h>

#include "bvh/closest/closest.h"
#include "bvh/engine/blocks.h"
#include "core/tasks.h"

typedef struct closest_task {
    const vl_bvh* bvh;
    const vl_point_query* queries;
    vl_closest_hit* answers;
    uint32_t count, block;
    atomic_int invalid; /* some block answered VL_ERR_INVALID_QUERY */
} closest_task;

static void closest_range(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker; /* the queries need no scratch */
    closest_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        uint32_t first, n = vl_bvh_block_at(t->count, t->block, b, &first);
        if (vl_bvh_closest_on(t->bvh, t->queries + first, n, t->answers + first) != VL_OK)
            atomic_store_explicit(&t->invalid, 1, memory_order_relaxed);
    }
}

vl_status vl_bvh_closest_on_context(vl_context* ctx, const vl_bvh* bvh, const vl_point_query* queries, uint32_t count,
                                    vl_closest_hit* answers) {
    if (count == 0) return VL_OK;
    closest_task t;
    t.bvh = bvh, t.queries = queries, t.answers = answers, t.count = count;
    t.block = vl_bvh_parallel_query_block(count);
    if (t.block > count) t.block = count;
    atomic_init(&t.invalid, 0);
    vl_tasks_run(ctx, closest_range, vl_bvh_block_count(count, t.block), 1, &t);
    return atomic_load_explicit(&t.invalid, memory_order_relaxed) ? VL_ERR_INVALID_QUERY : VL_OK;
}
