/* Tree invariants and statistics: one walk of the tree each, no allocation. */
#include <float.h>
#include <math.h>

#include "bvh/tree/tree.h"

static int box_ok(const float mn[3], const float mx[3]) {
    for (int a = 0; a < 3; a++)
        if (isnan(mn[a]) || isnan(mx[a]) || mn[a] > mx[a]) return 0;
    return 1;
}

static int inside(const vl_bvh_node* outer, const float mn[3], const float mx[3]) {
    for (int a = 0; a < 3; a++)
        if (mn[a] < outer->min[a] || mx[a] > outer->max[a]) return 0;
    return 1;
}

/* The leaf's primitives lie in its box; returns 0 otherwise. */
static int leaf_ok(const vl_bvh* bvh, const vl_bvh_node* node, uint64_t sums[2]) {
    uint32_t count = vl_bvh_node_count(node);
    for (uint32_t k = 0; k < count; k++) {
        uint32_t prim;
        float mn[3], mx[3];
        if (bvh->kind == VL_BVH_TRIANGLES) {
            vl_bvh_tri t;
            vl_bvh_tri_get(vl_bvh_leaf_rows(bvh, node->index), count, k, &t);
            for (int a = 0; a < 3; a++) {
                float p1 = t.v0[a] + t.e1[a], p2 = t.v0[a] - t.e2n[a];
                mn[a] = fminf(t.v0[a], fminf(p1, p2));
                mx[a] = fmaxf(t.v0[a], fmaxf(p1, p2));
            }
            prim = t.prim;
        } else {
            const vl_bvh_box* b = &bvh->boxes[node->index + k];
            for (int a = 0; a < 3; a++) mn[a] = b->min[a], mx[a] = b->max[a];
            prim = b->prim;
        }
        if (!box_ok(mn, mx) || !inside(node, mn, mx) || prim >= bvh->prim_count) return 0;
        sums[0] += prim;
        sums[1] += (uint64_t)prim * prim;
    }
    return 1;
}

static vl_status check_wide(const vl_bvh* bvh);

vl_status vl_bvh_check(const vl_bvh* bvh) {
    if (!bvh->nodes || bvh->node_count == 0 || bvh->node_count > bvh->node_capacity || bvh->prim_count == 0 ||
        bvh->node_count > 2 * (uint64_t)bvh->prim_count - 1 || bvh->max_leaf_size == 0 ||
        bvh->max_leaf_size > VL_BVH_MAX_LEAF_SIZE || bvh->depth == 0 || bvh->depth > VL_BVH_MAX_DEPTH)
        return VL_ERR_INVALID_ARGUMENT;
    if (bvh->kind == VL_BVH_TRIANGLES ? !bvh->tris : (bvh->kind != VL_BVH_BOXES || !bvh->boxes))
        return VL_ERR_INVALID_ARGUMENT;
    uint32_t stack[VL_BVH_MAX_DEPTH + 2], depths[VL_BVH_MAX_DEPTH + 2];
    uint32_t top = 0, visited = 0, next_slot = 0, max_depth = 0;
    uint64_t sums[2] = {0, 0};
    stack[top] = 0, depths[top++] = 1;
    while (top) {
        --top;
        uint32_t ni = stack[top], depth = depths[top];
        const vl_bvh_node* node = &bvh->nodes[ni];
        visited++;
        if (depth > max_depth) max_depth = depth;
        if (!box_ok(node->min, node->max) || visited > bvh->node_count) return VL_ERR_INVALID_ARGUMENT;
        uint32_t count = vl_bvh_node_count(node);
        if (count) {
            /* leaves come in slot order in a left-first walk: each starts where the last ended */
            if (count > bvh->max_leaf_size || node->index != next_slot ||
                (uint64_t)node->index + count > bvh->prim_count)
                return VL_ERR_INVALID_ARGUMENT;
            if (!leaf_ok(bvh, node, sums)) return VL_ERR_INVALID_ARGUMENT;
            next_slot += count;
            continue;
        }
        uint32_t left = node->index;
        if (vl_bvh_node_axis(node) > 2 || left <= ni || (uint64_t)left + 1 >= bvh->node_count || depth >= bvh->depth)
            return VL_ERR_INVALID_ARGUMENT;
        for (uint32_t c = 0; c < 2; c++)
            if (!inside(node, bvh->nodes[left + c].min, bvh->nodes[left + c].max)) return VL_ERR_INVALID_ARGUMENT;
        stack[top] = left + 1, depths[top++] = depth + 1;
        stack[top] = left, depths[top++] = depth + 1;
    }
    /* every node reached once, every slot covered once, the primitive ids a permutation
     * (checked by their sum and sum of squares) */
    uint64_t n = bvh->prim_count;
    uint64_t sum = n * (n - 1) / 2, sum_sq = (n - 1) * n * (2 * n - 1) / 6;
    if (visited != bvh->node_count || next_slot != bvh->prim_count || max_depth != bvh->depth || sums[0] != sum ||
        sums[1] != sum_sq)
        return VL_ERR_INVALID_ARGUMENT;
    return check_wide(bvh);
}

