/* Banded box pruning: the grid choice, the listing of boxes in bands, the band-by-band prune. */
#include "box_prune/box_prune_band.h"

#include <math.h>
#include <string.h>

#define VL_BAND_MAX 1024u   /* more bands only add listing cost */
#define VL_BAND_MIN_BOXES 32 /* boxes per band, at least, on average */
#define VL_BAND_SAMPLES 64u
/* Sweep candidates per box below which listing boxes in bands costs about what it saves: the sets
 * above it (Terdiman's 10k) gain by bands, those below (its bipartite halves) lose
 * (docs/measurements/broadphase.md). */
#define VL_BAND_MIN_CANDIDATES 192.0
/* The cost of listing a box in one more band, in candidate tests (its value fits Terdiman's sets:
 * docs/measurements/broadphase.md). */
#define VL_BAND_ENTRY_COST 64.0

/* Centre sums and extents of the boxes on the two other axes; a box whose extent is not finite on
 * an axis says nothing about it. */
typedef struct band_stats {
    double n[2], sum[2], sum2[2], extent[2];
} band_stats;

static void band_stats_add(band_stats* st, const vl_prune_set* s) {
    const float* lo[2] = {s->miny, s->minz};
    const float* hi[2] = {s->maxy, s->maxz};
    for (int side = 0; side < 2; side++)
        for (uint32_t k = 0; k < s->n; k++) {
            double l = lo[side][k], h = hi[side][k];
            if (!isfinite(h - l)) continue;
            double c = 0.5 * (l + h);
            st->n[side] += 1;
            st->sum[side] += c;
            st->sum2[side] += c * c;
            st->extent[side] += h - l;
        }
}

/* The first index in sorted v[0, n) whose value is > x (or >= x when `or_equal`). */
static uint32_t first_above(const float* v, uint32_t n, float x, int or_equal) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] > x || (or_equal && v[mid] == x))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Estimated sweep candidates of the boxes of q among those of c: the c boxes starting within each
 * q box's sweep extent, for a sample of q boxes. */
static double sample_candidates(const vl_prune_set* q, const vl_prune_set* c) {
    if (!q->n || !c->n) return 0;
    uint32_t samples = q->n < VL_BAND_SAMPLES ? q->n : VL_BAND_SAMPLES;
    double sum = 0;
    for (uint32_t t = 0; t < samples; t++) {
        uint32_t i = (uint32_t)((uint64_t)t * q->n / samples);
        sum += first_above(c->minx, c->n, q->maxx[i], 0) - first_above(c->minx, c->n, q->minx[i], 1);
    }
    return sum / samples * q->n;
}

/* The band axis, its centre mean and spread, and the boxes' mean extent on it. */
typedef struct band_axis {
    int side;
    double mean, span, extent;
} band_axis;

static band_axis band_axis_of(const vl_prune_set* a, const vl_prune_set* b) {
    band_stats st;
    memset(&st, 0, sizeof st);
    band_stats_add(&st, a);
    if (b) band_stats_add(&st, b);
    double mean[2], var[2];
    for (int side = 0; side < 2; side++) {
        double n = st.n[side] > 0 ? st.n[side] : 1;
        mean[side] = st.sum[side] / n;
        var[side] = st.sum2[side] / n - mean[side] * mean[side];
    }
    band_axis ax;
    ax.side = var[1] > var[0];
    ax.mean = mean[ax.side];
    ax.span = sqrt(12.0 * var[ax.side]); /* the range of uniformly spread centres */
    ax.extent = st.n[ax.side] > 0 ? st.extent[ax.side] / st.n[ax.side] : 0;
    return ax;
}

/* Bounded away from 0 and infinity, the band function is finite and monotone. */
static int span_ok(double span) { return span > 1e-30 && span < 1e300; }

static vl_band_grid grid_make(const band_axis* ax, uint32_t count) {
    double span = span_ok(ax->span) ? ax->span : 1;
    vl_band_grid g = {ax->side, count, ax->mean - 0.5 * span, count / span};
    return g;
}

/* count clamped to what pays; 1 below 2 */
static uint32_t band_count_clamp(double count, double boxes) {
    if (count > VL_BAND_MAX) count = VL_BAND_MAX;
    if (count > boxes / VL_BAND_MIN_BOXES) count = boxes / VL_BAND_MIN_BOXES;
    return count >= 2 ? (uint32_t)count : 1;
}

vl_band_grid vl_band_grid_choose(const vl_prune_set* a, const vl_prune_set* b, uint32_t force) {
    band_axis ax = band_axis_of(a, b);
    if (force) return grid_make(&ax, force);
    double boxes = (double)a->n + (b ? b->n : 0);
    double candidates = b ? sample_candidates(a, b) + sample_candidates(b, a) : sample_candidates(a, a);
    if (!span_ok(ax.span) || !(candidates >= VL_BAND_MIN_CANDIDATES * boxes)) return grid_make(&ax, 1);
    /* candidates ~ candidates * (2 extent + w) / span, listings ~ boxes * (1 + extent / w): their
     * weighted sum is least at the band width w below (infinite count for points: clamped) */
    double w = sqrt(ax.extent * ax.span * VL_BAND_ENTRY_COST * boxes / candidates);
    return grid_make(&ax, band_count_clamp(ax.span / w, boxes));
}

static inline uint32_t band_of(const vl_band_grid* g, float v) {
    double x = ((double)v - g->origin) * g->scale, top = g->count - 1;
    x = x > 0 ? x : 0; /* -inf: the first band */
    x = x < top ? x : top;
    return (uint32_t)x;
}

