/* Entry points shared by the single-ray and batched traversals. */
#ifndef VL_BVH_TRAVERSE_H
#define VL_BVH_TRAVERSE_H

#include "bvh/primitives.h"

/* Knobs of the batched traversal, read-only during queries (the bench changes them between runs). */
typedef struct vl_bvh_tuning {
    uint32_t chunk;       /* rays traced together at most (the rest waits for the next chunk) */
    uint32_t remnant;     /* at most this many live rays at a node go on one by one */
    uint32_t small_batch; /* any-hit batches below this many rays go as single-ray walks, not streams */
    uint32_t small_closest; /* closest-hit batches below this many rays go as single-ray walks */
    uint32_t width;       /* 4 or 8 lanes (8 only where VL_SIMD_PREFERRED_WIDTH is 8) */
    uint32_t order;       /* binary traversal: 1, majority direction picks the nearer child first; 0, left first */
    uint32_t wide;        /* 1: ray streams over the 4-wide nodes; 0: move-to-front over the binary nodes */
    uint32_t arena;       /* wide: list entries per ray of a chunk */
    uint32_t octants;     /* wide, closest hit: 1 traces each direction octant of a chunk on its own */
    uint32_t near_first;  /* wide, closest hit: lists of at least this many rays (0: none) send each ray into
                             its own nearest child first */
    uint32_t seed_depth;  /* small batches: node4 levels traced as ray streams before the single-ray walks
                             (0: walks from the root; at most VL_SEED_DEPTH_MAX) */
    uint32_t seed_list;   /* small batches: lists of fewer rays leave the streams for the walks */
    uint32_t seed_fanout; /* small batches: a node's children stay streams only while its rays hit at most
                             seed_fanout / 8 of them on average (rays that enter many boxes are better
                             culled one by one) */
    uint32_t walk_prefetch_mb; /* interleaved walks fetch each walk's next visit a turn ahead in trees of at
                                  least this many MiB (0: in every tree) */
    uint32_t stream_leaves; /* batches with fewer rays entering the tree's box than its leaves / this also go
                               as walks (0: none) */
    uint32_t walk_pairs;    /* 1: the walks' node4 steps go two walks per 8-lane pass, where 8 lanes are native
                               (0: one walk per step) */
} vl_bvh_tuning;

extern vl_bvh_tuning vl_bvh_tune;

/* The flag bits the raycasts know. */
#define VL_BVH_RAY_FLAGS (VL_RAY_ANY | VL_RAY_GROUP_BY_ORIGIN)

/* Whether the tree takes vl_bvh_tune.walk_prefetch_mb or more: too large for the cache, so that
 * the walks fetch ahead. */
static inline int vl_bvh_outgrows_cache(const vl_bvh* bvh) {
    return vl_bvh_bytes(bvh) >= ((size_t)vl_bvh_tune.walk_prefetch_mb << 20);
}

/* Rays in flight in the interleaved walk. */
#define VL_WALKS 16u

/* Where the single-ray walks of a small batch start, found by ray streams over the top of the
 * tree (at most VL_SEED_DEPTH_MAX levels of node4s): seed k sends record ray[k] to child/count
 * (a node4's children when count is 0, a leaf of count primitives otherwise), entered at tnear[k].
 * A ray has at most 4^VL_SEED_DEPTH_MAX seeds. */
#define VL_SEED_DEPTH_MAX 3u
#define VL_SEEDS_PER_RAY_MAX 64u
_Static_assert(VL_SEEDS_PER_RAY_MAX == 1u << (2 * VL_SEED_DEPTH_MAX), "4^VL_SEED_DEPTH_MAX seeds per ray");
typedef struct vl_bvh_seeds {
    uint32_t n, cap;
    uint32_t *ray, *child, *count;
    float* tnear;
} vl_bvh_seeds;

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
 * the leaves, so that one walk's node fetches overlap the others' work; in a tree of
 * vl_bvh_tune.walk_prefetch_mb or more, each step also fetches what the walk visits next. Walks
 * of the same record share its tmax. scratch: vl_bvh_interleaved_scratch() bytes, 64-byte aligned. */
void vl_bvh_trace_interleaved(const vl_bvh* bvh, float* rec, const vl_bvh_jobs* jobs, int parallel, int any_hit,
                              vl_hit* hits, void* scratch);
size_t vl_bvh_interleaved_scratch(void);

/* Rays a batched traversal hands on to the single-ray walks, each with its start node4; traced
 * VL_QUEUE at a time (interleaved), and at the end of the batch (vl_bvh_queue_flush). */
#define VL_QUEUE 256u
typedef struct vl_bvh_queue {
    const vl_bvh* bvh;
    float* rec;
    vl_hit* hits;
    int parallel, any_hit;
    uint32_t n;
    uint32_t* ids;    /* VL_QUEUE entries */
    uint32_t* starts; /* VL_QUEUE entries */
    void* walks;      /* vl_bvh_interleaved_scratch() bytes */
} vl_bvh_queue;

void vl_bvh_queue_flush(vl_bvh_queue* q);

static inline void vl_bvh_queue_push(vl_bvh_queue* q, uint32_t id, uint32_t start) {
    q->ids[q->n] = id, q->starts[q->n++] = start;
    if (q->n == VL_QUEUE) vl_bvh_queue_flush(q);
}

#endif
