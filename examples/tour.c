/* The README's API tour as a program: a batch of rays against a tree of two triangles, then a
 * broadphase over three boxes, one of which moves. Every call checked, everything freed.
 *   tour            runs it and prints what it found
 *   tour --help     says so */
#include <stdio.h>
#include <math.h>
#include <string.h>

#include <volley/volley.h>

static int check(vl_status st, const char* what) {
    if (st != VL_OK) fprintf(stderr, "tour: %s: %s\n", what, vl_status_string(st));
    return st == VL_OK;
}

static int rays(void) {
    /* a unit square in the plane z = 0, as two triangles */
    const float xyz[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    const uint32_t indices[] = {0, 1, 2, 0, 2, 3};
    vl_bvh* bvh = NULL;
    if (!check(vl_bvh_build_triangles(xyz, 4, indices, 2, NULL, &bvh, NULL), "vl_bvh_build_triangles")) return 0;

    vl_ray batch[3] = {
        {{0.25f, 0.5f, 1}, 0, {0, 0, -1}, INFINITY}, /* hits the square at t = 1 */
        {{0.75f, 0.5f, 2}, 0, {0, 0, -1}, 1.5f},     /* stops short of it */
        {{5, 5, 1}, 0, {0, 0, -1}, INFINITY},        /* misses */
    };
    vl_hit hits[3];
    int ok = check(vl_bvh_raycast(bvh, batch, 3, VL_QUERY_CLOSEST, hits, NULL), "vl_bvh_raycast");
    for (int i = 0; ok && i < 3; i++) {
        if (hits[i].prim == VL_NO_HIT) printf("ray %d: miss\n", i);
        else printf("ray %d: triangle %u at t = %g\n", i, hits[i].prim, hits[i].t);
    }
    vl_hit occluded;
    ok = ok && check(vl_bvh_raycast1(bvh, &batch[0], VL_QUERY_ANY, &occluded), "vl_bvh_raycast1");
    if (ok) printf("ray 0, any hit: %s\n", occluded.prim != VL_NO_HIT ? "blocked" : "clear");
    vl_point_query above = {{0.5f, 0.25f, 2}, INFINITY}; /* the nearest surface point, at any distance */
    vl_closest_hit nearest;
    ok = ok && check(vl_bvh_closest_points(bvh, &above, 1, &nearest, NULL), "vl_bvh_closest_points");
    if (ok)
        printf("closest point to (0.5, 0.25, 2): (%g, %g, %g) on triangle %u, %g away\n", nearest.point[0],
               nearest.point[1], nearest.point[2], nearest.prim, nearest.distance);
    /* a standing capsule (feet at z = 0.5, head at 1.5, radius 0.25) dropped onto the square */
    vl_capsule_sweep fall = {{{0.5f, 0.5f, 0.5f}, 0.25f, {0.5f, 0.5f, 1.5f}}, {0, 0, -1}, 10};
    vl_hit landed;
    vl_contact where;
    ok = ok && check(vl_bvh_sweep_capsules(bvh, &fall, 1, VL_QUERY_CLOSEST, &landed, &where, NULL),
                     "vl_bvh_sweep_capsules");
    if (ok)
        printf("capsule dropped: lands after %g, normal (%g, %g, %g)\n", landed.t, where.normal[0],
               where.normal[1], where.normal[2]);
    vl_bvh_destroy(bvh);
    return ok;
}

static int pairs(void) {
    vl_aabb boxes[3] = {
        {{0, 0, 0}, {1, 1, 1}},
        {{0.5f, 0.5f, 0.5f}, {2, 2, 2}},
        {{5, 5, 5}, {6, 6, 6}},
    };
    uint32_t handles[3];
    vl_broadphase* bp = NULL;
    vl_pair_buffer created = {0}, deleted = {0};
    int ok = check(vl_broadphase_create(NULL, &bp), "vl_broadphase_create") &&
             check(vl_broadphase_add(bp, handles, boxes, 3, 0), "vl_broadphase_add") &&
             check(vl_broadphase_commit(bp, &created, &deleted), "vl_broadphase_commit");
    for (uint32_t i = 0; ok && i < created.count; i++)
        printf("frame 0: pair (%u, %u) began\n", created.pairs[i].a, created.pairs[i].b);

    /* next frame: box 2 moves onto box 1, box 0 stays */
    vl_aabb moved = {{1.5f, 1.5f, 1.5f}, {2.5f, 2.5f, 2.5f}};
    created.count = deleted.count = 0;
    ok = ok && check(vl_broadphase_update(bp, &handles[2], &moved, 1), "vl_broadphase_update") &&
         check(vl_broadphase_commit(bp, &created, &deleted), "vl_broadphase_commit");
    for (uint32_t i = 0; ok && i < created.count; i++)
        printf("frame 1: pair (%u, %u) began\n", created.pairs[i].a, created.pairs[i].b);

    vl_pair_buffer all = {0};
    ok = ok && check(vl_box_prune(boxes, 3, &all, NULL), "vl_box_prune");
    if (ok) printf("one-shot box pruning of the first positions: %u pair(s)\n", all.count);

    vl_pair_buffer_free(&all);
    vl_pair_buffer_free(&created);
    vl_pair_buffer_free(&deleted);
    vl_broadphase_destroy(bp);
    return ok;
}

int main(int argc, char** argv) {
    if (argc > 1) {
        int help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        fprintf(help ? stdout : stderr,
                "%sUsage: tour\nA tour of volley's API: batched raycasts and a broadphase. Takes no arguments; the\n"
                "volley tool (volley render, volley bench) is the program for meshes.\n",
                help ? "" : "tour: takes no arguments\n");
        return help ? 0 : 2;
    }
    printf("volley %s, SIMD %s\n", vl_get_version_string(), vl_get_simd_backend());
    int ok = rays() && pairs();
    if (ok && vl_get_bytes_in_use() != 0) {
        fprintf(stderr, "tour: %zu bytes still allocated\n", vl_get_bytes_in_use());
        ok = 0;
    }
    return ok ? 0 : 1;
}
