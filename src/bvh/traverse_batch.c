/* Batched raycast: validates the batch, converts it chunk by chunk into ray records, and traces
 * each chunk with ray streams over the 4-wide nodes (or, as a tuning option, move-to-front over
 * the binary nodes), 4 or 8 rays per instruction. */
#include <string.h>

#include "bvh/traverse.h"
#include "core/alloc.h"
#include "simd/bvh_kernels.h"

/* Chunks of 128K rays: a chunk's records take 6 MB, its list arena 4 MB. Measured on the bench's
 * scenes: larger chunks put more rays on each node (16K: -20%, 256K: about the same). Lists of 4
 * rays or fewer go on as interleaved single-ray walks (2 / 4 / 8: the bunny 3% faster at 2, the
 * world 5-15% faster at 4 or 8). Batches under 4096 rays: streams over 3 levels of node4s at most,
 * from lists of 8 rays, while the rays hit at most 1.375 children each on average (session 6:
 * see seed_top; 1.5 until session 11, where the bunny's bounces, 1.46 at its root, ran 1-4%
 * faster as walks from the root, the camel's 2.5%, the world within noise). Walks fetch ahead
 * in trees of 24 MiB or more (see vl_bvh_trace_interleaved). Batches go as walks below 4096
 * rays, or below one ray entering the tree per leaf: see goes_as_walks.
 * The walks' node steps go two walks per 8-lane pass where 8 lanes are native (walk_pairs;
 * session 8: see vl_bvh_trace_interleaved). Closest hit: each ray goes into its own nearest child
 * first only from lists of a whole chunk (session 14, against lists of 16384 rays: bunny bounces
 * +13-17%, line of sight +3-11%, the camel's bounces +4%; the world's batches grouped by origin,
 * line of sight -4.5%, bounces +4.6%; never: the world's line of sight -14%). */
vl_bvh_tuning vl_bvh_tune = {131072u, 4u,  4096u, 4096u, VL_SIMD_PREFERRED_WIDTH, 1u, 1u, 8u, 0u, 131072u, 3u, 8u,
                             11u,     24u, 1u,    1u};

#define VL_W 4
#include "bvh/traverse_batch_w.h"
#include "bvh/traverse_seed_w.h"
#undef VL_W
#if VL_SIMD_PREFERRED_WIDTH == 8
#define VL_W 8
#include "bvh/traverse_batch_w.h"
#include "bvh/traverse_seed_w.h"
#undef VL_W
#endif

#define VL_MAX_W 8u

/* The batch's ray records are made VL_RECS_W at a time (vl_b4_rayrecs / vl_b8_rayrecs write the
 * layout of primitives.h). */
#if VL_SIMD_PREFERRED_WIDTH == 8
#define VL_RECS_W 8u
#define VL_RAYRECS vl_b8_rayrecs
#else
#define VL_RECS_W 4u
#define VL_RAYRECS vl_b4_rayrecs
#endif
_Static_assert(VL_RR_TMIN == 3 && VL_RR_INV == 4 && VL_RR_TMAX == 7 && VL_RR_DIR == 8 && VL_RR_TMAX2 == 11 &&
                   sizeof(vl_ray) == 8 * sizeof(float),
               "records are the quads (origin, tmin) (inv_dir, tmax) (dir, tmax); a vl_ray is 8 floats");

/* Counting sort of the ray indices ids[0, n) by direction octant (through tmp); groups[g] and
 * groups[g + 1] bound octant g. Returns 8. */
