/* VL_BROADPHASE_MULTI_SAP: one cell, a persistent 3-axis SAP over local indices. Its operations
 * write only the cell, the entries of its members for this cell, and the cell's output list. */
#include <string.h>

#include "broadphase/multi_sap/multi_sap.h"
#include "compiler.h"
#include "core/radix.h"
#include "simd/kernels.h"

vl_status vl_msap_cell_reserve(vl_msap_cell* c, uint32_t members) {
    uint64_t eps = 2ull * members + 2;
    vl_status s = VL_OK;
    for (int a = 0; a < 3 && s == VL_OK; a++) {
        s = VL_ARRAY_RESERVE(c->ep[a], c->ep_cap[a], 2 * c->n + 2, eps);
        if (s == VL_OK && c->n == 0) { /* an empty cell's arrays hold their sentinels from the start */
            c->ep[a][0] = VL_SAP_LOW_SENTINEL;
            c->ep[a][1] = VL_SAP_HIGH_SENTINEL;
        }
    }
    if (s == VL_OK) s = VL_ARRAY_RESERVE(c->pos, c->pos_cap, 6 * c->n, 6ull * members);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(c->id, c->id_cap, c->n, members);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(c->tmp, c->tmp_cap, 0, 4ull * members);
    return s;
}

void vl_msap_cell_free(vl_msap_cell* c) {
    for (int a = 0; a < 3; a++) VL_ARRAY_FREE(c->ep[a], c->ep_cap[a]);
    VL_ARRAY_FREE(c->pos, c->pos_cap);
    VL_ARRAY_FREE(c->id, c->id_cap);
    VL_ARRAY_FREE(c->tmp, c->tmp_cap);
    vl_pair_buffer_free(&c->out);
}

/* Locals a and b overlap on all three axes, by endpoint indices (branch-free: 0 or 1). */
static inline uint32_t cell_overlap3(const uint32_t* pos, uint32_t a, uint32_t b) {
    const uint32_t *pa = pos + (size_t)a * 6, *pb = pos + (size_t)b * 6;
    return (uint32_t)(pa[0] < pb[1]) & (pb[0] < pa[1]) & (pa[2] < pb[3]) & (pb[2] < pa[3]) & (pa[4] < pb[5]) &
           (pb[4] < pa[5]);
}

/* Candidates of local q: every other member below `end` it overlaps (by indices), both static too
 * (a set_static flip re-inserts an object, and its pairs with statics must go). */
static void cell_push_overlaps(vl_msap_cell* c, uint32_t q, uint32_t end) {
    uint32_t h = c->id[q];
    for (uint32_t j = 0; j < end; j++)
        if (VL_UNLIKELY((j != q) & cell_overlap3(c->pos, q, j))) vl_msap_push(&c->out, &c->lost, h, c->id[j]);
}

/* Candidates of an insertion: one sweep along axis 0, the members open there kept in two lists,
 * old and new (locals from `first`); a min meets every open new member, a new min every open old
 * one too, so each pair with a new end is tested once. */
static void cell_sweep_new(vl_msap_cell* c, uint32_t first) {
    uint32_t* u = (uint32_t*)c->tmp; /* open old [0, first), open new [first, n), slots [n, 2n) */
    uint32_t *open[2] = {u, u + first}, *slot = u + c->n, count[2] = {0, 0};
    const vl_endpoint* e = c->ep[0];
    for (uint32_t i = 1; i <= 2 * c->n; i++) {
        uint32_t q = ep_owner(e[i]), is_new = q >= first;
        uint32_t* list = open[is_new];
        if (ep_is_max(e[i])) { /* q closes: the last open member of its list takes its slot */
            uint32_t last = list[--count[is_new]];
            list[slot[q]] = last;
            slot[last] = slot[q];
            continue;
        }
        for (uint32_t side = 1 - is_new; side < 2; side++)
            for (uint32_t j = 0; j < count[side]; j++) {
                uint32_t r = open[side][j];
                if (VL_UNLIKELY(cell_overlap3(c->pos, q, r))) vl_msap_push(&c->out, &c->lost, c->id[q], c->id[r]);
            }
        slot[q] = count[is_new];
        list[count[is_new]++] = q;
    }
}

