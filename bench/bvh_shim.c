/* C shim for the BVH bench: sets the batched traversal's knobs between runs. */
#include "bvh_shim.h"

#include "bvh/traverse.h"

static vl_bvh_tuning g_defaults;
static int g_saved;

void bench_bvh_tune(uint32_t width, uint32_t remnant_plus1, uint32_t order, uint32_t chunk) {
    if (!g_saved) g_defaults = vl_bvh_tune, g_saved = 1;
    if (width) vl_bvh_tune.width = width;
    if (remnant_plus1) vl_bvh_tune.remnant = remnant_plus1 - 1;
    if (order) {
        vl_bvh_tune.order = order == 1;
        vl_bvh_tune.wide = order >= 3;
        vl_bvh_tune.octants = order == 4;
        vl_bvh_tune.near_first = order == 5 ? 0 : order == 6 ? 64 : order == 7 ? 1024 : order == 8 ? 16384 : 1;
    }
    if (chunk) vl_bvh_tune.chunk = chunk;
}

void bench_bvh_tune_reset(void) {
    if (g_saved) vl_bvh_tune = g_defaults;
}