static uint32_t group_by_octant(const float* rec, uint32_t* ids, uint32_t* tmp, uint32_t n, uint32_t groups[9]) {
    uint32_t count[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < n; i++) {
        const float* r = rec + VL_RAYREC_FLOATS * (size_t)ids[i];
        uint32_t o = (r[VL_RR_INV] < 0.0f) | (r[VL_RR_INV + 1] < 0.0f) << 1 | (r[VL_RR_INV + 2] < 0.0f) << 2;
        tmp[i] = o;
        count[o]++;
    }
    uint32_t at[8];
    groups[0] = 0;
    for (uint32_t g = 0; g < 8; g++) at[g] = groups[g], groups[g + 1] = groups[g] + count[g];
    /* tmp[i] holds the octant of ids[i]; place the ids after the octants, then copy back */
    for (uint32_t i = 0; i < n; i++) tmp[n + at[tmp[i]]++] = ids[i];
    memcpy(ids, tmp + n, sizeof(uint32_t) * n);
    memset(tmp, 0, sizeof(uint32_t) * 2 * (size_t)n); /* the arena holds valid record indices only */
    return 8;
}

/* Cells per axis of the batch order below. */
#define VL_ORDER_CELLS 8u

/* The batch's ray indices in perm[0, count), so that each chunk holds rays that start near each
 * other: a counting sort (stable) by the cell of the origin in the tree's box, 8 cells per axis,
 * then by direction octant. chunks: ceil(count / chunk), computed by the caller in 64 bits; keys
 * (count entries) and cursor (chunks entries) are scratch. */
static void order_by_origin(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t chunk, uint32_t chunks,
                            uint32_t* perm, uint16_t* keys, uint32_t* cursor) {
    const vl_bvh_node* root = &bvh->nodes[0];
    float lo[3], scale[3];
    for (int a = 0; a < 3; a++) {
        float extent = root->max[a] - root->min[a];
        lo[a] = root->min[a];
        /* an unbounded or flat axis orders nothing */
        scale[a] = extent > 0.0f && extent <= FLT_MAX ? (float)VL_ORDER_CELLS / extent : 0.0f;
    }
    enum { KEYS = VL_ORDER_CELLS * VL_ORDER_CELLS * VL_ORDER_CELLS * 8 };
    uint32_t start[KEYS];
    memset(start, 0, sizeof start);
    for (uint32_t i = 0; i < count; i++) {
        const vl_ray* r = &rays[i];
        uint32_t key = 0;
        for (int a = 0; a < 3; a++) {
            float f = (r->origin[a] - lo[a]) * scale[a];
            /* NaN: 0 */
            uint32_t c = f > 0.0f ? (f < (float)(VL_ORDER_CELLS - 1) ? (uint32_t)f : VL_ORDER_CELLS - 1) : 0;
            key = key * VL_ORDER_CELLS + c;
        }
        uint32_t octant = (r->dir[0] < 0.0f) | (r->dir[1] < 0.0f) << 1 | (r->dir[2] < 0.0f) << 2;
        key = key * 8 + octant;
        keys[i] = (uint16_t)key;
        start[key]++;
    }
    for (uint32_t k = 0, sum = 0; k < KEYS; k++) {
        uint32_t c = start[k];
        start[k] = sum;
        sum += c;
    }
    /* ray i's place in that order is start[keys[i]]++; it goes to the chunk of its place, where the
     * rays keep the caller's order (measured: rays in cell order within a chunk were 10-40% slower) */
    for (uint32_t c = 0; c < chunks; c++) cursor[c] = c * chunk;
    for (uint32_t i = 0; i < count; i++) perm[cursor[start[keys[i]]++ / chunk]++] = i;
}

/* The chunk of rays base + i (or order[i] when ordered), i < len: their answers set to misses,
 * their records, and the valid ones' indices idx[0, *live). *parallel gets any lane with a
 * parallel axis. VL_ERR_INVALID_QUERY when some ray is not valid (it gets a retired record). */
