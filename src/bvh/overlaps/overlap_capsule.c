/* Capsule overlap queries: the record, the node tests (the capsule's segment against the
 * children's boxes grown by its reach), the leaf tests and the two kinds of the batch engine
 * (engine/batch.h). A pair is reported when the distance in double from the segment to the
 * primitive is at most the radius plus the tolerance of bvh.h: triangles go through the float
 * kernel of simd/capsule_kernels.h, which takes or drops the pairs that lie clearly inside or
 * outside that reach and leaves the others to the exact test (segment_dist.h), so the answers are
 * the exact test's on every path; boxes take the exact test after a slab test. A capsule of zero
 * length is the sphere it is: it takes the sphere queries' leaf tests. */
#include <float.h>
#include <math.h>

#include "bvh/engine/batch.h"
#include "bvh/engine/segment_dist.h"
#include "bvh/overlaps/overlap_kernels.h"
#include "bvh/overlaps/overlaps.h"
#include "simd/capsule_kernels.h"
#include "simd/sweep_kernels.h"

_Static_assert(VL_CAP_GROW < VL_OV_RECORD_FLOATS && (int)VL_CAP_RADIUS == (int)VL_OV_RADIUS,
               "a capsule record is a sphere record's size, its radius where a sphere's is");

static const vl_capsule* capsule_of(const vl_ov_ctx* ctx, uint32_t id) {
    return (const vl_capsule*)ctx->queries + vl_ov_query(ctx, id);
}

static int zero_length(const vl_capsule* c) { return c->a[0] == c->b[0] && c->a[1] == c->b[1] && c->a[2] == c->b[2]; }

/* Half the segment's length, in double (exact differences). */
static double half_length(const vl_capsule* c) {
    double l2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double d = (double)c->b[k] - c->a[k];
        l2 += d * d;
    }
    return 0.5 * sqrt(l2);
}

/* The grown reach g of the slab tests: the radius and the tolerance's part of the capsule
 * (2 tol (r + h), the triangle's part being in the tree's node margin and in the leaf kernel's
 * bounds), and a pad for their float rounding, 2^-19 of the coordinates' magnitude. */
int vl_ov_capsule_record(float* rec, const vl_capsule* c) {
    for (int k = 0; k < 3; k++)
        if (!isfinite(c->a[k]) || !isfinite(c->b[k])) return 0;
    if (!(isfinite(c->radius) && c->radius >= 0.0f)) return 0;
    const double r = c->radius, h = half_length(c);
    double scale = 0.0;
    for (int k = 0; k < 3; k++) {
        const float d = (float)((double)c->b[k] - c->a[k]);
        rec[k] = c->a[k];
        rec[VL_CAP_INV + k] = fabsf(d) < FLT_MIN ? FLT_MAX : fmaxf(fminf(1.0f / d, FLT_MAX), -FLT_MAX);
        scale = fmax(scale, fmax(fabs((double)c->a[k]), fabs((double)c->b[k])));
    }
    rec[VL_CAP_RADIUS] = c->radius;
    /* rounded to nearest after a raise of 2^-22: never under g */
    const double g = ((r + 0x1p-17 * (r + h)) * (1.0 + 0x1p-19) + (scale + r) * 0x1p-19 + 1e-20) * (1.0 + 0x1p-22);
    rec[VL_CAP_GROW] = g < FLT_MAX ? (float)g : FLT_MAX;
    return 1;
}

/* ---- node tests -------------------------------------------------------------------------- */