void vl_msap_cell_insert(vl_msap_cell* c, const vl_bp_objects* o, uint32_t k) {
    const uint32_t n = c->n;
    uint64_t *keys = c->tmp, *sorted = c->tmp + 2ull * k;
    for (int a = 0; a < 3; a++) {
        for (uint32_t j = 0; j < k; j++) {
            const vl_aabb* b = &o->boxes[c->id[n + j]];
            keys[2 * j] = ep_make(vl_float_to_sortable(b->min[a]), 0, n + j);
            keys[2 * j + 1] = ep_make(vl_float_to_sortable(b->max[a]), 1, n + j);
        }
        /* by value and kind only: members with equal endpoints may sit in any order */
        vl_radix_sort_u64(keys, sorted, 2 * k, 31);
        vl_sap_merge(c->ep[a], 2 * n + 2, keys, 2 * k, c->pos, a);
    }
    c->n = n + k;
    if (k > VL_MSAP_SCAN_MAX) {
        cell_sweep_new(c, n);
        return;
    }
    for (uint32_t q = n; q < n + k; q++) cell_push_overlaps(c, q, q); /* each pair once: from its later end */
}

void vl_msap_cell_remove(vl_msap_cell* c, vl_msap_entry* ent, uint32_t q) {
    cell_push_overlaps(c, q, c->n);
    uint32_t end = 2 * c->n + 1;
    for (int a = 0; a < 3; a++) {
        vl_endpoint* e = c->ep[a];
        uint32_t pmin = c->pos[(size_t)q * 6 + a * 2], pmax = c->pos[(size_t)q * 6 + a * 2 + 1];
        memmove(e + pmin, e + pmin + 1, (size_t)(pmax - pmin - 1) * sizeof *e);
        memmove(e + pmax - 1, e + pmax + 1, (size_t)(end - pmax) * sizeof *e);
        for (uint32_t i = pmin; i + 1 < end - 1; i++)
            c->pos[(size_t)ep_owner(e[i]) * 6 + a * 2 + ep_is_max(e[i])] = i;
    }
    uint32_t last = --c->n;
    if (q == last) return;
    /* the last member takes index q: its endpoints, indices and entry follow */
    uint32_t h = c->id[last];
    c->id[q] = h;
    for (int k = 0; k < 6; k++) {
        uint32_t i = c->pos[(size_t)last * 6 + k];
        c->pos[(size_t)q * 6 + k] = i;
        vl_endpoint* e = &c->ep[k / 2][i];
        *e = ep_make(ep_value(*e), (uint32_t)k & 1u, q);
    }
    vl_msap_entry* oe = ent + (size_t)h * VL_MSAP_ENTRIES;
    for (uint32_t k = 0; k < VL_MSAP_ENTRIES; k++)
        if (oe[k].cell == c->index) oe[k].local = q;
}

/* Moves endpoint m from index i along `axis` to its place. Every passed endpoint of the other
 * kind toggles the two boxes' overlap on this axis: a candidate when they overlap on the two
 * other axes (indices, as in sap.c; the moving box's other axes hold still during the walk). */
VL_INLINE void cell_walk(vl_msap_cell* c, const vl_bp_objects* o, vl_endpoint m,
                                                            uint32_t i, int axis, int left) {
    const int j = axis == 0 ? 2 : 0, k = axis == 2 ? 2 : 4;
    vl_endpoint* e = c->ep[axis];
    uint32_t* pos = c->pos;
    uint32_t q = ep_owner(m);
    const uint32_t* pq = pos + (size_t)q * 6;
    vl_endpoint p;
    while (left ? (p = e[i - 1]) > m : (p = e[i + 1]) < m) {
        uint32_t r = ep_owner(p);
        uint32_t* pr = pos + (size_t)r * 6;
        /* branch-free: the kinds alternate at random, only a hit is rare */
        uint32_t hit = (uint32_t)((p ^ m) >> 31) & (pq[j] < pr[j + 1]) & (pr[j] < pq[j + 1]) & (pq[k] < pr[k + 1]) &
                       (pr[k] < pq[k + 1]);
        if (VL_UNLIKELY(hit & 1) && vl_bp_may_pair(o, c->id[q], c->id[r]))
            vl_msap_push(&c->out, &c->lost, c->id[q], c->id[r]);
        e[i] = p;
        pr[axis * 2 + ep_is_max(p)] = i;
        i = left ? i - 1 : i + 1;
    }
    e[i] = m;
    pos[(size_t)q * 6 + axis * 2 + ep_is_max(m)] = i;
}