static vl_status load_chunk(const vl_ray* rays, uint32_t base, const uint32_t* order, uint32_t len, float* rec,
                            vl_hit* out, uint32_t* idx, uint32_t* live, uint32_t* parallel) {
    vl_status status = VL_OK;
    uint32_t n = 0, flat_any = 0, i = 0;
    for (uint32_t j = 0; j < len; j++) out[j] = vl_bvh_miss();
    for (; i + VL_RECS_W <= len; i += VL_RECS_W) {
        vl_ray gathered[VL_RECS_W];
        const vl_ray* src = rays + base + i;
        if (order) {
            for (uint32_t j = 0; j < VL_RECS_W; j++) gathered[j] = rays[order[i + j]];
            src = gathered;
        }
        uint32_t flat, ok = VL_RAYRECS((const float*)src, rec + VL_RAYREC_FLOATS * (size_t)i, VL_RAYREC_FLOATS, &flat);
        flat_any |= flat;
        if (ok != (1u << VL_RECS_W) - 1u) status = VL_ERR_INVALID_QUERY;
        for (uint32_t j = 0; j < VL_RECS_W; j++) idx[n] = i + j, n += (ok >> j) & 1u;
    }
    for (; i < len; i++) { /* the last few one at a time */
        const vl_ray* ray = &rays[order ? order[i] : base + i];
        float* r = rec + VL_RAYREC_FLOATS * (size_t)i;
        if (vl_bvh_ray_valid(ray)) {
            flat_any |= vl_bvh_rayrec_set(r, ray);
            idx[n++] = i;
        } else {
            vl_bvh_rayrec_retired(r);
            status = VL_ERR_INVALID_QUERY;
        }
    }
    *live = n, *parallel = flat_any;
    return status;
}

/* Walks take a batch this many rays at a time, so that its records and seeds stay in L2 beside
 * the tree's nodes (session 9, 4096 against whole batches of 65536 rays on the world, closest hit:
 * random +49%, diffuse +18%, line of sight +11%; session 11, 1024 against 4096: bunny, batches of
 * 4096 and 16384, 0 to +8%, the world at 16384 and 65536 +1 to +3%; 512 and 2048 within 5% of
 * 1024 either way). */
#define VL_WALK_CHUNK 1024u

/* Rays sampled to estimate how many of a batch enter the tree's box. */
#define VL_ENTRY_SAMPLE 512u

/* About how many of the batch's rays enter the tree's box: those of a sample (VL_ENTRY_SAMPLE
 * rays evenly spaced), scaled to the batch. Invalid rays enter nothing. */
static uint32_t rays_entering(const vl_bvh* bvh, const vl_ray* rays, uint32_t count) {
    const vl_bvh_node* root = &bvh->nodes[0];
    const uint32_t step = count / VL_ENTRY_SAMPLE + 1;
    uint32_t in = 0, sampled = 0;
    for (uint32_t i = 0; i < count; i += step, sampled++) {
        _Alignas(16) float rec[VL_RAYREC_FLOATS];
        float t;
        if (!vl_bvh_ray_valid(&rays[i])) continue;
        const int parallel = vl_bvh_rayrec_set(rec, &rays[i]) != 0;
        in += (uint32_t)vl_bvh_ray_box(rec, root->min, root->max, rec[VL_RR_TMAX], parallel, &t);
    }
    return (uint32_t)((uint64_t)count * in / sampled);
}

/* The batch one ray at a time, without scratch. */
static vl_status raycast_one_by_one(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags,
                                    vl_hit* hits) {
    vl_status status = VL_OK;
    for (uint32_t i = 0; i < count; i++)
        if (vl_bvh_raycast1(bvh, &rays[i], flags, &hits[i]) != VL_OK) status = VL_ERR_INVALID_QUERY;
    return status;
}

/* Traces a chunk's live records idx[0, live) as ray streams (or move-to-front over the binary
 * nodes); remnants go through q. */
