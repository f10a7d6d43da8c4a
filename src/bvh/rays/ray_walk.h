/* Single-ray walks interleaved: VL_WALKS rays in flight, each on its own stack, in rounds, so
 * that one walk's node fetches overlap the others' work. Small batches go this way from their
 * seeds (ray_seed.h), and the ray streams hand their last few rays of a list on to them
 * through a queue. */
#ifndef VL_BVH_RAYS_RAY_WALK_H
#define VL_BVH_RAYS_RAY_WALK_H

#include "bvh/rays/rays.h"

/* Rays in flight in the interleaved walk. */
#define VL_WALKS 16u

/* Seeds one ray may start from: 4 per node4 level, down VL_SEED_DEPTH levels (ray_seed.h). */
#define VL_SEEDS_PER_RAY_MAX 64u

/* What the interleaved walks trace: job j is the record rec + VL_RAYREC_FLOATS * ids[j], j < n.
 * Its walk starts at the seeds [first[r], first[r + 1]) of child, count and tnear, r = ids[j]; or,
 * when first is NULL, at the children of node4 starts[j] (the root's when starts is NULL). */
typedef struct vl_bvh_jobs {
    const uint32_t* ids;
    uint32_t n;
    const uint32_t* starts;
    const uint32_t *first, *child, *count;
    const float* tnear;
} vl_bvh_jobs;

/* Traces the jobs with VL_WALKS single-ray walks in flight, in rounds: each walk pops its next
 * visit, then the node visits are made (two walks per 8-lane pass where 8 lanes are native), then
 * the leaves; in a tree of VL_WALK_PREFETCH_BYTES or more, each step also fetches what the walk
 * visits next. Walks of the same record share its tmax. scratch: vl_bvh_walks_scratch() bytes,
 * 64-byte aligned. */
void vl_bvh_trace_walks(const vl_bvh* bvh, float* rec, const vl_bvh_jobs* jobs, int parallel, int any_hit,
                        vl_hit* hits, void* scratch);
size_t vl_bvh_walks_scratch(void);

/* Rays the ray streams hand on to the walks, each with its start node4; traced VL_QUEUE at a time,
 * and at the end of the chunk (vl_bvh_queue_flush). */
#define VL_QUEUE 256u
typedef struct vl_bvh_queue {
    const vl_bvh* bvh;
    float* rec;
    vl_hit* hits;
    int parallel, any_hit;
    uint32_t n;
    uint32_t* ids;    /* VL_QUEUE entries */
    uint32_t* starts; /* VL_QUEUE entries */
    void* walks;      /* vl_bvh_walks_scratch() bytes */
} vl_bvh_queue;

void vl_bvh_queue_flush(vl_bvh_queue* q);

static inline void vl_bvh_queue_push(vl_bvh_queue* q, uint32_t id, uint32_t start) {
    q->ids[q->n] = id, q->starts[q->n++] = start;
    if (q->n == VL_QUEUE) vl_bvh_queue_flush(q);
}

#endif
