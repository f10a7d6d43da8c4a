/* Width-generic overlap kernel bodies (one query against VL_W triangles of a leaf), included by
 * overlap_kernels.h with VL_W = 4 or 8: VL_OW(name) names vl_ov4_name or vl_ov8_name. */
#define VL_OP3_(a, b, c) a##b##c
#define VL_OP3(a, b, c) VL_OP3_(a, b, c)
#define VF VL_OP3(vl_f, VL_W, )
#define VL_V(op) VL_OP3(vl_f, VL_W, _##op)
#define VL_OW(name) VL_OP3(vl_ov, VL_W, _##name)
#define TRIW VL_OP3(vl_ov_tri, VL_W, )

VL_INLINE VF VL_OW(sqrt)(VF a) {
#if VL_W == 4
    return simde_mm_sqrt_ps(a);
#else
    return simde_mm256_sqrt_ps(a);
#endif
}

/* VL_W triangles of a leaf's rows (row k of the leaf at row0 + k * stride), as vertices. */
typedef struct TRIW {
    VF v0[3], v1[3], v2[3], e1[3], e2n[3];
} TRIW;

VL_INLINE void VL_OW(tri_load)(const float* row0, uint32_t stride, TRIW* t) {
    for (int a = 0; a < 3; a++) {
        t->v0[a] = VL_V(loadu)(row0 + a * stride);
        t->e1[a] = VL_V(loadu)(row0 + (3 + a) * stride);
        t->e2n[a] = VL_V(loadu)(row0 + (6 + a) * stride);
        t->v1[a] = VL_V(add)(t->v0[a], t->e1[a]);
        t->v2[a] = VL_V(sub)(t->v0[a], t->e2n[a]);
    }
}

VL_INLINE VF VL_OW(dot)(const VF a[3], const VF b[3]) {
    return VL_V(add)(VL_V(add)(VL_V(mul)(a[0], b[0]), VL_V(mul)(a[1], b[1])), VL_V(mul)(a[2], b[2]));
}

VL_INLINE void VL_OW(cross)(const VF a[3], const VF b[3], VF out[3]) {
    out[0] = VL_V(sub)(VL_V(mul)(a[1], b[2]), VL_V(mul)(a[2], b[1]));
    out[1] = VL_V(sub)(VL_V(mul)(a[2], b[0]), VL_V(mul)(a[0], b[2]));
    out[2] = VL_V(sub)(VL_V(mul)(a[0], b[1]), VL_V(mul)(a[1], b[0]));
}

/* Whether the projections pa, pb (of a triangle on an axis, box centred at 0) lie beyond the
 * box's reach r on either side. */
VL_INLINE VF VL_OW(apart)(VF pa, VF pb, VF r) {
    return VL_V(or)(VL_V(gt)(VL_V(min)(pa, pb), r), VL_V(lt)(VL_V(max)(pa, pb), VL_V(sub)(VL_V(zero)(), r)));
}

/* The same for the projections of 3 corners. */
VL_INLINE VF VL_OW(apart3)(VF pa, VF pb, VF pc, VF r) {
    return VL_V(or)(VL_V(gt)(VL_V(min)(pa, VL_V(min)(pb, pc)), r),
                    VL_V(lt)(VL_V(max)(pa, VL_V(max)(pb, pc)), VL_V(sub)(VL_V(zero)(), r)));
}

/* The 3 axes (x, y, z) cross edge f of the separating axis test: separation mask. ds is a vertex
 * on the edge, dop the opposite one (relative to the box's center), hs the half sizes plus slack. */