static void trace_chunk(const vl_bvh* bvh, float* rec, uint32_t* idx, uint32_t* tmp, uint32_t* masks,
                        uint32_t arena_size, uint32_t live, vl_bvh_queue* q) {
    const int parallel = q->parallel, any_hit = q->any_hit;
    vl_hit* hits = q->hits;
    if (vl_bvh_tune.wide) {
        /* closest hit: rays grouped by direction octant, so that a list's nearest child is
         * nearest for all its rays; groups traced last first (a group's lists overwrite only
         * the groups after it) */
        uint32_t groups[9] = {0, live, 0, 0, 0, 0, 0, 0, 0};
        uint32_t ngroups = 1;
        if (!any_hit && vl_bvh_tune.octants && (uint64_t)3 * live <= arena_size)
            ngroups = group_by_octant(rec, idx, idx + live, live, groups);
        for (uint32_t g = ngroups; g-- > 0;) {
            uint32_t* list = idx + groups[g];
            uint32_t n = groups[g + 1] - groups[g];
            if (!n) continue;
#if VL_SIMD_PREFERRED_WIDTH == 8
            if (vl_bvh_tune.width == 8) {
                vl_t8_trace_wide(bvh, rec, list, arena_size - groups[g], masks, n, parallel, any_hit, hits, q);
                continue;
            }
#endif
            vl_t4_trace_wide(bvh, rec, list, arena_size - groups[g], masks, n, parallel, any_hit, hits, q);
        }
    } else {
#if VL_SIMD_PREFERRED_WIDTH == 8
        if (vl_bvh_tune.width == 8)
            vl_t8_trace(bvh, rec, idx, tmp, live, parallel, any_hit, hits, q);
        else
#endif
            vl_t4_trace(bvh, rec, idx, tmp, live, parallel, any_hit, hits, q);
    }
    vl_bvh_queue_flush(q);
}

