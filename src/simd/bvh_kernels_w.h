/* Width-generic BVH kernel bodies, included by bvh_kernels.h with VL_W = 4 or 8:
 * VL_B(name) names vl_b4_name or vl_b8_name. */
#define VL_BP3_(a, b, c) a##b##c
#define VL_BP3(a, b, c) VL_BP3_(a, b, c)
#define VF VL_BP3(vl_f, VL_W, )
#define VL_V(op) VL_BP3(vl_f, VL_W, _##op)
#define VL_B(name) VL_BP3(vl_b, VL_W, _##name)
#define VL_I(op) VL_BP3(vl_i, VL_W, _##op)
#define VI VL_BP3(vl_i, VL_W, )
#define TRIV VL_BP3(vl_triv, VL_W, )

/* Triangles across lanes: v0, e1 = v1 - v0, e2n = v0 - v2, ng = e1 x (v2 - v0). */
typedef struct TRIV {
    VF v0[3], e1[3], e2n[3], ng[3];
} TRIV;

/* t's 12 vectors in the order of a leaf's rows (v0, e1, e2n, ng as x y z): row k fills *slot[k].
 * The rows are read through a pointer bumped a stride at a time: indexed, gcc kept 12 multiples
 * of the stride and spilled them. */
VL_INLINE void VL_B(tri_slots)(TRIV* t, VF* slot[12]) {
    for (int a = 0; a < 3; a++) slot[a] = &t->v0[a], slot[3 + a] = &t->e1[a];
    for (int a = 0; a < 3; a++) slot[6 + a] = &t->e2n[a], slot[9 + a] = &t->ng[a];
}

/* One triangle broadcast to every lane, its 12 floats `stride` apart from row0 (see tri_slots). */
VL_INLINE TRIV VL_B(tri_broadcast)(const float* row0, uint32_t stride) {
    TRIV t;
    VF* slot[12];
    VL_B(tri_slots)(&t, slot);
    const float* row = row0;
    for (uint32_t k = 0; k < 12; k++, row += stride) *slot[k] = VL_V(set1)(*row);
    return t;
}

/* Three-term dot product, summed in the scalar code's order. */
VL_INLINE VF VL_B(dot3)(VF ax, VF ay, VF az, VF bx, VF by, VF bz) {
    return VL_V(add)(VL_V(add)(VL_V(mul)(ax, bx), VL_V(mul)(ay, by)), VL_V(mul)(az, bz));
}

/* Moller-Trumbore with a precomputed normal (see vl_bvh_ray_triangle) for VL_W rays (origin o,
 * direction d) against one double-sided triangle: the mask of lanes with |det| > 2^-20 |ng|_1
 * |d|_1 (not grazing), u >= -eps, v >= -eps, u + v <= 1 + eps and t in [tmin, tmax], and t, u,
 * v. The float operations and their order are the scalar code's, so both paths answer alike to
 * the bit; a zero det gives inf/NaN lanes that the det mask drops. 19 mul, 1 div. */
