/* A spatial order for a batch of queries (see engine/order.h). */
#include "bvh/engine/order.h"

#include <float.h>

#include "core/radix.h"

vl_morton_frame vl_morton_frame_of(const vl_bvh* bvh) {
    const vl_bvh_node* root = &bvh->nodes[0];
    vl_morton_frame f;
    for (int a = 0; a < 3; a++) {
        float extent = root->max[a] - root->min[a];
        f.lo[a] = root->min[a];
        f.scale[a] = extent > 0.0f && extent <= FLT_MAX ? (float)(1u << VL_MORTON_BITS) / extent : 0.0f;
    }
    return f;
}

/* The low VL_MORTON_BITS bits of v, two zero bits between each. */
static uint32_t spread3(uint32_t v) {
    v = (v | v << 16) & 0x030000FFu;
    v = (v | v << 8) & 0x0300F00Fu;
    v = (v | v << 4) & 0x030C30C3u;
    return (v | v << 2) & 0x09249249u;
}

uint32_t vl_morton_key(const vl_morton_frame* f, const float p[3]) {
    const float top = (float)((1u << VL_MORTON_BITS) - 1);
    uint32_t key = 0;
    for (int a = 0; a < 3; a++) {
        float c = (p[a] - f->lo[a]) * f->scale[a];
        uint32_t cell = c > 0.0f ? (c < top ? (uint32_t)c : (uint32_t)top) : 0; /* NaN: 0 */
        key |= spread3(cell) << a;
    }
    return key;
}

void vl_query_order_sort(uint64_t* items, uint64_t* tmp, uint32_t n, uint32_t* order) {
    vl_radix_sort_u64(items, tmp, n, 32);
    for (uint32_t i = 0; i < n; i++) order[i] = (uint32_t)items[i];
}