/* The node tests: the sweeps' slab test of the segment (start a, 1 / D, grown by g, t in [0, 1]). */
static void capsule_node_test(const float* records, const uint32_t* ids, uint32_t n, const vl_bvh_node4* w,
                              uint8_t* masks) {
    const uint32_t live = vl_query_live_children(w);
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t q[4], bits[4] = {0, 0, 0, 0};
        for (uint32_t j = 0; j < 4; j++) q[j] = ids[i + j < n ? i + j : n - 1];
        const vl_f4 lanes = vl_f4_first(n - i < 4 ? n - i : 4);
        vl_f4 a[4], inv[4];
        vl_ov_gather(records, q, 0, a);
        vl_ov_gather(records, q, 1, inv); /* inv[3]: the grown reach */
        vl_sweepv4 s;
        for (int k = 0; k < 3; k++) s.c[k] = a[k], s.inv[k] = inv[k], s.grow[k] = inv[3];
        s.tmax = vl_f4_set1(1.0f);
        for (int c = 0; c < 4; c++) {
            if (!(live >> c & 1u)) continue;
            vl_f4 mn[3], mx[3], tn;
            for (int k = 0; k < 3; k++) mn[k] = vl_f4_set1(w->bounds[k][c]), mx[k] = vl_f4_set1(w->bounds[3 + k][c]);
            bits[c] = vl_f4_bits(vl_f4_and(vl_sweep4_slab(&s, mn, mx, &tn), lanes));
        }
        vl_query_put_masks(masks, n, i, bits);
    }
}

static uint32_t capsule_walk_node(void* vctx, uint32_t slot, uint32_t id, const vl_bvh_node4* w, float keys[4]) {
    (void)slot, (void)keys;
    const float* rec = ((vl_ov_ctx*)vctx)->records + VL_OV_RECORD_FLOATS * (size_t)id;
    vl_sweepv4 s;
    vl_f4 mn[3], mx[3], tn;
    for (int k = 0; k < 3; k++) {
        s.c[k] = vl_f4_set1(rec[k]), s.inv[k] = vl_f4_set1(rec[VL_CAP_INV + k]), s.grow[k] = vl_f4_set1(rec[VL_CAP_GROW]);
        mn[k] = vl_f4_load(w->bounds[k]), mx[k] = vl_f4_load(w->bounds[3 + k]);
    }
    s.tmax = vl_f4_set1(1.0f);
    return vl_f4_bits(vl_sweep4_slab(&s, mn, mx, &tn)) & vl_query_live_children(w);
}

/* ---- leaf tests -------------------------------------------------------------------------- */

/* Queries of a leaf's list sorted out at a time (zero length or not). */
#define CAP_LEAF_BLOCK 64u

typedef vl_status ov_leaf_fn(void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                             const vl_bvh_node4* parent, uint32_t lane);

/* The zero-length capsules of ids[from, to) through the sphere queries' leaf test; the ids of the
 * others in rest (*nr of them). */
static vl_status spheres_first(ov_leaf_fn* sphere_leaf, void* vctx, const vl_bvh* bvh, float* records,
                               const uint32_t* ids, uint32_t from, uint32_t to, const vl_bvh_node4* parent,
                               uint32_t lane, uint32_t* rest, uint32_t* nr) {
    uint32_t spheres[CAP_LEAF_BLOCK], ns = 0;
    *nr = 0;
    for (uint32_t i = from; i < to; i++) {
        if (zero_length(capsule_of(vctx, ids[i])))
            spheres[ns++] = ids[i];
        else
            rest[(*nr)++] = ids[i];
    }
    return ns ? sphere_leaf(vctx, bvh, records, spheres, ns, parent, lane) : VL_OK;
}

/* The exact test of capsule c against triangle i of the leaf of `count` (geometry rows from rows):
 * in the frame of v0, the distance from the segment to the tree's triangle within the reach. */
static int capsule_tri_exact(const vl_capsule* c, const float* rows, uint32_t count, uint32_t i) {
    double v0[3], V[3][3], P[3], Q[3], cs[3], ct[3], s = 0.0;
    for (int k = 0; k < 3; k++) {
        v0[k] = rows[k * count + i];
        V[0][k] = 0.0, V[1][k] = rows[(3 + k) * count + i], V[2][k] = -(double)rows[(6 + k) * count + i];
        P[k] = c->a[k] - v0[k], Q[k] = c->b[k] - v0[k];
        s = fmax(s, fmax(0.0, fmax(V[1][k], V[2][k])) - fmin(0.0, fmin(V[1][k], V[2][k])));
    }
    const double r = c->radius, reach = r + (double)VL_BVH_OVERLAP_TOLERANCE * (r + half_length(c) + s);
    return vl_sd_segment_tri(P, Q, V, cs, ct) <= reach * reach;
}

