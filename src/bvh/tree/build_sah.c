/* Top-down binned SAH on all three axes with one pass over a range's primitives per level: the
 * pass that partitions a range also bins its two children. A range carries its box (the union of
 * its bins on its side of the split) and bounds of its centroids that set its bins: its parent's
 * clipped to its own box (nearly the SAH of exact bounds, which would cost a pass of their own:
 * docs/measurements/tree.md). */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "bvh/tree/build_sah.h"
#include "core/alloc.h"
#include "simd/simd.h"

#define VL_BVH_PART_BLOCK 64u
#define VL_BVH_SPARE_BINS_FROM 512u /* primitives */

/* Bins of a range: bin_of(c) = min((int)((c - cmin) * scale), nb - 1) per axis; the bins of axis a
 * are entries a * nb .. a * nb + nb - 1 of its bin set. */
typedef struct vl_binning {
    vl_f4 cmin, scale; /* lane 3: scale 0 */
    vl_i4 last;        /* nb - 1 */
    vl_i4 first;       /* lane a: a * nb */
    uint32_t nb;
    int axes; /* bit a: axis a is binned */
} vl_binning;

/* A range of b->idx with the bounds of its primitives. */
typedef struct vl_range {
    vl_f8 box;        /* a record: the union of the primitives' boxes */
    vl_f4 cmin, cmax; /* bounds of their centroids (lane 3 unused) */
    vl_binning g;
    uint32_t node, begin, end, depth;
    int binned; /* its bin set (the one of its stack slot) is filled */
} vl_range;

/* The bin sets, one per stack slot, and after them a spare pair: 3 * bins bins each. A bin is a
 * record whose lane 3 counts its primitives as an integer added to the bits of 1.0f (records have
 * +infinity there, so the min keeps it; a float in [1, infinity] never slows the arithmetic that
 * passes over that lane, as a denormal would). */
typedef struct vl_bin_sets {
    vl_f8* bins;
    uint32_t stride, slots;
} vl_bin_sets;

typedef struct vl_split {
    int axis; /* -1: none found */
    uint32_t bin, left_count;
    float cost;
    vl_f8 left, right; /* the sides' boxes */
} vl_split;

/* An empty bin, and the increment of a bin's count. */
#define VL_BIN_COUNT_ZERO 0x3F800000u /* 1.0f */
_Alignas(32) static const float k_empty_bin[8] = {FLT_MAX, FLT_MAX, FLT_MAX, 1.0f, FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX};
_Alignas(32) static const int32_t k_count_one[8] = {0, 0, 0, 1, 0, 0, 0, 0};

static inline vl_f4 centroid(vl_f8 rec) {
    vl_f8 h = vl_f8_mul(rec, vl_f8_set1(0.5f));
    return vl_f4_sub(vl_f8_low(h), vl_f8_high(h)); /* min / 2 + max / 2 */
}

/* The entries of a centroid's three bins (on a binned axis the scaled distances are in
 * [0, nb + 1), far inside int32; an unbinned axis gets some bin that is never read). */
static inline vl_i4 bin_entries(vl_f4 cmin, vl_f4 scale, vl_i4 last, vl_i4 first, vl_f4 c) {
    return vl_i4_add(vl_i4_min_u(vl_f4_to_i(vl_f4_mul(vl_f4_sub(c, cmin), scale)), last), first);
}

static inline void bin_add(vl_f8* bins, const uint32_t entry[3], vl_f8 rec) {
    const vl_i8 one = vl_i8_load(k_count_one);
    for (int a = 0; a < 3; a++) bins[entry[a]] = vl_i8_as_f(vl_i8_add(vl_f8_as_i(vl_f8_min(bins[entry[a]], rec)), one));
}

static inline uint32_t bin_count(const vl_f8* bin) {
    uint32_t n;
    memcpy(&n, (const char*)bin + 3 * sizeof(float), sizeof n);
    return n - VL_BIN_COUNT_ZERO;
}

static void bins_clear(vl_f8* bins, uint32_t nb) {
    const vl_f8 empty = vl_f8_load(k_empty_bin);
    for (uint32_t k = 0; k < 3 * nb; k++) bins[k] = empty;
}

/* Adds the bins of other into bins. */
static void bins_merge(vl_f8* bins, const vl_f8* other, uint32_t nb) {
    for (uint32_t k = 0; k < 3 * nb; k++) {
        uint32_t n = bin_count(&bins[k]) + bin_count(&other[k]) + VL_BIN_COUNT_ZERO;
        bins[k] = vl_f8_min(bins[k], other[k]);
        memcpy((char*)&bins[k] + 3 * sizeof(float), &n, sizeof n);
    }
}

/* A power of two s that brings a box's coordinates to |x| * s < 4 (and its largest to at least
 * 1/2, within the normal range): areas of its sub-boxes scaled by s never overflow a float, and
 * scaling loses no precision. */
