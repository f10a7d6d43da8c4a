/* The seeds of a small batch's walks (see ray_seed.h). */
#include "bvh/rays/ray_seed.h"
#include "compiler.h"

#include "bvh/rays/ray_lanes.h"

/* Rays of the root's list whose children hit decide at once whether the batch is seeded. */
#define VL_SEED_PROBE 16u

/* Seeds per ray of a chunk that the seeds' arrays hold (and 64 more). */
#define VL_SEEDS_PER_RAY 4u

/* The seeds: seed k sends record ray[k] to child/count (a node4's children when count is 0, a
 * leaf of count primitives otherwise), entered at tnear[k]. */
typedef struct vl_bvh_seeds {
    uint32_t n, cap;
    uint32_t *ray, *child, *count;
    float* tnear;
} vl_bvh_seeds;

/* Whether `rays` rays that hit cnt[c] of a node's children each hit more than VL_SEED_FANOUT8 / 8
 * of them on average: they cross most of the tree, and go better as walks. */
static inline int fans_out(const uint32_t cnt[4], uint32_t rays) {
    return 8u * (cnt[0] + cnt[1] + cnt[2] + cnt[3]) > VL_SEED_FANOUT8 * rays;
}

typedef struct vl_seed_list {
    uint32_t node, depth; /* a node4 and its depth (the root's is 0) */
    uint32_t off, n;      /* its rays: arena[off, off + n) */
} vl_seed_list;

/* The rays arena[0, n) down the top of the tree as ray streams: a node4's list against its 4
 * child boxes, VL_BW rays per test. A child's rays go down with it as a stream while they are at
 * least VL_SEED_MIN_LIST and the child is a node4 of depth < VL_SEED_DEPTH; otherwise each of them
 * gets a seed (the child, with the ray's entry t): the walk of that ray starts there. A node whose
 * children's lists or seeds would not fit gives each of its rays a seed of the node itself (entry
 * t: the ray's tmin). Every ray's seeds cover the tree as its own walk from the root would (the
 * same box tests). Returns 0, with no seeds, when the rays fan out at the root. arena holds
 * arena_size entries plus VL_LIST_SPARE; masks n / VL_BW + 2 entries; tn_rows 4 (n + VL_BW)
 * floats; the seeds' arrays s->cap + VL_LIST_SPARE entries. */
static int seed_top(const vl_bvh* bvh, const float* rec, uint32_t* arena, uint32_t arena_size, uint32_t* masks,
                    float* tn_rows, uint32_t n, int parallel, vl_bvh_seeds* s) {
    const uint32_t lanes_all = (1u << VL_BW) - 1u;
    vl_seed_list stack[4 * VL_SEED_DEPTH + 4];
    uint32_t top = 0;
    uint32_t pending = n; /* rays on the stack's lists: each may need one seed of its node */
    stack[top].node = 0, stack[top].depth = 0, stack[top].off = 0, stack[top++].n = n;
    while (top) {
        vl_seed_list e = stack[--top];
        pending -= e.n;
        const uint32_t* ids = arena + e.off;
        const vl_bvh_node4* w = &bvh->wide[e.node];
        const uint32_t stride = e.n + VL_BW; /* tn row of child c: tn_rows + c * stride */
        vl_boxw b[4];
        vl_lanes_child_boxes(w, b);
        uint32_t cnt[4] = {0, 0, 0, 0};
        for (uint32_t i = 0, blk = 0; i < e.n; i += VL_BW, blk++) {
            vl_rayw r = vl_lanes_slab_rays(rec, ids + i);
            const vl_fw valid = vl_fw_first(e.n - i < VL_BW ? e.n - i : VL_BW);
            uint32_t bits = 0;
            for (uint32_t c = 0; c < 4; c++) {
                vl_fw tn, m = parallel ? vl_kw_slab_parallel(&r, &b[c], &tn) : vl_kw_slab(&r, &b[c], &tn);
                uint32_t hit = vl_fw_bits(vl_fw_and(m, valid));
                vl_fw_storeu(tn_rows + c * stride + i, tn);
                cnt[c] += vl_popcount32(hit);
                bits |= hit << (c * VL_BW);
            }
            masks[blk] = bits;
            /* the root's first rays already tell a batch that crosses most of the tree */
            if (!e.depth && i + VL_BW == VL_SEED_PROBE && e.n > VL_SEED_PROBE && fans_out(cnt, VL_SEED_PROBE)) return 0;
        }
        uint32_t streamed = 0, stream_rays = 0, seed_rays = 0, lists = 0;
        const int fan_ok = !fans_out(cnt, e.n);
        if (!fan_ok && !e.depth) return 0; /* the batch's rays cross most of the tree: no seeds */
        for (uint32_t c = 0; c < 4; c++) {
            if (!cnt[c]) continue;
            if (fan_ok && !w->count[c] && cnt[c] >= VL_SEED_MIN_LIST && e.depth + 1 < VL_SEED_DEPTH)
                streamed |= 1u << c, stream_rays += cnt[c], lists++;
            else
                seed_rays += cnt[c];
        }
        uint32_t atop = e.off + e.n;
        if ((uint64_t)s->n + seed_rays + stream_rays + pending > s->cap ||
            (uint64_t)atop + stream_rays + lists * VL_BW > arena_size) {
            for (uint32_t j = 0; j < e.n; j++) { /* no room: the node itself */
                uint32_t k = s->n++;
                s->ray[k] = ids[j], s->child[k] = e.node, s->count[k] = 0;
                s->tnear[k] = rec[VL_RAYREC_FLOATS * (size_t)ids[j] + VL_RR_TMIN];
            }
            continue;
        }
        uint32_t* dst[4];
        for (uint32_t c = 0; c < 4; c++) {
            if (!(streamed >> c & 1u)) continue;
            dst[c] = arena + atop; /* each list is followed by VL_BW spare entries */
            stack[top].node = w->child[c], stack[top].depth = e.depth + 1, stack[top].off = atop;
            stack[top++].n = cnt[c];
            atop += cnt[c] + VL_BW;
            pending += cnt[c];
        }
        for (uint32_t c = 0; c < 4; c++) {
            if (!cnt[c]) continue;
            const uint32_t* tn = (const uint32_t*)(tn_rows + c * stride);
            if (streamed >> c & 1u) {
                for (uint32_t i = 0, blk = 0; i < e.n; i += VL_BW, blk++) {
                    uint32_t bits = masks[blk] >> (c * VL_BW) & lanes_all;
                    if (bits) dst[c] = vl_lanes_append(dst[c], ids + i, bits);
                }
                continue;
            }
            uint32_t first = s->n, *ray = s->ray + first, *tnear = (uint32_t*)s->tnear + first;
            for (uint32_t i = 0, blk = 0; i < e.n; i += VL_BW, blk++) {
                uint32_t bits = masks[blk] >> (c * VL_BW) & lanes_all;
                if (!bits) continue;
                ray = vl_lanes_append(ray, ids + i, bits);
                tnear = vl_lanes_append(tnear, tn + i, bits);
            }
            s->n += cnt[c];
            for (uint32_t k = first; k < s->n; k++) s->child[k] = w->child[c], s->count[k] = w->count[c];
        }
    }
    return 1;
}

