/* Banded box pruning: a second axis (the band axis) cut into bands of equal width. Each box is
 * listed in every band its extent touches, kept in the sweep order of one global sort, so each band
 * is a small sorted prune set. A pair is found only in the band where its overlap on the band axis
 * starts, max(first band of a, first band of b): there both boxes are listed, and it is one band.
 * So each band holds two sets, the boxes that start in it ("own") and those that come from an
 * earlier band ("carried"); a band's pairs are own-own and own-carried, never carried-carried.
 * A box then meets only the candidates near it on two axes instead of one. */
#ifndef VL_BOX_PRUNE_BOX_PRUNE_BAND_H
#define VL_BOX_PRUNE_BOX_PRUNE_BAND_H

#include "box_prune/box_prune.h"

/* The band of value v: clamp(floor((v - origin) * scale), 0, count - 1), monotone in v (infinite
 * values land in the first or last band). count 1: no banding. */
typedef struct vl_band_grid {
    int side; /* the band axis: 0 = the sets' miny/maxy arrays, 1 = their minz/maxz */
    uint32_t count;
    double origin, scale;
} vl_band_grid;

/* The bands of one prune set: segment 2b holds the boxes that start in band b, segment 2b + 1 the
 * ones carried into it, each segment followed by 16 sentinels in `store`. */
typedef struct vl_prune_bands {
    vl_prune_set store;
    uint32_t* seg; /* start of segment k at seg[k], its count at seg[2 * count + k] */
    uint32_t seg_cap;
    vl_band_grid grid;
} vl_prune_bands;

/* A grid for pruning a alone (b NULL) or a against b (sets sorted on one axis): the band axis is the
 * other axis of larger centre variance; the band count trades the candidates saved against the
 * cost of listing boxes in several bands, estimated from the boxes' mean extent and sampled sweep
 * candidates; 1 when banding would not pay. `force` > 0 sets the count (tests). */
vl_band_grid vl_band_grid_choose(const vl_prune_set* a, const vl_prune_set* b, uint32_t force);

/* Lists the boxes of `set` in the bands of `grid`. VL_ERR_TOO_LARGE (nothing done) when the boxes
 * would take more than 4 entries each on average: then prune unbanded. */
vl_status vl_prune_bands_build(vl_prune_bands* bands, const vl_prune_set* set, vl_band_grid grid);
void vl_prune_bands_free(vl_prune_bands* bands);

/* As vl_prune_complete and vl_prune_bipartite, band by band (both built on one grid). On failure
 * out->count is restored. */
vl_status vl_prune_bands_complete(const vl_prune_bands* bands, vl_pair_buffer* out);
vl_status vl_prune_bands_bipartite(const vl_prune_bands* a, const vl_prune_bands* b, unsigned flags,
                                   vl_pair_buffer* out);

/* vl_prune_complete and vl_prune_bipartite, through bands (kept by the caller, so a warm call
 * allocates nothing) when the chosen grid has more than one. */
vl_status vl_prune_complete_auto(const vl_prune_set* set, vl_prune_bands* bands, vl_pair_buffer* out);
vl_status vl_prune_bipartite_auto(const vl_prune_set* a, const vl_prune_set* b, vl_prune_bands* bands_a,
                                  vl_prune_bands* bands_b, unsigned flags, vl_pair_buffer* out);

#endif