static float area_scale(vl_f8 box) {
    float v[8], m = 0.0f;
    vl_f8_storeu(v, box);
    for (int a = 0; a < 3; a++) { /* plain compares: fmaxf is a call */
        float lo = fabsf(v[a]), hi = fabsf(v[4 + a]);
        m = lo > m ? lo : m;
        m = hi > m ? hi : m;
    }
    uint32_t bits;
    memcpy(&bits, &m, sizeof bits);
    int32_t e = 253 - (int32_t)(bits >> 23); /* m * 2^(e - 127) in [1/2, 1) */
    bits = (uint32_t)(e < 1 ? 1 : (e > 254 ? 254 : e)) << 23;
    float s;
    memcpy(&s, &bits, sizeof s);
    return s;
}

/* -(max - min) * s of a record's box, per axis (lane 3 unused) */
static inline vl_f4 neg_extent(vl_f8 box, vl_f8 s) {
    vl_f8 t = vl_f8_mul(box, s);
    return vl_f4_add(vl_f8_low(t), vl_f8_high(t));
}

/* Half the surface areas of three boxes scaled by s (lane a: box[a]; lane 3 unused). */
static inline vl_f4 half_areas(const vl_f8 box[3], vl_f8 s) {
    vl_f4 d[4] = {neg_extent(box[0], s), neg_extent(box[1], s), neg_extent(box[2], s), vl_f4_zero()};
    vl_f4_transpose(d);
    return vl_f4_add(vl_f4_add(vl_f4_mul(d[0], d[1]), vl_f4_mul(d[1], d[2])), vl_f4_mul(d[2], d[0]));
}

/* Half the surface area of a box scaled by s, as lane 0 of half_areas. */
static float half_area(vl_f8 box, vl_f8 s) {
    float d[4];
    vl_f4_storeu(d, neg_extent(box, s));
    return d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
}

/* Box and exact centroid bounds of t's primitives, by a pass over them (the root, median splits). */
static void range_bounds(const vl_build* b, vl_range* t) {
    vl_f8 box = vl_f8_set1(FLT_MAX);
    vl_f4 cmin = vl_f4_set1(FLT_MAX), cmax = vl_f4_set1(-FLT_MAX);
    for (uint32_t i = t->begin; i < t->end; i++) {
        vl_f8 r = vl_f8_load(b->rec + 8 * (size_t)b->idx[i]);
        vl_f4 c = centroid(r);
        box = vl_f8_min(box, r);
        cmin = vl_f4_min(cmin, c);
        cmax = vl_f4_max(cmax, c);
    }
    t->box = box, t->cmin = cmin, t->cmax = cmax;
    t->binned = 0;
}

static vl_binning binning_of(const vl_build* b, const vl_range* t) {
    vl_binning g;
    uint32_t n = t->end - t->begin;
    g.nb = b->bins;
    /* small ranges: fewer bins, which build faster for about the same SAH
     * (docs/measurements/tree.md) */
    if (n < 4 * g.nb) g.nb = n < 16 ? 4 : n / 4;
    /* not binned: a flat axis, or one whose centroids span more than FLT_MAX (the extent and the
     * distances to cmin overflow, which would make bin indices NaN); nor lane 3 (extent 0 or NaN) */
    vl_f4 ext = vl_f4_sub(t->cmax, t->cmin), scale = vl_f4_div(vl_f4_set1((float)g.nb), ext);
    vl_f4 binned = vl_f4_and(vl_f4_and(vl_f4_gt(ext, vl_f4_zero()), vl_f4_le(ext, vl_f4_set1(FLT_MAX))),
                             vl_f4_lt(scale, vl_f4_set1(FLT_MAX)));
    g.axes = (int)(vl_f4_bits(binned) & 7u);
    g.scale = vl_f4_and(binned, scale);
    g.cmin = t->cmin;
    _Alignas(16) const int32_t first[4] = {0, (int32_t)g.nb, 2 * (int32_t)g.nb, 0};
    g.last = vl_i4_set1((int32_t)g.nb - 1);
    g.first = vl_i4_load(first);
    return g;
}

/* Fills t's bin set by a pass over its primitives (ranges not binned by their parent's pass). */
VL_INLINE void bin_range(const vl_build* b, const vl_range* t, vl_f8* bins, vl_f8* spare) {
    const vl_binning g = t->g; /* locals: the bin stores may alias anything reached through b or t */
    const float* recs = b->rec;
    const uint32_t* idx = b->idx;
    const uint32_t end = t->end;
    if (end - t->begin < VL_BVH_SPARE_BINS_FROM) spare = bins; /* as in partition */
    bins_clear(bins, g.nb);
    if (spare != bins) bins_clear(spare, g.nb);
    for (uint32_t i = t->begin; i < end; i++) {
        vl_f8 r = vl_f8_load(recs + 8 * (size_t)idx[i]);
        _Alignas(16) uint32_t entry[4];
        vl_i4_store(entry, bin_entries(g.cmin, g.scale, g.last, g.first, centroid(r)));
        bin_add(i & 1 ? spare : bins, entry, r);
    }
    if (spare != bins) bins_merge(bins, spare, g.nb);
}