/* Triangle leaves: zero-length capsules as spheres; each other capsule against every chunk of
 * VL_BW triangles (prepared once per leaf visit), the float kernel's undecided lanes by the exact
 * test. */
static vl_status capsule_tri_leaf(void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                                  const vl_bvh_node4* parent, uint32_t lane) {
    vl_ov_ctx* ctx = vctx;
    const uint32_t count = parent->count[lane];
    const float* rows = vl_bvh_leaf_rows(bvh, parent->child[lane]);
    const float* geometry = vl_bvh_leaf_geometry(rows, count);
    vl_capw_prep prep[(VL_BVH_MAX_LEAF_SIZE + VL_BW - 1) / VL_BW];
    int prepared = 0;
    for (uint32_t from = 0; from < n; from += CAP_LEAF_BLOCK) {
        const uint32_t to = n - from < CAP_LEAF_BLOCK ? n : from + CAP_LEAF_BLOCK;
        uint32_t rest[CAP_LEAF_BLOCK], nr;
        vl_status st = spheres_first(vl_ov_sphere_tri_leaf, vctx, bvh, records, ids, from, to, parent, lane, rest, &nr);
        if (st != VL_OK) return st;
        if (nr && !prepared) {
            for (uint32_t k = 0, c = 0; k < count; k += VL_BW, c++)
                vl_capw_prep_make(geometry + k, count, vl_fw_first(count - k < VL_BW ? count - k : VL_BW), &prep[c]);
            prepared = 1;
        }
        for (uint32_t j = 0; j < nr; j++) {
            const float* rec = records + VL_OV_RECORD_FLOATS * (size_t)rest[j];
            const vl_capsule* cap = capsule_of(ctx, rest[j]);
            vl_capw_query q;
            vl_capw_query_set(&q, cap->a, cap->b, rec + VL_CAP_INV, rec[VL_CAP_GROW], cap->radius,
                              (float)(cap->radius + half_length(cap)));
            const uint32_t query = vl_ov_query(ctx, rest[j]);
            for (uint32_t k = 0, c = 0; k < count; k += VL_BW, c++) {
                st = vl_ov_room(ctx->out, VL_BW);
                if (st != VL_OK) return st;
                const uint32_t lanes = count - k < VL_BW ? count - k : VL_BW;
                uint32_t maybe, bits = vl_capw_tri(&prep[c], &q, &maybe);
                for (; maybe; maybe &= maybe - 1) {
                    const uint32_t l = vl_ctz32(maybe);
                    bits |= (uint32_t)capsule_tri_exact(cap, geometry, count, k + l) << l;
                }
                vl_ov_emit_bits(ctx->out, query, rows, k, lanes, bits);
            }
        }
    }
    return VL_OK;
}

/* Box leaves: the slab test in float with the record's grown reach, then the distance in double
 * from the segment to the box within r + tol (r + h). */