/* The 4-wide copy: children in range and deeper, boxes nested, leaves in slot order covering
 * every slot once (an in-order walk), empty slots at +infinity, wide_of pointing at node4s. */
static vl_status check_wide(const vl_bvh* bvh) {
    if (!bvh->wide || !bvh->wide_of || bvh->wide_count == 0 || bvh->wide_count > bvh->wide_capacity)
        return VL_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < bvh->node_count; i++)
        if (bvh->wide_of[i] != VL_BVH_EMPTY && bvh->wide_of[i] >= bvh->wide_count) return VL_ERR_INVALID_ARGUMENT;
    struct {
        uint32_t node, slot;
    } stack[VL_BVH_MAX_DEPTH + 1];
    uint32_t top = 0, visited = 1, next_slot = 0;
    uint64_t sums[2] = {0, 0};
    stack[top].node = 0, stack[top++].slot = 0;
    while (top) {
        if (stack[top - 1].slot == 4) {
            top--;
            continue;
        }
        uint32_t wi = stack[top - 1].node, i = stack[top - 1].slot++;
        const vl_bvh_node4* w = &bvh->wide[wi];
        if (w->child[i] == VL_BVH_EMPTY) {
            for (int k = 0; k < 6; k++)
                if (w->bounds[k][i] != INFINITY) return VL_ERR_INVALID_ARGUMENT;
            continue;
        }
        vl_bvh_node box;
        for (int a = 0; a < 3; a++) box.min[a] = w->bounds[a][i], box.max[a] = w->bounds[3 + a][i];
        box.index = w->child[i];
        box.meta = w->count[i] << 2;
        if (!box_ok(box.min, box.max)) return VL_ERR_INVALID_ARGUMENT;
        if (w->count[i]) {
            if (w->count[i] > bvh->max_leaf_size || w->child[i] != next_slot ||
                (uint64_t)w->child[i] + w->count[i] > bvh->prim_count || !leaf_ok(bvh, &box, sums))
                return VL_ERR_INVALID_ARGUMENT;
            next_slot += w->count[i];
            continue;
        }
        if (w->child[i] <= wi || w->child[i] >= bvh->wide_count || top >= VL_BVH_MAX_DEPTH)
            return VL_ERR_INVALID_ARGUMENT;
        const vl_bvh_node4* c = &bvh->wide[w->child[i]];
        for (int j = 0; j < 4; j++) {
            if (c->child[j] == VL_BVH_EMPTY) continue;
            float mn[3] = {c->bounds[0][j], c->bounds[1][j], c->bounds[2][j]};
            float mx[3] = {c->bounds[3][j], c->bounds[4][j], c->bounds[5][j]};
            if (!inside(&box, mn, mx)) return VL_ERR_INVALID_ARGUMENT;
        }
        visited++;
        stack[top].node = w->child[i], stack[top++].slot = 0;
    }
    if (visited != bvh->wide_count || next_slot != bvh->prim_count) return VL_ERR_INVALID_ARGUMENT;
    return VL_OK;
}

vl_status vl_bvh_validate(const vl_bvh* bvh) {
    if (!bvh) return VL_ERR_INVALID_ARGUMENT;
    return vl_bvh_check(bvh);
}

static double node_area(const vl_bvh_node* n) {
    double d[3];
    for (int a = 0; a < 3; a++) {
        double lo = n->min[a] < -FLT_MAX ? -FLT_MAX : n->min[a];
        double hi = n->max[a] > FLT_MAX ? FLT_MAX : n->max[a];
        d[a] = hi - lo;
    }
    return d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
}

vl_status vl_bvh_get_stats(const vl_bvh* bvh, vl_bvh_stats* stats) {
    if (!bvh || !stats) return VL_ERR_INVALID_ARGUMENT;
    double root = node_area(&bvh->nodes[0]);
    double scale = root > 0 ? 1.0 / root : 1.0;
    double cost = 0;
    uint32_t leaves = 0;
    for (uint32_t i = 0; i < bvh->node_count; i++) {
        const vl_bvh_node* n = &bvh->nodes[i];
        uint32_t count = vl_bvh_node_count(n);
        double area = root > 0 ? node_area(n) * scale : 1.0;
        if (count) {
            leaves++;
            cost += area * count;
        } else {
            cost += area * bvh->desc.node_cost;
        }
    }
    stats->primitives = bvh->prim_count;
    stats->nodes = bvh->node_count;
    stats->leaves = leaves;
    stats->depth = bvh->depth;
    stats->sah_cost = cost;
    stats->sah_growth = bvh->build_sah > 0.0 ? cost / bvh->build_sah : 1.0;
    stats->bytes = vl_bvh_bytes(bvh);
    return VL_OK;
}