void vl_prune_bands_free(vl_prune_bands* bands) {
    vl_prune_set_free(&bands->store);
    VL_ARRAY_FREE(bands->seg, bands->seg_cap);
}

vl_status vl_prune_bands_build(vl_prune_bands* bands, const vl_prune_set* set, vl_band_grid grid) {
    uint32_t count = grid.count, n = set->n;
    vl_status s = VL_ARRAY_RESERVE(bands->seg, bands->seg_cap, 0, 4ull * count);
    if (s != VL_OK) return s;
    const float* lo = grid.side ? set->minz : set->miny;
    const float* hi = grid.side ? set->maxz : set->maxy;
    uint32_t *start = bands->seg, *len = bands->seg + 2 * count;
    /* counts: own ones per first band; carried ones as differences (+1 after the first band, -1
     * after the last), summed up below (modulo 2^32, exact) */
    memset(len, 0, 2ull * count * sizeof *len);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t l = band_of(&grid, lo[k]), h = band_of(&grid, hi[k]);
        len[2 * l]++;
        if (l + 1 < count) len[2 * l + 3]++;
        if (h + 1 < count) len[2 * h + 3]--;
    }
    uint32_t carried = 0;
    uint64_t total = 0;
    for (uint32_t b = 0; b < count; b++) {
        carried += len[2 * b + 1];
        len[2 * b + 1] = carried;
    }
    for (uint32_t k = 0; k < 2 * count; k++) {
        start[k] = (uint32_t)total;
        total += (uint64_t)len[k] + 16u; /* the segment and its sentinels */
    }
    if (total - 16u * 2ull * count > 4ull * n + 64u || total > 0x7FFFFFF0u) return VL_ERR_TOO_LARGE;
    s = vl_prune_set_reserve(&bands->store, (uint32_t)total);
    if (s != VL_OK) return s;
    memset(len, 0, 2ull * count * sizeof *len);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t l = band_of(&grid, lo[k]), h = band_of(&grid, hi[k]);
        vl_prune_set_copy(&bands->store, start[2 * l] + len[2 * l]++, set, k);
        for (uint32_t b = l + 1; b <= h; b++)
            vl_prune_set_copy(&bands->store, start[2 * b + 1] + len[2 * b + 1]++, set, k);
    }
    for (uint32_t k = 0; k < 2 * count; k++) vl_prune_set_seal(&bands->store, start[k] + len[k]);
    bands->store.n = (uint32_t)total;
    bands->store.axis = set->axis;
    bands->grid = grid;
    return VL_OK;
}

static vl_prune_set band_segment(const vl_prune_bands* bands, uint32_t k) {
    return vl_prune_set_view(&bands->store, bands->seg[k], bands->seg[2 * bands->grid.count + k]);
}

vl_status vl_prune_bands_complete(const vl_prune_bands* bands, vl_pair_buffer* out) {
    uint32_t start = out->count;
    vl_status s = VL_OK;
    for (uint32_t b = 0; b < bands->grid.count && s == VL_OK; b++) {
        vl_prune_set own = band_segment(bands, 2 * b), carried = band_segment(bands, 2 * b + 1);
        s = vl_prune_complete(&own, VL_PRUNE_DENSE, out);
        if (s == VL_OK && own.n && carried.n)
            s = vl_prune_bipartite(&own, &carried, VL_PRUNE_LOW_HIGH | VL_PRUNE_DENSE, out);
    }
    if (s != VL_OK) out->count = start;
    return s;
}

vl_status vl_prune_bands_bipartite(const vl_prune_bands* a, const vl_prune_bands* b, unsigned flags,
                                   vl_pair_buffer* out) {
    uint32_t start = out->count;
    vl_status s = VL_OK;
    for (uint32_t k = 0; k < a->grid.count && s == VL_OK; k++) {
        vl_prune_set a_own = band_segment(a, 2 * k), a_carried = band_segment(a, 2 * k + 1);
        vl_prune_set b_own = band_segment(b, 2 * k), b_carried = band_segment(b, 2 * k + 1);
        s = vl_prune_bipartite(&a_own, &b_own, flags | VL_PRUNE_DENSE, out);
        if (s == VL_OK) s = vl_prune_bipartite(&a_own, &b_carried, flags | VL_PRUNE_DENSE, out);
        if (s == VL_OK) s = vl_prune_bipartite(&a_carried, &b_own, flags | VL_PRUNE_DENSE, out);
    }
    if (s != VL_OK) out->count = start;
    return s;
}

vl_status vl_prune_complete_auto(const vl_prune_set* set, vl_prune_bands* bands, vl_pair_buffer* out) {
    vl_band_grid grid = vl_band_grid_choose(set, NULL, 0);
    vl_status s = grid.count > 1 ? vl_prune_bands_build(bands, set, grid) : VL_ERR_TOO_LARGE;
    if (s == VL_ERR_TOO_LARGE) return vl_prune_complete(set, 0, out);
    return s == VL_OK ? vl_prune_bands_complete(bands, out) : s;
}

vl_status vl_prune_bipartite_auto(const vl_prune_set* a, const vl_prune_set* b, vl_prune_bands* bands_a,
                                  vl_prune_bands* bands_b, unsigned flags, vl_pair_buffer* out) {
    vl_band_grid grid = vl_band_grid_choose(a, b, 0);
    vl_status s = grid.count > 1 ? vl_prune_bands_build(bands_a, a, grid) : VL_ERR_TOO_LARGE;
    if (s == VL_OK) s = vl_prune_bands_build(bands_b, b, grid);
    if (s == VL_ERR_TOO_LARGE) return vl_prune_bipartite(a, b, flags, out);
    return s == VL_OK ? vl_prune_bands_bipartite(bands_a, bands_b, flags, out) : s;
}