static vl_status capsule_box_leaf(void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                                  const vl_bvh_node4* parent, uint32_t lane) {
    vl_ov_ctx* ctx = vctx;
    const uint32_t first = parent->child[lane], count = parent->count[lane];
    const vl_bvh_box* boxes = bvh->boxes + first;
    for (uint32_t from = 0; from < n; from += CAP_LEAF_BLOCK) {
        const uint32_t to = n - from < CAP_LEAF_BLOCK ? n : from + CAP_LEAF_BLOCK;
        uint32_t rest[CAP_LEAF_BLOCK], nr;
        vl_status st = spheres_first(vl_ov_sphere_box_leaf, vctx, bvh, records, ids, from, to, parent, lane, rest, &nr);
        if (st != VL_OK) return st;
        for (uint32_t j = 0; j < nr; j++) {
            st = vl_ov_room(ctx->out, count);
            if (st != VL_OK) return st;
            const float* rec = records + VL_OV_RECORD_FLOATS * (size_t)rest[j];
            const vl_capsule* cap = capsule_of(ctx, rest[j]);
            const double r = cap->radius, reach = r + (double)VL_BVH_OVERLAP_TOLERANCE * (r + half_length(cap));
            double a[3], D[3];
            for (int k = 0; k < 3; k++) a[k] = cap->a[k], D[k] = (double)cap->b[k] - cap->a[k];
            vl_sweepv4 sv;
            for (int k = 0; k < 3; k++)
                sv.c[k] = vl_f4_set1(rec[k]), sv.inv[k] = vl_f4_set1(rec[VL_CAP_INV + k]),
                sv.grow[k] = vl_f4_set1(rec[VL_CAP_GROW]);
            sv.tmax = vl_f4_set1(1.0f);
            const uint32_t query = vl_ov_query(ctx, rest[j]);
            vl_pair* dst = ctx->out->pairs + ctx->out->count;
            for (uint32_t b = 0; b < count; b += 4) {
                const uint32_t left = count - b < 4 ? count - b : 4;
                vl_f4 lo[4], hi[4], tn;
                for (uint32_t l = 0; l < 4; l++) {
                    const vl_bvh_box* box = &boxes[b + (l < left ? l : 0)];
                    lo[l] = vl_f4_loadu(box->min), hi[l] = vl_f4_loadu(box->max);
                }
                vl_f4_transpose(lo);
                vl_f4_transpose(hi);
                uint32_t bits = vl_f4_bits(vl_sweep4_slab(&sv, lo, hi, &tn)) & ((1u << left) - 1u);
                for (; bits; bits &= bits - 1) {
                    const vl_bvh_box* box = &boxes[b + vl_ctz32(bits)];
                    double mn[3], mx[3], u;
                    for (int k = 0; k < 3; k++) mn[k] = box->min[k], mx[k] = box->max[k];
                    if (vl_sd_segment_box(a, D, mn, mx, &u) <= reach * reach) *dst++ = (vl_pair){query, box->prim};
                }
            }
            ctx->out->count = (uint32_t)(dst - ctx->out->pairs);
        }
    }
    return VL_OK;
}

/* ---- the kinds ---------------------------------------------------------------------------- */

static vl_status capsule_tri_walk_leaf(void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                                       const vl_bvh_node4* parent, uint32_t lane) {
    (void)slot;
    return capsule_tri_leaf(vctx, bvh, ((vl_ov_ctx*)vctx)->records, &id, 1, parent, lane);
}

static vl_status capsule_box_walk_leaf(void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                                       const vl_bvh_node4* parent, uint32_t lane) {
    (void)slot;
    return capsule_box_leaf(vctx, bvh, ((vl_ov_ctx*)vctx)->records, &id, 1, parent, lane);
}

static const vl_query_kind k_capsule_tri = {
    VL_OV_RECORD_FLOATS, capsule_node_test, capsule_tri_leaf,
    {.leaf_rows = VL_BVH_OVERLAP_ROWS, .node = capsule_walk_node, .leaf = capsule_tri_walk_leaf}};
static const vl_query_kind k_capsule_box = {VL_OV_RECORD_FLOATS, capsule_node_test, capsule_box_leaf,
                                            {.node = capsule_walk_node, .leaf = capsule_box_walk_leaf}};

/* Each kind in its own copy of the engine. */
vl_status vl_ov_capsule_batch(const vl_bvh* bvh, vl_ov_ctx* ctx, uint32_t* arena, uint32_t n, size_t arena_entries) {
    if (bvh->kind == VL_BVH_TRIANGLES)
        return vl_query_batch_run(bvh, &k_capsule_tri, ctx, ctx->records, arena, n, arena, arena_entries);
    return vl_query_batch_run(bvh, &k_capsule_box, ctx, ctx->records, arena, n, arena, arena_entries);
}

vl_status vl_ov_capsule_single(const vl_bvh* bvh, vl_ov_ctx* ctx) {
    if (bvh->kind == VL_BVH_TRIANGLES) return vl_query_single_run(bvh, &k_capsule_tri, ctx, 0);
    return vl_query_single_run(bvh, &k_capsule_box, ctx, 0);
}