/* The best SAH split over a range's bins, areas scaled by s; costs are not normalised by the
 * parent's area (the caller compares them with n * area). */
static vl_split find_split(const vl_binning* g, const vl_f8* box, vl_f8 s) {
    const uint32_t nb = g->nb;
    const vl_f8 empty = vl_f8_set1(FLT_MAX);
    _Alignas(16) uint32_t counts[VL_BVH_MAX_BINS][4]; /* [bin][axis] */
    for (uint32_t k = 0; k < nb; k++)
        for (int a = 0; a < 4; a++) counts[k][a] = a < 3 ? bin_count(&box[a * nb + k]) : 0;
    /* all three axes at once, lane a: axis a */
    vl_f4 right_area[VL_BVH_MAX_BINS];
    vl_i4 right_count[VL_BVH_MAX_BINS];
    vl_f8 acc[3] = {empty, empty, empty};
    vl_i4 n = vl_i4_set1(0);
    for (uint32_t k = nb - 1; k > 0; k--) {
        for (int a = 0; a < 3; a++) acc[a] = vl_f8_min(acc[a], box[a * nb + k]);
        n = vl_i4_add(n, vl_i4_load(counts[k]));
        right_area[k] = half_areas(acc, s);
        right_count[k] = n;
    }
    _Alignas(16) const int32_t binned_l[4] = {-(g->axes & 1), -((g->axes >> 1) & 1), -((g->axes >> 2) & 1), 0};
    const vl_i4 binned = vl_i4_load(binned_l), zero = vl_i4_set1(0);
    vl_f4 best = vl_f4_set1(INFINITY);
    vl_i4 best_bin = zero, best_count = zero;
    acc[0] = acc[1] = acc[2] = empty;
    n = zero;
    for (uint32_t k = 1; k < nb; k++) {
        for (int a = 0; a < 3; a++) acc[a] = vl_f8_min(acc[a], box[a * nb + k - 1]);
        n = vl_i4_add(n, vl_i4_load(counts[k - 1]));
        vl_f4 cost = vl_f4_add(vl_f4_mul(half_areas(acc, s), vl_i4_to_f(n)),
                               vl_f4_mul(right_area[k], vl_i4_to_f(right_count[k])));
        vl_i4 valid = vl_i4_and(binned, vl_i4_and(vl_i4_gt(n, zero), vl_i4_gt(right_count[k], zero)));
        vl_f4 better = vl_f4_and(vl_i4_as_f(valid), vl_f4_lt(cost, best));
        best = vl_f4_select(better, cost, best);
        best_bin = vl_f4_as_i(vl_f4_select(better, vl_i4_as_f(vl_i4_set1((int32_t)k)), vl_i4_as_f(best_bin)));
        best_count = vl_f4_as_i(vl_f4_select(better, vl_i4_as_f(n), vl_i4_as_f(best_count)));
    }
    /* the least cost, the first axis of equal ones (lanes still at infinity found none) */
    float cost[4];
    _Alignas(16) uint32_t bin[4], left_count[4];
    vl_f4_storeu(cost, best);
    vl_i4_store(bin, best_bin);
    vl_i4_store(left_count, best_count);
    vl_split split = {.axis = -1, .cost = INFINITY};
    for (int a = 0; a < 3; a++) {
        if (!(cost[a] < split.cost)) continue;
        split.axis = a, split.cost = cost[a];
        split.bin = bin[a], split.left_count = left_count[a];
    }
    if (split.axis < 0) return split;
    const vl_f8* axis_box = box + (uint32_t)split.axis * nb;
    split.left = split.right = empty;
    for (uint32_t k = 0; k < split.bin; k++) split.left = vl_f8_min(split.left, axis_box[k]);
    for (uint32_t k = split.bin; k < nb; k++) split.right = vl_f8_min(split.right, axis_box[k]);
    return split;
}

/* A child of a split: its box from the bins, its centroid bounds its parent's clipped to that box. */
static void child_of(const vl_build* b, const vl_range* t, vl_f8 box, uint32_t begin, uint32_t end, vl_range* kid) {
    kid->box = box;
    kid->cmin = vl_f4_max(t->cmin, vl_f8_low(box));
    kid->cmax = vl_f4_min(t->cmax, vl_f4_xor(vl_f8_high(box), vl_f4_set1(-0.0f)));
    kid->begin = begin, kid->end = end;
    kid->g = binning_of(b, kid);
    kid->binned = 1;
}

/* Branchless stable partition of t by the split (the left side compacts in place, the right goes
 * through tmp: a data-dependent branch here mispredicts half the time) that also bins each
 * primitive into its side's bin set (kid[0] right at bins, kid[1] left one stride further).
 * Blocks of primitives are sorted first and binned after, so that a bin's load never waits on the
 * partition's stores; in large ranges every other primitive goes to the spare sets, merged at the
 * end (a run of primitives in one bin is then two chains of loads and stores, each half as long:
 * docs/measurements/tree.md). Returns the right side's start. Forced inline, as bin_range: the
 * serial loop and the pieces both call it, and a call adds instructions to the serial build. */
