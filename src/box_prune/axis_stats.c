/* Variance of box centres per axis, in double so that large worlds do not cancel. */
#include "box_prune/axis_stats.h"

#include <math.h>
#include <string.h>

void vl_axis_stats_add(vl_axis_stats* stats, const vl_aabb* boxes, const uint32_t* ids, uint32_t n) {
    for (uint32_t k = 0; k < n; k++) {
        const vl_aabb* b = &boxes[ids ? ids[k] : k];
        double c[3];
        int finite = 1;
        for (int a = 0; a < 3; a++) {
            c[a] = 0.5 * ((double)b->min[a] + (double)b->max[a]);
            finite &= isfinite(c[a]) != 0;
        }
        if (!finite) continue;
        stats->n += 1;
        for (int a = 0; a < 3; a++) {
            stats->sum[a] += c[a];
            stats->sum2[a] += c[a] * c[a];
        }
    }
}

int vl_axis_stats_best(const vl_axis_stats* stats) {
    if (stats->n < 2) return 0;
    int best = 0;
    double best_var = -1;
    for (int a = 0; a < 3; a++) {
        double mean = stats->sum[a] / stats->n;
        double var = stats->sum2[a] / stats->n - mean * mean;
        if (var > best_var) {
            best_var = var;
            best = a;
        }
    }
    return best;
}