VL_INLINE VF VL_OW(edge_axes)(const VF f[3], const VF ds[3], const VF dop[3], const VF hs[3]) {
    VF af[3];
    for (int a = 0; a < 3; a++) af[a] = VL_V(abs)(f[a]);
    /* x cross f = (0, -fz, fy) */
    VF sep = VL_OW(apart)(VL_V(sub)(VL_V(mul)(f[1], ds[2]), VL_V(mul)(f[2], ds[1])),
                            VL_V(sub)(VL_V(mul)(f[1], dop[2]), VL_V(mul)(f[2], dop[1])),
                            VL_V(add)(VL_V(mul)(af[2], hs[1]), VL_V(mul)(af[1], hs[2])));
    /* y cross f = (fz, 0, -fx) */
    sep = VL_V(or)(sep, VL_OW(apart)(VL_V(sub)(VL_V(mul)(f[2], ds[0]), VL_V(mul)(f[0], ds[2])),
                                    VL_V(sub)(VL_V(mul)(f[2], dop[0]), VL_V(mul)(f[0], dop[2])),
                                    VL_V(add)(VL_V(mul)(af[2], hs[0]), VL_V(mul)(af[0], hs[2]))));
    /* z cross f = (-fy, fx, 0) */
    return VL_V(or)(sep, VL_OW(apart)(VL_V(sub)(VL_V(mul)(f[0], ds[1]), VL_V(mul)(f[1], ds[0])),
                                     VL_V(sub)(VL_V(mul)(f[0], dop[1]), VL_V(mul)(f[1], dop[0])),
                                     VL_V(add)(VL_V(mul)(af[1], hs[0]), VL_V(mul)(af[0], hs[1]))));
}

/* Largest coordinate magnitude of the triangles (lanes). */
VL_INLINE VF VL_OW(tri_scale)(const TRIW* t) {
    VF s = VL_V(zero)();
    for (int a = 0; a < 3; a++)
        s = VL_V(max)(s, VL_V(max)(VL_V(abs)(t->v0[a]), VL_V(max)(VL_V(abs)(t->v1[a]), VL_V(abs)(t->v2[a]))));
    return s;
}

/* What the tests of VL_W triangles need that no query changes, made once per leaf chunk and
 * shared by every query that reaches the leaf. */
typedef struct VL_OW(prep) {
    TRIW t;
    VF lo[3], hi[3];  /* the triangles' bounds (box: grown by the box axes' slack) */
    VF f1[3];         /* edge v1 -> v2 */
    VF n[3], an[3];   /* normal (v1 - v0) x (v2 - v0), its absolute values */
    VF scale, slack;  /* s, tol * s */
    VF inv_ee[3];     /* sphere: 1 / |edge|^2 (0 for a zero edge) */
    VF inv_len, has_normal; /* sphere: 1 / |n|, and the mask of lanes whose normal is not zero */
    VF live;
} VL_OW(prep);

VL_INLINE void VL_OW(prep_common)(const float* row0, uint32_t stride, VF live, VL_OW(prep)* p) {
    VL_OW(tri_load)(row0, stride, &p->t);
    p->live = live;
    p->scale = VL_OW(tri_scale)(&p->t);
    p->slack = VL_V(mul)(p->scale, VL_V(set1)(VL_BVH_OVERLAP_TOLERANCE));
    for (int a = 0; a < 3; a++) {
        p->lo[a] = VL_V(min)(p->t.v0[a], VL_V(min)(p->t.v1[a], p->t.v2[a]));
        p->hi[a] = VL_V(max)(p->t.v0[a], VL_V(max)(p->t.v1[a], p->t.v2[a]));
        p->f1[a] = VL_V(sub)(VL_V(zero)(), VL_V(add)(p->t.e1[a], p->t.e2n[a]));
    }
    VL_OW(cross)(p->t.e2n, p->t.e1, p->n); /* (v1 - v0) x (v2 - v0) */
    for (int a = 0; a < 3; a++) p->an[a] = VL_V(abs)(p->n[a]);
}

VL_INLINE void VL_OW(box_prep)(const float* row0, uint32_t stride, VF live, VL_OW(prep)* p) {
    VL_OW(prep_common)(row0, stride, live, p);
    VF rho = VL_V(mul)(p->scale, VL_V(set1)(VL_OV_BOX_AXIS_SLACK));
    for (int a = 0; a < 3; a++) p->lo[a] = VL_V(sub)(p->lo[a], rho), p->hi[a] = VL_V(add)(p->hi[a], rho);
}