/* Sorts the seeds by ray (a stable counting sort) into child, count and tnear: record r's are
 * [first[r], first[r + 1]), r < len (first holds len + 2 entries). ids gets the records that have
 * any, in order; returns how many. */
static uint32_t group_seeds(const vl_bvh_seeds* s, uint32_t len, uint32_t* first, uint32_t* child, uint32_t* count,
                            float* tnear, uint32_t* ids) {
    memset(first, 0, sizeof(uint32_t) * ((size_t)len + 2));
    for (uint32_t k = 0; k < s->n; k++) first[s->ray[k] + 2]++;
    for (uint32_t r = 2; r < len + 2; r++) first[r] += first[r - 1];
    for (uint32_t k = 0; k < s->n; k++) {
        uint32_t at = first[s->ray[k] + 1]++;
        child[at] = s->child[k], count[at] = s->count[k], tnear[at] = s->tnear[k];
    }
    uint32_t n = 0;
    for (uint32_t r = 0; r < len; r++) ids[n] = r, n += first[r + 1] > first[r];
    return n;
}

/* The seeds' capacity for a chunk of `chunk` rays. */
static uint32_t seed_cap(uint32_t chunk) { return VL_SEEDS_PER_RAY * chunk + 64u; }

/* The block: the entry t rows (4 (chunk + spare) floats), then the seeds' ray, child, count and
 * tnear, the grouped child, count and tnear (cap + spare entries each), then first (chunk + 2)
 * and ids (chunk). */
size_t vl_bvh_seed_bytes(uint32_t chunk) {
    const size_t cap = seed_cap(chunk);
    return sizeof(uint32_t) * (4 * ((size_t)chunk + VL_LIST_SPARE) + 7 * (cap + VL_LIST_SPARE) + 2 * (size_t)chunk + 2);
}

void vl_bvh_trace_seeded(const vl_bvh* bvh, float* rec, uint32_t* arena, uint32_t arena_size, uint32_t* masks,
                         uint32_t* seed_block, uint32_t chunk, uint32_t len, uint32_t live, int parallel,
                         int any_hit, vl_hit* out, void* walks) {
    const uint32_t cap = seed_cap(chunk);
    float* tn_rows = (float*)seed_block;
    uint32_t* sa = seed_block + 4 * ((size_t)len + VL_LIST_SPARE);
    const size_t row = (size_t)cap + VL_LIST_SPARE; /* every array: cap entries and VL_LIST_SPARE past them */
    vl_bvh_seeds s = {0, cap, sa, sa + row, sa + 2 * row, (float*)(sa + 3 * row)};
    uint32_t* grouped = sa + 4 * row; /* child, count, tnear by ray (read 4 at a time) */
    uint32_t* first = grouped + 3 * row;
    uint32_t* ids = first + len + 2;
    const int seeded = seed_top(bvh, rec, arena, arena_size, masks, tn_rows, live, parallel, &s);
    float* tnear = (float*)(grouped + 2 * row);
    vl_bvh_jobs jobs = {arena, live, NULL, NULL, NULL, NULL, NULL}; /* no seeds: walks from the root */
    if (seeded) {
        jobs = (vl_bvh_jobs){ids, 0, NULL, first, grouped, grouped + row, tnear};
        jobs.n = group_seeds(&s, len, first, grouped, grouped + row, tnear, ids);
    }
    vl_bvh_trace_walks(bvh, rec, &jobs, parallel, any_hit, out, walks);
}