VL_INLINE uint32_t partition(vl_build* b, const vl_range* t, const vl_split* s, vl_range* const kid[2], vl_f8* bins,
                             vl_f8* spare, uint32_t stride) {
    const vl_binning g = t->g;
    const vl_i4 split_bin = vl_i4_set1((int32_t)s->bin), zero = vl_i4_set1(0);
    vl_f4 cmin[2], scale[2];
    vl_i4 last[2], first[2];
    for (int side = 0; side < 2; side++) {
        cmin[side] = kid[side]->g.cmin, scale[side] = kid[side]->g.scale, last[side] = kid[side]->g.last;
        first[side] = vl_i4_add(kid[side]->g.first, vl_i4_set1((int32_t)(side * stride)));
        bins_clear(bins + side * stride, kid[side]->g.nb);
    }
    /* locals: the bin stores may alias anything reached through b or t */
    const float* recs = b->rec;
    uint32_t *idx = b->idx, *tmp = b->tmp + t->begin; /* the range's own part: subtrees may run at once */
    const uint32_t end = t->end, axis = (uint32_t)s->axis;
    if (end - t->begin < VL_BVH_SPARE_BINS_FROM) spare = bins;
    if (spare != bins)
        for (uint32_t side = 0; side < 2; side++) bins_clear(spare + side * stride, kid[side]->g.nb);
    uint32_t l = t->begin, r = 0;
    for (uint32_t i = t->begin; i < end; i += VL_BVH_PART_BLOCK) {
        _Alignas(16) uint32_t entry[VL_BVH_PART_BLOCK][4];
        uint32_t prim[VL_BVH_PART_BLOCK];
        uint32_t m = end - i < VL_BVH_PART_BLOCK ? end - i : VL_BVH_PART_BLOCK;
        for (uint32_t j = 0; j < m; j++) {
            uint32_t p = idx[i + j];
            vl_f4 c = centroid(vl_f8_load(recs + 8 * (size_t)p));
            vl_i4 bin = bin_entries(g.cmin, g.scale, g.last, zero, c);
            uint32_t left = (vl_f4_bits(vl_i4_as_f(vl_i4_gt(split_bin, bin))) >> axis) & 1u;
            idx[l] = p;
            tmp[r] = p;
            l += left;
            r += left ^ 1u;
            prim[j] = p;
            vl_i4_store(entry[j], bin_entries(cmin[left], scale[left], last[left], first[left], c));
        }
        for (uint32_t j = 0; j < m; j++)
            bin_add(j & 1 ? spare : bins, entry[j], vl_f8_load(recs + 8 * (size_t)prim[j]));
    }
    if (spare != bins)
        for (uint32_t side = 0; side < 2; side++)
            bins_merge(bins + side * stride, spare + side * stride, kid[side]->g.nb);
    memcpy(idx + l, tmp, sizeof(uint32_t) * r);
    return l;
}

/* A split of two primitives, one leaf each (the lower centroid left, along the axis that
 * separates them most), when the SAH prefers it to one leaf: the cost the bins would find, without
 * them (half the world scene's ranges hold two primitives: docs/measurements/tree.md). Returns the
 * right side's start, or t->begin. */
static uint32_t split_pair(vl_build* b, const vl_range* t, vl_range* left, vl_range* right, int* axis) {
    uint32_t* idx = b->idx + t->begin;
    vl_f8 rec[2] = {vl_f8_load(b->rec + 8 * (size_t)idx[0]), vl_f8_load(b->rec + 8 * (size_t)idx[1])};
    float d[4];
    vl_f4_storeu(d, vl_f4_sub(centroid(rec[1]), centroid(rec[0])));
    int a = 0;
    for (int k = 1; k < 3; k++)
        if (fabsf(d[k]) > fabsf(d[a])) a = k;
    if (d[a] == 0.0f) return t->begin;
    vl_f8 scale = vl_f8_set1(area_scale(t->box));
    float area = half_area(t->box, scale);
    float split = half_area(rec[0], scale) + half_area(rec[1], scale) + b->node_cost * area;
    if (b->max_leaf > 1 && !(split < 2.0f * area)) return t->begin;
    uint32_t first = d[a] < 0.0f; /* the primitive that goes left */
    if (first) {
        uint32_t p = idx[0];
        idx[0] = idx[1], idx[1] = p;
    }
    left->box = rec[first], right->box = rec[first ^ 1u];
    left->begin = t->begin, left->end = right->begin = t->begin + 1, right->end = t->end;
    left->binned = right->binned = 1; /* leaves */
    *axis = a;
    return t->begin + 1;
}

/* ---- the top levels' passes in pieces (the parallel build) ---------------------------------- */

/* A range's pass in pieces: each piece a range of its own with four bin sets (two sides, two
 * spares); bounds and bins are mins and integer counts, so merging the pieces in any order gives
 * the bits of the whole range's pass, and per-piece stable partitions moved into place give the
 * whole range's stable partition. */