/* Separating axis test of one box (qmin, qmax broadcast) against the prepared triangles: the
 * box's axes against the triangles' bounds (slack 2^-22 s), then (unless the box holds the whole
 * bounds) the box clipped to those bounds (finite, near the triangle, the same intersection with
 * it) against the normal and the 9 edge cross axes, each with slack tol * s * |L|_1 folded into
 * the half sizes. Bits of the live lanes that overlap. */
VL_INLINE uint32_t VL_OW(box_tri)(const VL_OW(prep)* p, const VF qmin[3], const VF qmax[3]) {
    VF ok = p->live, inside = VL_V(true)();
    for (int a = 0; a < 3; a++) {
        ok = VL_V(and)(ok, VL_V(and)(VL_V(le)(p->lo[a], qmax[a]), VL_V(ge)(p->hi[a], qmin[a])));
        inside = VL_V(and)(inside, VL_V(and)(VL_V(ge)(p->lo[a], qmin[a]), VL_V(le)(p->hi[a], qmax[a])));
    }
    const VF undecided = VL_V(andnot)(ok, inside);
    if (!VL_V(any)(undecided)) return VL_V(bits)(ok);
    VF hs[3], d0[3], d1[3], d2[3];
    for (int a = 0; a < 3; a++) {
        VF bmin = VL_V(max)(qmin[a], p->lo[a]), bmax = VL_V(min)(qmax[a], p->hi[a]);
        VF c = VL_V(mul)(VL_V(add)(bmin, bmax), VL_V(set1)(0.5f));
        hs[a] = VL_V(add)(VL_V(mul)(VL_V(sub)(bmax, bmin), VL_V(set1)(0.5f)), p->slack);
        d0[a] = VL_V(sub)(p->t.v0[a], c);
        d1[a] = VL_V(sub)(p->t.v1[a], c);
        d2[a] = VL_V(sub)(p->t.v2[a], c);
    }
    /* all 3 corners on the normal too: a sliver's rounded normal is far from perpendicular to it */
    VF sep = VL_OW(apart3)(VL_OW(dot)(p->n, d0), VL_OW(dot)(p->n, d1), VL_OW(dot)(p->n, d2), VL_OW(dot)(p->an, hs));
    sep = VL_V(or)(sep, VL_OW(edge_axes)(p->t.e1, d0, d2, hs)); /* v0 -> v1 */
    sep = VL_V(or)(sep, VL_OW(edge_axes)(p->f1, d1, d0, hs));   /* v1 -> v2 */
    sep = VL_V(or)(sep, VL_OW(edge_axes)(p->t.e2n, d0, d1, hs)); /* v2 -> v0 */
    return VL_V(bits)(VL_V(andnot)(ok, VL_V(andnot)(sep, inside)));
}

VL_INLINE void VL_OW(sphere_prep)(const float* row0, uint32_t stride, VF live, VL_OW(prep)* p) {
    VL_OW(prep_common)(row0, stride, live, p);
    const VF zero = VL_V(zero)(), one = VL_V(set1)(1.0f);
    const VF* e[3] = {p->t.e1, p->f1, p->t.e2n};
    for (int k = 0; k < 3; k++) {
        VF ee = VL_OW(dot)(e[k], e[k]);
        p->inv_ee[k] = VL_V(and)(VL_V(gt)(ee, zero), VL_V(div)(one, VL_V(select)(VL_V(gt)(ee, zero), ee, one)));
    }
    VF nn = VL_OW(dot)(p->n, p->n);
    p->has_normal = VL_V(gt)(nn, zero);
    p->inv_len = VL_V(div)(one, VL_OW(sqrt)(VL_V(select)(p->has_normal, nn, one)));
}

/* Squared distance from the origin to segment p + t e, t in [0, 1] (a point when e = 0). */
VL_INLINE VF VL_OW(segment_d2)(const VF p[3], const VF e[3], VF inv_ee) {
    VF t = VL_V(mul)(VL_V(sub)(VL_V(zero)(), VL_OW(dot)(p, e)), inv_ee);
    t = VL_V(min)(VL_V(max)(t, VL_V(zero)()), VL_V(set1)(1.0f));
    VF q[3];
    for (int a = 0; a < 3; a++) q[a] = VL_V(add)(p[a], VL_V(mul)(t, e[a]));
    return VL_OW(dot)(q, q);
}

