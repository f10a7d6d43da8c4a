/* Sweeps on a context: the batch cut into blocks of sweeps by a rule of its size alone, each block
 * writing its own slice of hits and contacts (on its worker's C stack). */
#include <stdatomic.h>

#include "bvh/engine/blocks.h"
#include "bvh/sweeps/sweep.h"
#include "core/tasks.h"

typedef struct sweep_task {
    const vl_bvh* bvh;
    const void* sweeps;
    vl_hit* hits;
    vl_contact* contacts;
    uint32_t count, block, flags;
    vl_sweep_shape shape;
    size_t size;        /* of one sweep */
    atomic_int invalid; /* some block answered VL_ERR_INVALID_QUERY */
} sweep_task;

static void sweep_range(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker; /* the sweeps need no scratch */
    sweep_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        uint32_t first, n = vl_bvh_block_at(t->count, t->block, b, &first);
        vl_status st = vl_bvh_sweep_on(t->bvh, (const char*)t->sweeps + t->size * first, t->shape, n, t->flags,
                                       t->hits + first, t->contacts ? t->contacts + first : NULL);
        if (st != VL_OK) atomic_store_explicit(&t->invalid, 1, memory_order_relaxed);
    }
}

vl_status vl_bvh_sweep_on_context(vl_context* ctx, const vl_bvh* bvh, const void* sweeps, vl_sweep_shape shape,
                                  uint32_t count, uint32_t flags, vl_hit* hits, vl_contact* contacts) {
    if (count == 0) return VL_OK;
    sweep_task t;
    t.bvh = bvh, t.sweeps = sweeps, t.hits = hits, t.contacts = contacts;
    t.count = count, t.flags = flags, t.shape = shape;
    t.size = shape == VL_SWEEP_BOXES ? sizeof(vl_box_sweep)
             : shape == VL_SWEEP_CAPSULES ? sizeof(vl_capsule_sweep) : sizeof(vl_sphere_sweep);
    t.block = vl_bvh_parallel_query_block(count);
    if (t.block > count) t.block = count;
    atomic_init(&t.invalid, 0);
    vl_tasks_run(ctx, sweep_range, vl_bvh_block_count(count, t.block), 1, &t);
    return atomic_load_explicit(&t.invalid, memory_order_relaxed) ? VL_ERR_INVALID_QUERY : VL_OK;
}