typedef struct piece_pass {
    vl_build* b;
    const vl_split* s;
    vl_range* const* kid;
    uint32_t stride, count;
    vl_f8* bins;
    vl_range part[VL_BVH_PIECES];
    uint32_t mid[VL_BVH_PIECES]; /* partition: each piece's right side start */
    uint32_t left_to[VL_BVH_PIECES], right_to[VL_BVH_PIECES]; /* where its sides go */
} piece_pass;

static int pieced(const vl_build* b, const vl_range* t) { return b->ctx && t->end - t->begin >= VL_BVH_PIECED_FROM; }

static vl_f8* piece_bins(const piece_pass* p, uint32_t k) { return p->bins + (size_t)k * 4 * p->stride; }

/* Cuts t into pieces (part[k]: t with its own begin and end). */
static void pieces_cut(piece_pass* p, vl_build* b, const vl_range* t) {
    const uint32_t n = t->end - t->begin;
    uint32_t piece = (n + VL_BVH_PIECES - 1) / VL_BVH_PIECES;
    if (piece < VL_BVH_PIECE_MIN) piece = VL_BVH_PIECE_MIN;
    p->b = b;
    p->stride = 3 * b->bins;
    p->bins = b->piece_bins;
    p->count = (n + piece - 1) / piece;
    for (uint32_t k = 0; k < p->count; k++) {
        p->part[k] = *t;
        p->part[k].begin = t->begin + k * piece;
        p->part[k].end = n - k * piece < piece ? t->end : p->part[k].begin + piece;
    }
}

static void pieces_bound(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    piece_pass* p = arg;
    for (uint32_t k = start; k < end; k++) range_bounds(p->b, &p->part[k]);
}

static void pieces_bin(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    piece_pass* p = arg;
    for (uint32_t k = start; k < end; k++) bin_range(p->b, &p->part[k], piece_bins(p, k), piece_bins(p, k) + p->stride);
}

static void pieces_partition(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    piece_pass* p = arg;
    for (uint32_t k = start; k < end; k++)
        p->mid[k] = partition(p->b, &p->part[k], p->s, p->kid, piece_bins(p, k), piece_bins(p, k) + 2 * p->stride,
                              p->stride);
}

/* Each piece's two sides from idx into their places in tmp. */
static void pieces_move(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    piece_pass* p = arg;
    uint32_t *idx = p->b->idx, *tmp = p->b->tmp;
    for (uint32_t k = start; k < end; k++) {
        const vl_range* t = &p->part[k];
        memcpy(tmp + p->left_to[k], idx + t->begin, sizeof(uint32_t) * (p->mid[k] - t->begin));
        memcpy(tmp + p->right_to[k], idx + p->mid[k], sizeof(uint32_t) * (t->end - p->mid[k]));
    }
}

static void pieces_copy_back(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    piece_pass* p = arg;
    for (uint32_t k = start; k < end; k++) {
        const vl_range* t = &p->part[k];
        memcpy(p->b->idx + t->begin, p->b->tmp + t->begin, sizeof(uint32_t) * (t->end - t->begin));
    }
}

/* range_bounds in pieces. */
static void bound_pieces(vl_build* b, vl_range* t) {
    piece_pass p;
    pieces_cut(&p, b, t);
    vl_tasks_run(b->ctx, pieces_bound, p.count, 1, &p);
    t->box = p.part[0].box, t->cmin = p.part[0].cmin, t->cmax = p.part[0].cmax;
    for (uint32_t k = 1; k < p.count; k++) {
        t->box = vl_f8_min(t->box, p.part[k].box);
        t->cmin = vl_f4_min(t->cmin, p.part[k].cmin);
        t->cmax = vl_f4_max(t->cmax, p.part[k].cmax);
    }
    t->binned = 0;
}

/* bin_range in pieces. */
static void bin_pieces(vl_build* b, const vl_range* t, vl_f8* bins) {
    piece_pass p;
    pieces_cut(&p, b, t);
    vl_tasks_run(b->ctx, pieces_bin, p.count, 1, &p);
    bins_clear(bins, t->g.nb);
    for (uint32_t k = 0; k < p.count; k++) bins_merge(bins, piece_bins(&p, k), t->g.nb);
}

/* partition in pieces: each piece partitioned in place, then both sides of every piece moved
 * through tmp to their places. */
static void partition_pieces(vl_build* b, const vl_range* t, const vl_split* s, vl_range* const kid[2], vl_f8* bins,
                             uint32_t stride) {
    piece_pass p;
    pieces_cut(&p, b, t);
    p.s = s, p.kid = kid;
    vl_tasks_run(b->ctx, pieces_partition, p.count, 1, &p);
    uint32_t left = t->begin, right = t->begin + s->left_count;
    for (uint32_t k = 0; k < p.count; k++) {
        p.left_to[k] = left, p.right_to[k] = right;
        left += p.mid[k] - p.part[k].begin;
        right += p.part[k].end - p.mid[k];
    }
    vl_tasks_run(b->ctx, pieces_move, p.count, 1, &p);
    vl_tasks_run(b->ctx, pieces_copy_back, p.count, 1, &p);
    for (uint32_t side = 0; side < 2; side++) {
        bins_clear(bins + side * stride, kid[side]->g.nb);
        for (uint32_t k = 0; k < p.count; k++)
            bins_merge(bins + side * stride, piece_bins(&p, k) + side * stride, kid[side]->g.nb);
    }
}