/* Scratch of a small batch's seeded walks (see trace_seeded), for a chunk of `chunk` rays. */
static size_t seeded_scratch(uint32_t chunk, uint32_t* cap) {
    *cap = 4u * chunk + 64u;
    return sizeof(uint32_t) * (4 * ((size_t)chunk + VL_MAX_W) + 7 * ((size_t)*cap + VL_MAX_W) + 2 * (size_t)chunk + 2);
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

/* A small batch's live records arena[0, live): ray streams over the top of the tree (while a
 * node's list holds at least vl_bvh_tune.seed_list rays) leave each ray its seeds, from which its
 * single-ray walk goes on, interleaved with the others'. The streams share the top levels' node
 * tests among the rays (VL_W per test), and a ray that misses them has no walk at all. */
static void trace_seeded(const vl_bvh* bvh, float* rec, uint32_t* arena, uint32_t arena_size, uint32_t* masks,
                         uint32_t* seed_block, uint32_t cap, uint32_t len, uint32_t live, int parallel, int any_hit,
                         vl_hit* out, void* walks) {
    float* tn_rows = (float*)seed_block;
    uint32_t* sa = seed_block + 4 * ((size_t)len + VL_MAX_W);
    const size_t row = (size_t)cap + VL_MAX_W; /* every array: cap entries and VL_W past them */
    vl_bvh_seeds s = {0, cap, sa, sa + row, sa + 2 * row, (float*)(sa + 3 * row)};
    uint32_t* grouped = sa + 4 * row; /* child, count, tnear by ray (read 4 at a time) */
    uint32_t* first = grouped + 3 * row;
    uint32_t* ids = first + len + 2;
    int seeded;
#if VL_SIMD_PREFERRED_WIDTH == 8
    if (vl_bvh_tune.width == 8)
        seeded = vl_t8_seed_top(bvh, rec, arena, arena_size, masks, tn_rows, live, parallel, &s);
    else
#endif
        seeded = vl_t4_seed_top(bvh, rec, arena, arena_size, masks, tn_rows, live, parallel, &s);
    float* tnear = (float*)(grouped + 2 * row);
    vl_bvh_jobs jobs = {arena, live, NULL, NULL, NULL, NULL, NULL}; /* no seeds: walks from the root */
    if (seeded) {
        jobs = (vl_bvh_jobs){ids, 0, NULL, first, grouped, grouped + row, tnear};
        jobs.n = group_seeds(&s, len, first, grouped, grouped + row, tnear, ids);
    }
    vl_bvh_trace_interleaved(bvh, rec, &jobs, parallel, any_hit, out, walks);
}

/* Rays the streams trace at once, and whether a batch is traced by origin in chunks of that many. */
static uint32_t stream_chunk(void) { return vl_bvh_tune.chunk ? vl_bvh_tune.chunk : 16384u; }
static int grouped_batch(uint32_t count, uint32_t flags) {
    return (flags & VL_RAY_GROUP_BY_ORIGIN) && count > stream_chunk();
}

/* How a batch is traced and where its scratch goes: one block of `bytes`, 64-byte aligned. */
typedef struct vl_batch_plan {
    uint32_t chunk, chunks, arena_size, cap;
    int small, seeded, lists, ordered;
    size_t bytes, walk_bytes, order_bytes, rec_bytes, arena_bytes, mask_bytes;
} vl_batch_plan;

/* The plan of a batch of count rays (>= VL_WALKS / 2) traced as walks (small) or streams. */
static vl_batch_plan plan_batch(uint32_t count, uint32_t flags, int small) {
    vl_batch_plan p;
    p.small = small;
    p.chunk = small && stream_chunk() > VL_WALK_CHUNK ? VL_WALK_CHUNK : stream_chunk();
    if (p.chunk > count) p.chunk = count;
    p.rec_bytes = sizeof(float) * VL_RAYREC_FLOATS * (size_t)p.chunk;
    const size_t idx_bytes = sizeof(uint32_t) * ((size_t)p.chunk + VL_MAX_W);
    /* wide: the arena of ray lists, then the per-block child masks */
    p.arena_size = (vl_bvh_tune.arena ? vl_bvh_tune.arena : 8u) * p.chunk;
    p.arena_bytes = sizeof(uint32_t) * ((size_t)p.arena_size + VL_MAX_W);
    p.mask_bytes = sizeof(uint32_t) * ((size_t)p.chunk / 2 + 2);
    p.walk_bytes = vl_bvh_interleaved_scratch() + sizeof(uint32_t) * 2 * VL_QUEUE;
    /* VL_RAY_GROUP_BY_ORIGIN: a batch of more than one stream chunk (as bvh.h says, walks or
     * streams) is traced in the order of order_by_origin, each chunk's hits gathered first, then
     * scattered */
    p.chunks = (uint32_t)(((uint64_t)count + p.chunk - 1) / p.chunk);
    p.ordered = grouped_batch(count, flags) && p.chunks <= 65536u;
    p.order_bytes = p.ordered ? sizeof(vl_hit) * (size_t)p.chunk + sizeof(uint32_t) * ((size_t)count + p.chunks) +
                                    sizeof(uint16_t) * ((size_t)count + 1)
                              : 0;
    p.order_bytes = (p.order_bytes + 63) & ~(size_t)63; /* the records after it stay 64-byte aligned */
    /* small batches: seeded walks (vl_bvh_tune.seed_depth > 0) or walks from the root */
    p.seeded = small && vl_bvh_tune.seed_depth;
    p.cap = 0;
    const size_t seed_bytes = p.seeded ? seeded_scratch(p.chunk, &p.cap) : 0;
    p.lists = (vl_bvh_tune.wide && !small) || p.seeded;
    p.bytes = p.walk_bytes + p.order_bytes + p.rec_bytes + seed_bytes;
    p.bytes += p.lists ? p.arena_bytes + p.mask_bytes : 2 * idx_bytes;
    return p;
}

/* Whether the batch goes as walks: measured, below a few thousand rays, or under one ray entering
 * the tree per leaf, lists are too sparse for the streams to beat the single-ray walks, which then
 * go interleaved (sessions 9 and 10, batches of 4096 to 262144: on the bunny and the camel, in
 * cache, random rays run faster as walks up to about one entering ray per leaf, by up to 35%,
 * while bounces want the streams from 0.3 per leaf and line of sight from about 0.6, by up to 1.9x
 * at one per leaf; on the world, 201K leaves and 86 MB, the walks lead up to 262144 rays or tie,
 * on line of sight by 14% to 2.6x, on random rays by up to 59%; rays that miss the tree's box count
 * for neither; no one density fits every set, and one per leaf loses least). The streams see one
 * chunk at a time, so a batch of several chunks counts as one chunk, unless grouped by origin,
 * when each chunk crowds one part of the tree (session 12, the world, 1M rays, 8 chunks of 0.65
 * rays per leaf: walks against streams, random +31% closest hit and +21% any hit, bounces +3-4%,
 * line of sight +14% closest, -11% any; grouped, the streams lead by 0-43%). */
static int goes_as_walks(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags) {
    const int any_hit = (flags & VL_RAY_ANY) != 0;
    const uint32_t leaves = (bvh->node_count + 1) / 2;
    const uint32_t floor_rays = any_hit ? vl_bvh_tune.small_batch : vl_bvh_tune.small_closest;
    const uint32_t per_ray = vl_bvh_tune.stream_leaves;
    const uint32_t dense = per_ray ? leaves / per_ray : 0; /* rays entering the tree for the streams */
    const uint32_t seen = (grouped_batch(count, flags) || count < stream_chunk()) ? count : stream_chunk();
    return count < floor_rays || (dense && (seen < dense || rays_entering(bvh, rays, seen) < dense));
}

/* The batch traced as planned in `block` (p->bytes, 64-byte aligned). */
static vl_status trace_batch(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits,
                             const vl_batch_plan* p, void* block) {
    const int any_hit = (flags & VL_RAY_ANY) != 0;
    const uint32_t chunk = p->chunk, arena_size = p->arena_size;
    vl_status status = VL_OK;
    void* walks = block;
    uint32_t* queue = (uint32_t*)((char*)block + vl_bvh_interleaved_scratch());
    vl_hit* chunk_hits = (vl_hit*)((char*)block + p->walk_bytes);
    uint32_t* perm = p->ordered ? (uint32_t*)(chunk_hits + chunk) : NULL;
    float* rec = (float*)((char*)block + p->walk_bytes + p->order_bytes);
    uint32_t* idx = (uint32_t*)((char*)rec + p->rec_bytes);
    uint32_t* tmp = idx + chunk + VL_MAX_W;
    uint32_t* masks = idx + arena_size + VL_MAX_W;
    uint32_t* seed_block = p->seeded ? (uint32_t*)((char*)idx + p->arena_bytes + p->mask_bytes) : NULL;
    if (p->lists) memset(idx, 0, p->arena_bytes); /* every entry a valid record index */
    if (p->ordered)
        order_by_origin(bvh, rays, count, chunk, p->chunks, perm, (uint16_t*)(perm + count + p->chunks),
                        perm + count);

    for (uint32_t base = 0; base < count; base += chunk) {
        uint32_t len = count - base < chunk ? count - base : chunk;
        const uint32_t* order = p->ordered ? perm + base : NULL;
        vl_hit* out = p->ordered ? chunk_hits : hits + base;
        uint32_t live = 0, parallel = 0;
        if (load_chunk(rays, base, order, len, rec, out, idx, &live, &parallel) != VL_OK) status = VL_ERR_INVALID_QUERY;
        for (uint32_t j = 0; j < VL_MAX_W; j++) idx[live + j] = 0;
        if (live && p->seeded)
            trace_seeded(bvh, rec, idx, arena_size, masks, seed_block, p->cap, len, live, parallel != 0, any_hit, out,
                         walks);
        if (live && p->small && !p->seeded) {
            vl_bvh_jobs jobs = {idx, live, NULL, NULL, NULL, NULL, NULL};
            vl_bvh_trace_interleaved(bvh, rec, &jobs, parallel != 0, any_hit, out, walks);
        }
        if (live && !p->small) {
            vl_bvh_queue q = {bvh, rec, out, parallel != 0, any_hit, 0, queue, queue + VL_QUEUE, walks};
            trace_chunk(bvh, rec, idx, tmp, masks, arena_size, live, &q);
        }
        if (order)
            for (uint32_t i = 0; i < len; i++) hits[order[i]] = out[i];
    }
    return status;
}

static vl_status check_batch(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags,
                             const vl_hit* hits) {
    if (!bvh || (count && (!rays || !hits))) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_BVH_RAY_FLAGS) return VL_ERR_INVALID_FLAGS;
    return VL_OK;
}