/* As sap_move_axis: a growing max first, then the min, then a shrinking max, so that the min
 * never passes its own max. */
VL_INLINE void cell_move_axis(vl_msap_cell* c, const vl_bp_objects* o, uint32_t q,
                                                                 const vl_aabb* from, const vl_aabb* box, int axis) {
    if (from->min[axis] == box->min[axis] && from->max[axis] == box->max[axis]) return; /* no endpoint read */
    const uint32_t* p = c->pos + (size_t)q * 6 + axis * 2;
    uint32_t old_min = vl_float_to_sortable(from->min[axis]), old_max = vl_float_to_sortable(from->max[axis]);
    uint32_t new_min = vl_float_to_sortable(box->min[axis]), new_max = vl_float_to_sortable(box->max[axis]);
    vl_endpoint mn = ep_make(new_min, 0, q), mx = ep_make(new_max, 1, q);
    if (new_max > old_max) cell_walk(c, o, mx, p[1], axis, 0);
    if (new_min < old_min)
        cell_walk(c, o, mn, p[0], axis, 1);
    else if (new_min > old_min)
        cell_walk(c, o, mn, p[0], axis, 0);
    if (new_max < old_max) cell_walk(c, o, mx, p[1], axis, 1);
}

void vl_msap_cell_move(vl_msap_cell* c, const vl_bp_objects* o, uint32_t q, const vl_aabb* from, const vl_aabb* box) {
    cell_move_axis(c, o, q, from, box, 0);
    cell_move_axis(c, o, q, from, box, 1);
    cell_move_axis(c, o, q, from, box, 2);
}

vl_status vl_msap_cell_validate(const vl_msap_cell* c, const vl_bp_objects* o, const uint8_t* cls,
                                const vl_msap_entry* ent) {
    uint32_t n = 2 * c->n + 2;
    if (c->n && (c->id_cap < c->n || c->pos_cap < 6 * c->n)) return VL_ERR_INVALID_ARGUMENT;
    for (uint32_t q = 0; q < c->n; q++) {
        uint32_t h = c->id[q], found = 0;
        if (h >= o->slot_count || !(cls[h] & (VL_MSAP_IN_CELLS | VL_MSAP_MOVED))) return VL_ERR_INVALID_ARGUMENT;
        const vl_msap_entry* oe = ent + (size_t)h * VL_MSAP_ENTRIES;
        for (uint32_t k = 0; k < VL_MSAP_ENTRIES; k++) found += oe[k].cell == c->index && oe[k].local == q;
        if (found != 1) return VL_ERR_INVALID_ARGUMENT;
    }
    for (int a = 0; a < 3; a++) {
        const vl_endpoint* e = c->ep[a];
        if (!e) { /* a cell never used, or whose growth failed part way */
            if (c->n) return VL_ERR_INVALID_ARGUMENT;
            continue;
        }
        if (e[0] != VL_SAP_LOW_SENTINEL || e[n - 1] != VL_SAP_HIGH_SENTINEL) return VL_ERR_INVALID_ARGUMENT;
        for (uint32_t i = 1; i + 1 < n; i++) {
            uint32_t q = ep_owner(e[i]), is_max = ep_is_max(e[i]);
            if (q >= c->n || c->pos[(size_t)q * 6 + a * 2 + is_max] != i) return VL_ERR_INVALID_ARGUMENT;
            if ((e[i - 1] >> 31) > (e[i] >> 31)) return VL_ERR_INVALID_ARGUMENT;
            uint32_t h = c->id[q];
            if (cls[h] & VL_MSAP_MOVED) continue; /* its values wait for the commit */
            const vl_aabb* b = &o->boxes[h];
            if (ep_value(e[i]) != vl_float_to_sortable(is_max ? b->max[a] : b->min[a])) return VL_ERR_INVALID_ARGUMENT;
        }
    }
    return VL_OK;
}