/* Where t splits (t->begin: a leaf); fills the children's bounds and, when t's pass binned them,
 * their bin sets (slot, slot + 1: right, left). */
static uint32_t split_range(vl_build* b, vl_range* t, const vl_bin_sets* sets, uint32_t slot, vl_range* left,
                            vl_range* right, int* axis) {
    uint32_t count = t->end - t->begin;
    *axis = 0;
    if (count > 1 && t->depth < VL_BVH_FORCE_MEDIAN_DEPTH) {
        vl_f8* bins = sets->bins + (size_t)slot * sets->stride;
        vl_f8* spare = sets->bins + (size_t)sets->slots * sets->stride;
        if (count == 2) {
            uint32_t mid = split_pair(b, t, left, right, axis);
            if (mid != t->begin || b->max_leaf > 1) return mid;
        } else if (!t->binned) {
            t->g = binning_of(b, t);
            if (pieced(b, t))
                bin_pieces(b, t, bins);
            else
                bin_range(b, t, bins, spare);
        }
        if (count > 2 && t->g.axes) {
            vl_f8 scale = vl_f8_set1(area_scale(t->box));
            vl_split s = find_split(&t->g, bins, scale);
            float area = half_area(t->box, scale);
            if (s.axis >= 0 && (count > b->max_leaf || s.cost + b->node_cost * area < (float)count * area)) {
                uint32_t mid = t->begin + s.left_count;
                vl_range* const kid[2] = {right, left};
                child_of(b, t, s.right, mid, t->end, right);
                child_of(b, t, s.left, t->begin, mid, left);
                if (pieced(b, t))
                    partition_pieces(b, t, &s, kid, bins, sets->stride);
                else
                    partition(b, t, &s, kid, bins, spare, sets->stride);
                *axis = s.axis;
                return mid;
            }
        }
    }
    if (count <= b->max_leaf) return t->begin;
    uint32_t mid = t->begin + count / 2; /* past the median depth, or no split found */
    left->begin = t->begin, left->end = mid;
    right->begin = mid, right->end = t->end;
    vl_range* const half[2] = {left, right};
    for (int k = 0; k < 2; k++) {
        if (pieced(b, half[k]))
            bound_pieces(b, half[k]);
        else
            range_bounds(b, half[k]);
    }
    return mid;
}

/* Bin sets for a stack of VL_BVH_MAX_DEPTH + 4 ranges (fewer for n primitives), and the spare pair. */
static vl_status sets_alloc(vl_bin_sets* sets, const vl_build* b, uint32_t n) {
    sets->slots = n < VL_BVH_MAX_DEPTH + 4 ? n + 1 : VL_BVH_MAX_DEPTH + 4;
    sets->stride = 3 * b->bins;
    sets->bins = vl_mem_alloc(sizeof(vl_f8) * sets->stride * (sets->slots + 2));
    return sets->bins ? VL_OK : VL_ERR_OUT_OF_MEMORY;
}

static void sets_free(vl_bin_sets* sets) {
    vl_mem_free(sets->bins, sizeof(vl_f8) * sets->stride * (sets->slots + 2));
}

/* Writes a range's box into its node. */
static void node_box(vl_bvh_node* node, const vl_range* t) {
    float lo[4], neg_hi[4];
    vl_f4_storeu(lo, vl_f8_low(t->box));
    vl_f4_storeu(neg_hi, vl_f8_high(t->box));
    for (int a = 0; a < 3; a++) node->min[a] = lo[a], node->max[a] = -neg_hi[a];
}

/* The depth-first loop of the build from the ranges on stack[0, top) (their bin sets, when binned,
 * in the same slots of sets): the last range first, the left child of a split before the right
 * one, children numbered from b->node_count in pairs as their parent splits. stop (may be NULL)
 * is asked about each range of more than one primitive as it comes off the stack: when it says
 * so, the range is left to the caller (its node gets nothing) and the loop goes on. */
typedef int vl_stop_fn(void* user, const vl_range* t, const vl_f8* bins);