/* Rays of a batch whose rays and answers are fetched before the call plans: a small batch's
 * lines are new to the cache, in a call too short for the hardware prefetcher to run ahead of them
 * (session 15, batches of 64 out of 1M rays: bunny line of sight +5.8%, random +3.5%, random any
 * hit +2.1%, line of sight any hit +1.2%, world random +3.7%; batches of 1024 +0.9%). */
#define VL_FETCH_RAYS 256u

/* The plan of a checked batch of at least VL_WALKS / 2 rays, its first rays fetched meanwhile: both
 * entry points start this way. */
static vl_batch_plan plan_call(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits) {
    const size_t n = count < VL_FETCH_RAYS ? count : VL_FETCH_RAYS;
    for (size_t b = 0; b < sizeof(vl_ray) * n; b += 64) __builtin_prefetch((const char*)rays + b);
    for (size_t b = 0; b < sizeof(vl_hit) * n; b += 64) __builtin_prefetch((char*)hits + b, 1);
    return plan_batch(count, flags, goes_as_walks(bvh, rays, count, flags));
}

vl_status vl_bvh_raycast(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits) {
    vl_status status = check_batch(bvh, rays, count, flags, hits);
    if (status != VL_OK) return status;
    if (count < VL_WALKS / 2) return raycast_one_by_one(bvh, rays, count, flags, hits); /* too few to interleave */
    const vl_batch_plan p = plan_call(bvh, rays, count, flags, hits);
    void* block = vl_mem_alloc(p.bytes);
    if (!block) return raycast_one_by_one(bvh, rays, count, flags, hits); /* slower, same answers */
    status = trace_batch(bvh, rays, count, flags, hits, &p, block);
    vl_mem_free(block, p.bytes);
    return status;
}

size_t vl_bvh_raycast_scratch_size(const vl_bvh* bvh, uint32_t count, uint32_t flags) {
    if (!bvh || count < VL_WALKS / 2 || (flags & ~VL_BVH_RAY_FLAGS)) return 0;
    const size_t walks = plan_batch(count, flags, 1).bytes, streams = plan_batch(count, flags, 0).bytes;
    return walks > streams ? walks : streams;
}

vl_status vl_bvh_raycast_scratch(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits,
                                 void* scratch, size_t scratch_bytes) {
    vl_status status = check_batch(bvh, rays, count, flags, hits);
    if (status != VL_OK) return status;
    if (count < VL_WALKS / 2) return raycast_one_by_one(bvh, rays, count, flags, hits);
    /* checked against the size for any rays, so that whether a call is refused never depends on them */
    if (!scratch || ((uintptr_t)scratch & (VL_BVH_SCRATCH_ALIGNMENT - 1)) ||
        scratch_bytes < vl_bvh_raycast_scratch_size(bvh, count, flags))
        return VL_ERR_INVALID_ARGUMENT;
    const vl_batch_plan p = plan_call(bvh, rays, count, flags, hits);
    return trace_batch(bvh, rays, count, flags, hits, &p, scratch);
}
