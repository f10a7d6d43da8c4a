/* One-shot box pruning over a work: the bound on its storage, its layout in a caller's block, the
 * sort and the two prunes. */
#include "box_prune/box_prune_work.h"
#include "core/valid.h"

#include <string.h>

#include "box_prune/box_prune_axis.h"

#define VL_WORK_PAD 16u      /* sentinels after each set array (see box_prune.h) */
#define VL_WORK_BAND_MAX 1024u /* vl_band_grid_choose: at most 1024 bands, */
#define VL_WORK_BAND_BOXES 32u /* and at least 32 boxes per band on average */

/* The most bands a grid over `boxes` boxes may have. */
static uint64_t band_max(uint64_t boxes) {
    uint64_t b = boxes / VL_WORK_BAND_BOXES;
    return b < VL_WORK_BAND_MAX ? b : VL_WORK_BAND_MAX;
}

/* The most entries the band listing of n boxes may hold: vl_prune_bands_build refuses more than
 * 4 per box (+ 64) or 0x7FFFFFF0 in all, and each of the 2 segments of a band has 16 sentinels. */
static uint64_t band_store_max(uint64_t n, uint64_t bands) {
    uint64_t max = 4 * n + 64 + 32 * bands;
    return max < 0x7FFFFFF0u ? max : 0x7FFFFFF0u;
}

/* Bytes of one set array of capacity cap (with its sentinels), a whole number of cache lines. */
static uint64_t set_array_bytes(uint64_t cap) { return ((cap + VL_WORK_PAD) * 4 + 63) & ~(uint64_t)63; }
static uint64_t set_bytes(uint64_t cap) { return 7 * set_array_bytes(cap); }
static uint64_t lines(uint64_t bytes) { return (bytes + 63) & ~(uint64_t)63; }

/* The parts of a work, by capacity. Laid out as the sets, the band segment tables, then one region
 * shared by the sort keys and the band listings: the keys are dead once the sets are sorted, and
 * the listings are written only after that. */
typedef struct work_plan {
    uint64_t set_cap[2], keys_cap, seg_cap[2], store_cap[2];
} work_plan;

static work_plan plan_of(uint32_t na, uint32_t nb, int bipartite) {
    work_plan p;
    memset(&p, 0, sizeof p);
    uint64_t bands = band_max((uint64_t)na + (bipartite ? nb : 0));
    p.set_cap[0] = na;
    p.set_cap[1] = bipartite ? nb : 0;
    p.keys_cap = na > nb || !bipartite ? na : nb;
    for (int k = 0; bands >= 2 && k < 1 + bipartite; k++) {
        p.seg_cap[k] = 4 * bands;
        p.store_cap[k] = band_store_max(k ? nb : na, bands);
    }
    return p;
}

static uint64_t plan_bytes(const work_plan* p) {
    uint64_t bytes = 0, keys = lines(p->keys_cap * 8) * 2, stores = 0;
    for (int k = 0; k < 2; k++) {
        bytes += lines(p->seg_cap[k] * 4);
        if (p->set_cap[k]) bytes += set_bytes(p->set_cap[k]);
        if (p->store_cap[k]) stores += set_bytes(p->store_cap[k]);
    }
    return bytes + (keys > stores ? keys : stores);
}

size_t vl_prune_work_bytes(uint32_t na, uint32_t nb, int bipartite) {
    work_plan p = plan_of(na, nb, bipartite);
    uint64_t bytes = plan_bytes(&p);
    return bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

/* A set of capacity cap on the block at *at, which moves past it. */
static void carve_set(vl_prune_set* set, char** at, uint64_t cap) {
    float* arrays[7];
    for (int k = 0; k < 7; k++) {
        arrays[k] = (float*)(void*)*at;
        *at += set_array_bytes(cap);
    }
    set->minx = arrays[0];
    set->maxx = arrays[1];
    set->miny = arrays[2];
    set->minz = arrays[3];
    set->maxy = arrays[4];
    set->maxz = arrays[5];
    set->id = (uint32_t*)(void*)arrays[6];
    set->n = 0;
    set->capacity = (uint32_t)cap;
}

void vl_prune_work_carve(vl_prune_work* work, void* block, uint32_t na, uint32_t nb, int bipartite) {
    work_plan p = plan_of(na, nb, bipartite);
    memset(work, 0, sizeof *work);
    char* at = block;
    for (int k = 0; k < 2; k++)
        if (p.set_cap[k]) carve_set(&work->set[k], &at, p.set_cap[k]);
    for (int k = 0; k < 2; k++) {
        if (!p.seg_cap[k]) continue;
        work->bands[k].seg = (uint32_t*)(void*)at;
        work->bands[k].seg_cap = (uint32_t)p.seg_cap[k];
        at += lines(p.seg_cap[k] * 4);
    }
    char* shared = at;
    work->scratch.keys = (uint64_t*)(void*)shared;
    work->scratch.tmp = (uint64_t*)(void*)(shared + lines(p.keys_cap * 8));
    work->scratch.keys_cap = work->scratch.tmp_cap = (uint32_t)p.keys_cap;
    for (int k = 0; k < 2; k++)
        if (p.store_cap[k]) carve_set(&work->bands[k].store, &at, p.store_cap[k]);
}

vl_status vl_prune_check_args(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, int bipartite,
                              const vl_pair_buffer* out) {
    if (!vl_pair_buffer_is_valid(out) || (!a && na) || (bipartite && !b && nb)) return VL_ERR_INVALID_ARGUMENT;
    if (na > VL_PRUNE_MAX_BOXES || (bipartite && nb > VL_PRUNE_MAX_BOXES)) return VL_ERR_TOO_LARGE;
    return VL_OK;
}

vl_status vl_prune_check_boxes(const vl_aabb* boxes, uint32_t n) {
    return vl_boxes_valid(boxes, 0, n) ? VL_OK : VL_ERR_INVALID_BOUNDS;
}

void vl_prune_work_free_keys(vl_prune_work* work) { vl_prune_scratch_free(&work->scratch); }

void vl_prune_work_free(vl_prune_work* work) {
    for (int k = 0; k < 2; k++) {
        vl_prune_set_free(&work->set[k]);
        vl_prune_bands_free(&work->bands[k]);
    }
    vl_prune_scratch_free(&work->scratch);
}

vl_status vl_prune_work_sort(vl_prune_work* work, const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb) {
    const vl_axis_list lists[2] = {{a, NULL, na}, {b, NULL, b ? nb : 0}};
    int axis = vl_prune_axis(NULL, lists, NULL);
    vl_status s = vl_prune_set_build(&work->set[0], &work->scratch, a, NULL, na, axis, 0);
    if (s == VL_OK && b) s = vl_prune_set_build(&work->set[1], &work->scratch, b, NULL, nb, axis, 0);
    return s;
}

vl_status vl_prune_work_complete(vl_prune_work* work, vl_pair_buffer* out) {
    return vl_prune_complete_auto(&work->set[0], &work->bands[0], out);
}

vl_status vl_prune_work_bipartite(vl_prune_work* work, vl_pair_buffer* out) {
    return vl_prune_bipartite_auto(&work->set[0], &work->set[1], &work->bands[0], &work->bands[1], 0, out);
}