static void build_loop(vl_build* b, vl_range* stack, uint32_t top, const vl_bin_sets* sets, vl_stop_fn* stop,
                       void* user) {
    while (top) {
        const vl_range* next = &stack[--top];
        if (next->end - next->begin > 1 && stop && stop(user, next, sets->bins + (size_t)top * sets->stride))
            continue;
        vl_bvh_node* node = &b->nodes[next->node];
        node_box(node, next);
        if (next->depth > b->depth) b->depth = next->depth;
        if (next->end - next->begin == 1) { /* half the nodes: no copy of the range */
            node->index = next->begin;
            node->meta = 1u << 2;
            continue;
        }
        vl_range t = *next;

        /* the children go straight to their stack slots: right where t was, left above it */
        vl_range *right = &stack[top], *left = &stack[top + 1];
        int axis;
        uint32_t mid = split_range(b, &t, sets, top, left, right, &axis);
        if (mid == t.begin) { /* leaf */
            node->index = t.begin;
            node->meta = (t.end - t.begin) << 2;
            continue;
        }
        uint32_t first = b->node_count;
        b->node_count += 2;
        node->index = first;
        node->meta = (uint32_t)axis;
        left->node = first, left->depth = t.depth + 1;
        right->node = first + 1, right->depth = t.depth + 1;
        top += 2;
    }
}