/* One sphere (center c, radius r broadcast; sq its scale) against the prepared triangles: the
 * squared distance from the center to each triangle (the least of its 3 edges' and, where the
 * center projects inside a triangle of non-zero normal, its plane's) against (r + tol * s)^2,
 * after a reject by the triangles' bounds and an accept of triangles whose 3 corners are in
 * reach. Bits of the live lanes that overlap. */
VL_INLINE uint32_t VL_OW(sphere_tri)(const VL_OW(prep)* p, const VF c[3], VF r, VF sq) {
    VF s = VL_V(max)(p->scale, sq);
    VF reach = VL_V(add)(r, VL_V(mul)(s, VL_V(set1)(VL_BVH_OVERLAP_TOLERANCE)));
    VF ok = p->live;
    for (int a = 0; a < 3; a++)
        ok = VL_V(and)(ok, VL_V(and)(VL_V(le)(p->lo[a], VL_V(add)(c[a], reach)), VL_V(ge)(p->hi[a], VL_V(sub)(c[a], reach))));
    if (!VL_V(any)(ok)) return 0;
    VF pa[3], pb[3], pc[3];
    for (int a = 0; a < 3; a++) {
        pa[a] = VL_V(sub)(p->t.v0[a], c[a]);
        pb[a] = VL_V(sub)(p->t.v1[a], c[a]);
        pc[a] = VL_V(sub)(p->t.v2[a], c[a]);
    }
    VF reach2 = VL_V(mul)(reach, reach);
    VF held = VL_V(and)(VL_V(le)(VL_OW(dot)(pa, pa), reach2),
                        VL_V(and)(VL_V(le)(VL_OW(dot)(pb, pb), reach2), VL_V(le)(VL_OW(dot)(pc, pc), reach2)));
    if (!VL_V(any)(VL_V(andnot)(ok, held))) return VL_V(bits)(ok);
    VF d2 = VL_V(min)(VL_OW(segment_d2)(pa, p->t.e1, p->inv_ee[0]),
                      VL_V(min)(VL_OW(segment_d2)(pb, p->f1, p->inv_ee[1]), VL_OW(segment_d2)(pc, p->t.e2n, p->inv_ee[2])));
    VF ab[3], bc[3], ca[3];
    VL_OW(cross)(pa, pb, ab);
    VL_OW(cross)(pb, pc, bc);
    VL_OW(cross)(pc, pa, ca);
    VF zero = VL_V(zero)();
    VF inside = VL_V(and)(p->has_normal, VL_V(ge)(VL_OW(dot)(p->n, ab), zero));
    inside = VL_V(and)(inside, VL_V(and)(VL_V(ge)(VL_OW(dot)(p->n, bc), zero), VL_V(ge)(VL_OW(dot)(p->n, ca), zero)));
    /* the plane's distance as the least over the 3 corners (0 when they straddle it): a lower
       bound for any normal, so that a sliver's rounded normal never loses a pair */
    VF ha = VL_OW(dot)(p->n, pa), hb = VL_OW(dot)(p->n, pb), hc = VL_OW(dot)(p->n, pc);
    VF lo = VL_V(min)(ha, VL_V(min)(hb, hc)), hi = VL_V(max)(ha, VL_V(max)(hb, hc));
    VF h = VL_V(mul)(VL_V(max)(VL_V(max)(lo, VL_V(sub)(zero, hi)), zero), p->inv_len);
    d2 = VL_V(select)(inside, VL_V(min)(d2, VL_V(mul)(h, h)), d2);
    return VL_V(bits)(VL_V(and)(ok, VL_V(or)(held, VL_V(le)(d2, reach2))));
}

#undef VL_OP3_
#undef VL_OP3
#undef VF
#undef VL_V
#undef VL_OW
#undef TRIW