VL_INLINE VF VL_B(ray_triangle)(const VF o[3], const VF d[3], VF tmin, VF tmax, const TRIV* tri, VF* t_out, VF* u_out,
                                VF* v_out) {
    const VF *ng = tri->ng, *e1 = tri->e1, *e2n = tri->e2n;
    VF det = VL_B(dot3)(ng[0], ng[1], ng[2], d[0], d[1], d[2]);
    VF nsum = VL_V(add)(VL_V(add)(VL_V(abs)(ng[0]), VL_V(abs)(ng[1])), VL_V(abs)(ng[2]));
    VF dsum = VL_V(add)(VL_V(add)(VL_V(abs)(d[0]), VL_V(abs)(d[1])), VL_V(abs)(d[2]));
    VF steep = VL_V(gt)(VL_V(abs)(det), VL_V(mul)(VL_V(mul)(nsum, dsum), VL_V(set1)(0x1p-20f)));
    VF inv = VL_V(div)(VL_V(set1)(1.0f), det);
    VF cx = VL_V(sub)(tri->v0[0], o[0]), cy = VL_V(sub)(tri->v0[1], o[1]), cz = VL_V(sub)(tri->v0[2], o[2]);
    VF rx = VL_V(sub)(VL_V(mul)(d[1], cz), VL_V(mul)(d[2], cy));
    VF ry = VL_V(sub)(VL_V(mul)(d[2], cx), VL_V(mul)(d[0], cz));
    VF rz = VL_V(sub)(VL_V(mul)(d[0], cy), VL_V(mul)(d[1], cx));
    VF t = VL_V(mul)(VL_B(dot3)(ng[0], ng[1], ng[2], cx, cy, cz), inv);
    VF u = VL_V(mul)(VL_B(dot3)(rx, ry, rz, e2n[0], e2n[1], e2n[2]), inv);
    VF v = VL_V(mul)(VL_B(dot3)(rx, ry, rz, e1[0], e1[1], e1[2]), inv);
    const VF neg_eps = VL_V(set1)(-VL_BVH_TRIANGLE_EPSILON);
    const VF one_eps = VL_V(set1)(1.0f + VL_BVH_TRIANGLE_EPSILON);
    VF m = VL_V(and)(VL_V(ge)(u, neg_eps), steep);
    m = VL_V(and)(m, VL_V(ge)(v, neg_eps));
    m = VL_V(and)(m, VL_V(le)(VL_V(add)(u, v), one_eps));
    m = VL_V(and)(m, VL_V(and)(VL_V(ge)(t, tmin), VL_V(le)(t, tmax)));
    *t_out = t, *u_out = u, *v_out = v;
    return m;
}

/* One ray (o, d, tmin, tmax broadcast) against n triangles (1 <= n <= VL_W) in rows, one per lane:
 * float k (v0, e1, e2n, ng as x y z) of triangle j at row0 + k stride + j. The mask bits of the
 * lanes hit (see ray_triangle), and t, u, v. Lanes past n read on past their row and are dropped;
 * the last row's are zeroed first (what follows it may be integers, which as floats are
 * denormals, slow in arithmetic). */
VL_INLINE uint32_t VL_B(ray_tri_rows)(const float* row0, uint32_t stride, uint32_t n, const VF o[3], const VF d[3],
                                      VF tmin, VF tmax, VF* t_out, VF* u_out, VF* v_out) {
    const VF live = VL_V(first)(n);
    TRIV tri;
    VF* slot[12];
    VL_B(tri_slots)(&tri, slot);
    const float* row = row0;
    for (uint32_t k = 0; k < 12; k++, row += stride) *slot[k] = VL_V(loadu)(row);
    tri.ng[2] = VL_V(and)(tri.ng[2], live);
    VF m = VL_B(ray_triangle)(o, d, tmin, tmax, &tri, t_out, u_out, v_out);
    return VL_V(bits)(VL_V(and)(m, live));
}

/* The order in which a single-ray walk pushes a node4's children, without a branch, for each
 * 128-bit half on its own (8 lanes: two walks' nodes): the children hit (lanes of `hit`) by entry
 * t (tn, at least -0), farthest first and of equal ones the last lane first, then the missed ones.
 * Lane j of the result is the j-th child's key: its t's bits with the two low bits replaced by its
 * lane within the half (the key & ~3, as a float, is at most its t: a safe entry t to cull by). A
 * sorting network of 5 compare-exchanges on the keys as integers. */
VL_INLINE VI VL_B(far_first)(VF hit, VF tn) {
    static const int32_t quad[8] = {0, 1, 2, 3, 0, 1, 2, 3};
    const VI lane = VL_I(loadu)(quad);
    VI t = VL_I(max)(VL_V(as_i)(tn), VL_I(set1)(0)); /* -0 sorts as +0 */
    VI key = VL_I(or)(VL_I(and)(t, VL_I(set1)(~3)), lane);
    key = VL_V(as_i)(VL_V(select)(hit, VL_I(as_f)(key), VL_I(as_f)(VL_I(sub)(lane, VL_I(set1)(4)))));
    VI s = VL_I(shuffle)(key, SIMDE_MM_SHUFFLE(2, 3, 0, 1)); /* (0, 1) and (2, 3) */
    key = VL_I(blend16)(VL_I(max)(key, s), VL_I(min)(key, s), 0xCC);
    s = VL_I(shuffle)(key, SIMDE_MM_SHUFFLE(1, 0, 3, 2)); /* (0, 2) and (1, 3) */
    key = VL_I(blend16)(VL_I(max)(key, s), VL_I(min)(key, s), 0xF0);
    s = VL_I(shuffle)(key, SIMDE_MM_SHUFFLE(3, 1, 2, 0)); /* (1, 2) */
    return VL_I(blend16)(VL_I(max)(key, s), VL_I(min)(key, s), 0x30);
}