vl_status vl_bvh_build_sah(vl_build* b, uint32_t n) {
    /* a range holds at least one primitive and the stack at most one pending sibling per level */
    vl_range stack[VL_BVH_MAX_DEPTH + 4];
    vl_bin_sets sets;
    if (sets_alloc(&sets, b, n) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
    b->node_count = 1;
    b->depth = 0;
    vl_range root = {.node = 0, .begin = 0, .end = n, .depth = 1};
    range_bounds(b, &root);
    stack[0] = root;
    build_loop(b, stack, 1, &sets, NULL, NULL);
    sets_free(&sets);
    return VL_OK;
}

/* ---- the parallel build -------------------------------------------------------------------- */

/* A range left to a task: the range as it came off the stack, its bin sets when binned, and the
 * subtree built from it (nodes numbered from 0, its root, in b->nodes + 2 * begin). */
typedef struct vl_subtree {
    vl_range range;
    vl_f8* bins; /* 3 * bins bin sets, or NULL when the range is not binned */
    uint32_t node_count, depth;
    vl_status status;
} vl_subtree;

typedef struct vl_split_plan {
    vl_subtree* subs;
    uint32_t count, capacity;
    uint32_t cutoff; /* ranges of at most this many primitives go to tasks */
    uint32_t stride;
    vl_f8* bins;     /* capacity bin sets */
    vl_build* b;
    const vl_build* top; /* the top levels' build: its node array holds capacity nodes */
    atomic_uchar* done;
} vl_split_plan;

static int take_range(void* user, const vl_range* t, const vl_f8* bins) {
    vl_split_plan* p = user;
    /* every top node may be a subtree's root, so that subs never run out before the top nodes do;
     * once those are nearly all used every range goes to a task */
    if (t->end - t->begin > p->cutoff && p->top->node_count + 2 <= p->capacity) return 0;
    vl_subtree* s = &p->subs[p->count];
    s->range = *t;
    s->bins = NULL;
    if (t->binned) {
        s->bins = p->bins + (size_t)p->count * p->stride;
        memcpy(s->bins, bins, sizeof(vl_f8) * p->stride);
    }
    s->node_count = 0, s->depth = 0;
    s->status = VL_OK;
    p->count++;
    return 1;
}

/* Builds subtrees [start, end) of the plan. */
static void build_subtrees(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    vl_split_plan* p = arg;
    for (uint32_t k = start; k < end; k++) {
        if (atomic_exchange_explicit(&p->done[k], 1, memory_order_relaxed)) continue; /* ran already */
        vl_subtree* s = &p->subs[k];
        vl_build sub = *p->b;
        sub.nodes = p->b->nodes + 2 * (size_t)s->range.begin;
        sub.node_count = 1;
        sub.depth = 0;
        vl_bin_sets sets;
        if (sets_alloc(&sets, &sub, s->range.end - s->range.begin) != VL_OK) {
            s->status = VL_ERR_OUT_OF_MEMORY;
            continue;
        }
        vl_range stack[VL_BVH_MAX_DEPTH + 4];
        stack[0] = s->range;
        stack[0].node = 0;
        if (s->bins) memcpy(sets.bins, s->bins, sizeof(vl_f8) * sets.stride);
        build_loop(&sub, stack, 1, &sets, NULL, NULL);
        sets_free(&sets);
        s->node_count = sub.node_count, s->depth = sub.depth;
    }
}

/* Copies the top nodes and the subtrees into b->nodes in the order of the serial build: a replay
 * of its depth-first loop that numbers each subtree's nodes from where that loop would have. */
static vl_status assemble(vl_build* b, const vl_bvh_node* top_nodes, const int32_t* sub_of, const vl_split_plan* p,
                          uint32_t total) {
    vl_bvh_node* out = vl_mem_alloc(sizeof(vl_bvh_node) * (size_t)total);
    if (!out) return VL_ERR_OUT_OF_MEMORY;
    uint32_t stack[2 * (VL_BVH_MAX_DEPTH + 4)][2]; /* (top node, final index) */
    uint32_t top = 0, counter = 1;
    stack[top][0] = 0, stack[top][1] = 0, top++;
    while (top) {
        top--;
        const uint32_t at = stack[top][0], to = stack[top][1];
        if (sub_of[at] >= 0) {
            const vl_subtree* s = &p->subs[sub_of[at]];
            const vl_bvh_node* local = b->nodes + 2 * (size_t)s->range.begin;
            const uint32_t base = counter - 1; /* local node k > 0 goes to base + k */
            for (uint32_t k = 0; k < s->node_count; k++) {
                vl_bvh_node node = local[k];
                if (vl_bvh_node_count(&node) == 0) node.index += base;
                out[k ? base + k : to] = node;
            }
            counter += s->node_count - 1;
            continue;
        }
        vl_bvh_node node = top_nodes[at];
        if (vl_bvh_node_count(&node) == 0) {
            const uint32_t first = counter;
            counter += 2;
            stack[top][0] = node.index + 1, stack[top][1] = first + 1, top++; /* right, popped second */
            stack[top][0] = node.index, stack[top][1] = first, top++;
            node.index = first;
        }
        out[to] = node;
    }
    memcpy(b->nodes, out, sizeof(vl_bvh_node) * (size_t)total);
    vl_mem_free(out, sizeof(vl_bvh_node) * (size_t)total);
    return VL_OK;
}

vl_status vl_bvh_build_sah_parallel(vl_build* b, uint32_t n, const vl_context* ctx) {
    const uint32_t workers = ctx->tasks.worker_count;
    uint32_t cutoff = n / (4 * workers);
    if (cutoff < VL_BVH_PARALLEL_MIN_PRIMS) cutoff = VL_BVH_PARALLEL_MIN_PRIMS;
    if (!ctx->tasks.enqueue || n <= cutoff) return vl_bvh_build_sah(b, n);
    /* the top levels as the serial build makes them, into a small node array of their own; each
     * range of at most cutoff primitives is left to a task */
    vl_split_plan p;
    memset(&p, 0, sizeof p);
    p.b = b;
    p.cutoff = cutoff;
    p.capacity = 16 * workers + 64; /* top nodes; unbalanced splits may need many */
    p.stride = 3 * b->bins;
    const uint32_t top_cap = p.capacity;
    vl_bin_sets sets;
    if (sets_alloc(&sets, b, n) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
    p.subs = vl_mem_alloc(sizeof(vl_subtree) * p.capacity);
    p.bins = vl_mem_alloc(sizeof(vl_f8) * p.stride * p.capacity);
    p.done = vl_mem_calloc(sizeof(atomic_uchar) * p.capacity);
    vl_bvh_node* top_nodes = vl_mem_alloc(sizeof(vl_bvh_node) * top_cap);
    int32_t* sub_of = vl_mem_alloc(sizeof(int32_t) * top_cap);
    const size_t piece_bytes = sizeof(vl_f8) * 4 * p.stride * VL_BVH_PIECES;
    vl_f8* pieces = vl_mem_alloc(piece_bytes);
    vl_status st = VL_ERR_OUT_OF_MEMORY;
    if (p.subs && p.bins && p.done && top_nodes && sub_of && pieces) {
        vl_build top = *b;
        top.nodes = top_nodes;
        top.node_count = 1;
        top.depth = 0;
        top.ctx = ctx;
        top.piece_bins = pieces;
        p.top = &top;
        vl_range stack[VL_BVH_MAX_DEPTH + 4];
        vl_range root = {.node = 0, .begin = 0, .end = n, .depth = 1};
        bound_pieces(&top, &root);
        stack[0] = root;
        build_loop(&top, stack, 1, &sets, take_range, &p);
        /* which top nodes are subtree roots (their node got nothing from the loop) */
        for (uint32_t i = 0; i < top.node_count; i++) sub_of[i] = -1;
        for (uint32_t k = 0; k < p.count; k++) sub_of[p.subs[k].range.node] = (int32_t)k;
        for (uint32_t k = 0; k < p.count; k++) atomic_init(&p.done[k], 0);
        vl_tasks_run(ctx, build_subtrees, p.count, 1, &p);
        st = VL_OK;
        uint32_t total = top.node_count, depth = top.depth;
        for (uint32_t k = 0; k < p.count; k++) {
            if (p.subs[k].status != VL_OK) st = p.subs[k].status;
            total += p.subs[k].node_count - 1;
            if (p.subs[k].depth > depth) depth = p.subs[k].depth;
        }
        if (st == VL_OK) st = assemble(b, top_nodes, sub_of, &p, total);
        b->node_count = total;
        b->depth = depth;
    }
    sets_free(&sets);
    vl_mem_free(p.subs, sizeof(vl_subtree) * p.capacity);
    vl_mem_free(p.bins, sizeof(vl_f8) * p.stride * p.capacity);
    vl_mem_free(p.done, sizeof(atomic_uchar) * p.capacity);
    vl_mem_free(top_nodes, sizeof(vl_bvh_node) * top_cap);
    vl_mem_free(sub_of, sizeof(int32_t) * top_cap);
    vl_mem_free(pieces, piece_bytes);
    return st;
}