/* The entry t by which an any-hit walk orders the children hit: tmax where the box holds the
 * origin (entered at tmin), tn elsewhere (see visit_order4 in traverse_single.c). */
VL_INLINE VF VL_B(origin_last)(VF tn, VF tmin, VF tmax) { return VL_V(select)(VL_V(le)(tn, tmin), tmax, tn); }

/* Ray records for the traversals of VL_W caller rays: ray j's 8 floats (origin, tmin, dir, tmax,
 * as vl_ray) at rays + 8 j; its record at rec + stride j, three quads: (origin, tmin),
 * (1 / dir, tmax), (dir, tmax), where dir's components under FLT_MIN in magnitude are flushed to
 * signed zeros (whose inverse is then infinite) and tmax is at most FLT_MAX. These are
 * vl_bvh_rayrec_set's float operations (primitives.h), so the records agree with it to the bit.
 * A ray that is not valid (a component NaN or infinite, none of dir at least FLT_MIN, tmin < 0 or
 * tmin > tmax) gets the retired record instead: 1 everywhere, tmin 0, tmax -1. Returns the valid
 * lanes; *flat gets those of them with a flushed component. */
VL_INLINE uint32_t VL_B(rayrecs)(const float* rays, float* rec, uint32_t stride, uint32_t* flat) {
    static const uint32_t ramp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    VF org[4], dir[4], inv[4];
    VL_B(gather)(rays, 8, ramp, 0, org);
    VL_B(gather)(rays, 8, ramp, 1, dir);
    const VF zero = VL_V(zero)(), one = VL_V(set1)(1.0f), tiny = VL_V(set1)(FLT_MIN), inf = VL_V(set1)(INFINITY);
    /* compares are false on NaN: a NaN anywhere fails one of them */
    VF ok = VL_V(and)(VL_V(ge)(org[3], zero), VL_V(le)(org[3], dir[3]));
    VF moves = zero, flushed = zero;
    for (int a = 0; a < 3; a++) {
        VF size = VL_V(abs)(dir[a]), small = VL_V(lt)(size, tiny);
        ok = VL_V(and)(ok, VL_V(and)(VL_V(lt)(VL_V(abs)(org[a]), inf), VL_V(lt)(size, inf)));
        moves = VL_V(or)(moves, VL_V(ge)(size, tiny));
        flushed = VL_V(or)(flushed, small);
        dir[a] = VL_V(select)(small, VL_V(and)(dir[a], VL_V(set1)(-0.0f)), dir[a]);
        inv[a] = VL_V(div)(one, dir[a]); /* 1 / +-0 = +-inf */
    }
    ok = VL_V(and)(ok, moves);
    VF tmax = VL_V(select)(VL_V(lt)(dir[3], VL_V(set1)(FLT_MAX)), dir[3], VL_V(set1)(FLT_MAX));
    for (int a = 0; a < 3; a++) {
        org[a] = VL_V(select)(ok, org[a], one);
        inv[a] = VL_V(select)(ok, inv[a], one);
        dir[a] = VL_V(select)(ok, dir[a], one);
    }
    org[3] = VL_V(select)(ok, org[3], zero);
    inv[3] = dir[3] = VL_V(select)(ok, tmax, VL_V(set1)(-1.0f));
    VL_B(scatter)(rec, stride, 0, org);
    VL_B(scatter)(rec, stride, 1, inv);
    VL_B(scatter)(rec, stride, 2, dir);
    *flat = VL_V(bits)(VL_V(and)(ok, flushed));
    return VL_V(bits)(ok);
}

#undef VL_BP3_
#undef VL_BP3
#undef VF
#undef VL_V
#undef VL_B
#undef VL_I
#undef VI
#undef TRIV
