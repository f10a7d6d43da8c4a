/* Builds and refits on a context, exactly: the tree (every node, wide node and primitive, in the
 * same order) is identical to the one built or refit without a context, for 1, 2, 3, 4 and 7
 * workers through each job system of toy_jobs.h: builds of a terrain world, a triangle soup in
 * leaves of one, scattered boxes with a ground plane and equal boxes, which make tasks; refits of
 * the world, the soup and box trees deep, shallow and of one leaf, which allocate nothing, make
 * tasks where the tree is deeper than the cut, and answer rays as the tree refit without a
 * context. A build whose
 * allocations fail in turn answers VL_ERR_OUT_OF_MEMORY and leaks nothing, and the first that
 * succeeds gives the same tree; bad input is refused, a tree left unchanged. */
#include "bvh/tree/tree.h"
#include "bvh/tree/refit.h"
#include "context_checks.h"

static int same_tree(const vl_bvh* a, const vl_bvh* b) {
    if (a->node_count != b->node_count || a->depth != b->depth || a->prim_count != b->prim_count ||
        a->wide_count != b->wide_count || a->kind != b->kind || a->pad != b->pad)
        return 0;
    if (memcmp(a->nodes, b->nodes, sizeof(vl_bvh_node) * a->node_count) != 0) return 0;
    if (memcmp(a->wide, b->wide, sizeof(vl_bvh_node4) * a->wide_count) != 0) return 0;
    if (memcmp(a->wide_of, b->wide_of, sizeof(uint32_t) * a->node_count) != 0) return 0;
    if (a->kind == VL_BVH_TRIANGLES)
        return memcmp(a->tris, b->tris, sizeof(float) * vl_bvh_tri_floats(a->prim_count)) == 0;
    return memcmp(a->boxes, b->boxes, sizeof(vl_bvh_box) * a->prim_count) == 0;
}

static void check_build(const char* scene, const scene_mesh* m, const vl_aabb* boxes, uint32_t box_count,
                        const vl_bvh_desc* desc) {
    vl_bvh* serial = NULL;
    vl_status st = m ? vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, desc, &serial, NULL)
                     : vl_bvh_build_boxes(boxes, box_count, desc, &serial, NULL);
    CHECK(st == VL_OK, "%s: serial build", scene);
    if (st != VL_OK) return;
    for (context_case c = {0}; next_context_case(&c);) {
        if (!c.ctx) continue;
        vl_bvh* par = NULL;
        st = m ? vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, desc, &par,
                                        &(vl_exec){.context = c.ctx})
               : vl_bvh_build_boxes(boxes, box_count, desc, &par, &(vl_exec){.context = c.ctx});
        CHECK(st == VL_OK && par, "%s, %s x%u: build", scene, k_sys_names[c.sys], c.workers);
        if (par) {
            CHECK(same_tree(serial, par), "%s, %s x%u: the tree differs from the serial build's", scene,
                  k_sys_names[c.sys], c.workers);
            CHECK(vl_bvh_validate(par) == VL_OK, "%s: valid", scene);
        }
        if (c.sys == SYS_TOY) CHECK(c.toy.enqueued > 0, "%s x%u: the build made tasks", scene, c.workers);
        vl_bvh_destroy(par);
    }
    vl_bvh_destroy(serial);
}

/* Every allocation of a parallel build failing in turn: VL_ERR_OUT_OF_MEMORY, nothing leaked,
 * *out untouched; then a build that succeeds matches the serial tree. */
static void check_build_out_of_memory(const scene_mesh* m) {
    vl_bvh* serial = NULL;
    vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &serial, NULL);
    int built = 0;
    for (long budget = 0; budget < 256 && !built; budget++) {
        test_alloc_hooks h;
        test_alloc_begin(&h);
        toy_system toy;
        vl_thread_pool* pool;
        vl_context* ctx = make_context(SYS_TOY, 3, &toy, &pool);
        h.budget = budget;
        vl_bvh* out = NULL;
        vl_status st =
            vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &out, &(vl_exec){.context = ctx});
        h.budget = -1;
        if (st == VL_OK) {
            built = 1;
            CHECK(out && serial && same_tree(serial, out), "budget %ld: the tree differs", budget);
        } else {
            CHECK(st == VL_ERR_OUT_OF_MEMORY && out == NULL, "budget %ld: %s", budget, vl_status_string(st));
        }
        vl_bvh_destroy(out);
        vl_context_destroy(ctx);
        test_alloc_end(&h);
        pthread_mutex_lock(&test_alloc_lock); /* the toy's threads are joined; the lock orders their counts */
        size_t leaked = h.bytes;
        pthread_mutex_unlock(&test_alloc_lock);
        CHECK(leaked == 0, "budget %ld: %zu bytes leaked", budget, leaked);
    }
    CHECK(built, "the build never succeeded");
    vl_bvh_destroy(serial);
}

/* Bad input to a build on a context: refused, nothing written. */
static void check_build_bad_input(void) {
    vl_context* ctx = NULL;
    vl_context_create(NULL, &ctx);
    vl_aabb box = {{0, 0, 0}, {1, 1, 1}};
    vl_bvh* out = NULL;
    CHECK(vl_bvh_build_boxes(&box, 1, NULL, &out, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT && !out, "context and scratch");
    box.min[0] = NAN;
    CHECK(vl_bvh_build_boxes(&box, 1, NULL, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_BOUNDS && !out, "NaN box");
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    uint32_t idx[3] = {0, 1, 5};
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_GEOMETRY && !out,
          "bad index");
    vl_context_destroy(ctx);
}

/* ---- refit ---------------------------------------------------------------------------------- */

/* The mesh's or boxes' tree built, then refit to moved primitives, serially and in parallel on
 * every job system and worker count from the same build: the trees must match byte for byte, and
 * answer rays alike. The parallel refit allocates nothing. */
static vl_status refit_build(const scene_mesh* m, const vl_aabb* boxes, uint32_t box_count, vl_bvh** out) {
    return m ? vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, out, NULL)
             : vl_bvh_build_boxes(boxes, box_count, NULL, out, NULL);
}

static void check_refit(const char* scene, const scene_mesh* m, const float* moved_xyz, const vl_aabb* boxes,
                        const vl_aabb* moved_boxes, uint32_t box_count, const vl_ray* rays, uint32_t ray_count) {
    vl_bvh* serial = NULL;
    CHECK(refit_build(m, boxes, box_count, &serial) == VL_OK, "%s: build", scene);
    if (!serial) return;
    vl_status st = m ? vl_bvh_refit_triangles(serial, moved_xyz, NULL) : vl_bvh_refit_boxes(serial, moved_boxes, NULL);
    CHECK(st == VL_OK, "%s: serial refit", scene);
    vl_hit* want = malloc(sizeof(vl_hit) * ray_count);
    vl_hit* got = malloc(sizeof(vl_hit) * ray_count);
    vl_bvh_raycast(serial, rays, ray_count, 0, want, NULL);
    for (context_case c = {0}; next_context_case(&c);) {
        vl_bvh* par = NULL;
        if (!c.ctx || refit_build(m, boxes, box_count, &par) != VL_OK) {
            CHECK(0, "%s: context and build", scene);
            continue;
        }
        long enqueued = c.toy.enqueued;
        test_alloc_hooks hooks;
        test_alloc_begin(&hooks);
        st = m ? vl_bvh_refit_triangles(par, moved_xyz, &(vl_exec){.context = c.ctx})
               : vl_bvh_refit_boxes(par, moved_boxes, &(vl_exec){.context = c.ctx});
        test_alloc_end(&hooks);
        CHECK(st == VL_OK && hooks.allocs == 0, "%s, %s x%u: refit (%ld allocations)", scene, k_sys_names[c.sys],
              c.workers, hooks.allocs);
        CHECK(same_tree(serial, par), "%s, %s x%u: the tree differs from the serial refit's", scene,
              k_sys_names[c.sys], c.workers);
        vl_bvh_raycast(par, rays, ray_count, 0, got, NULL);
        CHECK(memcmp(want, got, sizeof(vl_hit) * ray_count) == 0, "%s, %s x%u: rays answer otherwise", scene,
              k_sys_names[c.sys], c.workers);
        if (c.sys == SYS_TOY && c.workers > 1 && serial->depth > VL_PARALLEL_REFIT_DEPTH)
            CHECK(c.toy.enqueued > enqueued, "%s x%u: the refit made tasks", scene, c.workers);
        vl_bvh_destroy(par);
    }
    free(want);
    free(got);
    vl_bvh_destroy(serial);
}

/* Bad input: errors as the serial refit, the tree unchanged. */
static void check_refit_bad_input(const scene_mesh* m, float* moved_xyz) {
    vl_bvh *tree = NULL, *copy = NULL;
    CHECK(refit_build(m, NULL, 0, &tree) == VL_OK && refit_build(m, NULL, 0, &copy) == VL_OK, "refit: build");
    if (!tree || !copy) {
        vl_bvh_destroy(tree);
        vl_bvh_destroy(copy);
        return;
    }
    toy_system toy;
    vl_thread_pool* pool;
    vl_context* ctx = make_context(SYS_TOY, 3, &toy, &pool);
    CHECK(vl_bvh_refit_triangles(tree, moved_xyz, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "refit: context and scratch");
    CHECK(vl_bvh_refit_triangles(NULL, moved_xyz, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "refit: NULL tree");
    CHECK(vl_bvh_refit_triangles(tree, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "refit: NULL xyz");
    vl_aabb box = {{0, 0, 0}, {1, 1, 1}};
    CHECK(vl_bvh_refit_boxes(tree, &box, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "refit: boxes into triangles");
    const uint32_t last = 3 * m->vertex_count - 1;
    const float keep = moved_xyz[last];
    moved_xyz[last] = NAN;
    CHECK(vl_bvh_refit_triangles(tree, moved_xyz, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_GEOMETRY, "refit: NaN");
    moved_xyz[last] = INFINITY;
    CHECK(vl_bvh_refit_triangles(tree, moved_xyz, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_GEOMETRY, "refit: infinity");
    moved_xyz[last] = keep;
    CHECK(same_tree(tree, copy), "refit: bad input changed the tree");

    vl_bvh* bt = NULL;
    vl_aabb boxes[3] = {{{0, 0, 0}, {1, 1, 1}}, {{2, 2, 2}, {3, 3, 3}}, {{4, 4, 4}, {5, 5, 5}}};
    CHECK(vl_bvh_build_boxes(boxes, 3, NULL, &bt, NULL) == VL_OK, "refit: box build");
    CHECK(vl_bvh_refit_triangles(bt, moved_xyz, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT,
          "refit: triangles into boxes");
    boxes[1].min[2] = 4.0f; /* min > max */
    CHECK(vl_bvh_refit_boxes(bt, boxes, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_BOUNDS, "refit: inverted box");
    boxes[1].min[2] = NAN;
    CHECK(vl_bvh_refit_boxes(bt, boxes, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_BOUNDS, "refit: NaN box");
    CHECK(vl_bvh_validate(bt) == VL_OK && bt->boxes[0].max[0] != 4.0f, "refit: box tree unchanged");
    vl_bvh_destroy(bt);
    vl_context_destroy(ctx);
    vl_thread_pool_destroy(pool);
    vl_bvh_destroy(tree);
    vl_bvh_destroy(copy);
}

/* Vertices moved by a random step of up to `step` on each axis. */
static float* moved_vertices(const scene_mesh* m, float step, uint64_t seed) {
    float* xyz = malloc(sizeof(float) * 3 * (size_t)m->vertex_count);
    test_rng rng = {seed};
    for (size_t i = 0; i < 3 * (size_t)m->vertex_count; i++) xyz[i] = m->xyz[i] + test_float(&rng, -step, step);
    return xyz;
}

/* Boxes moved by a random step, some grown to a plane (infinite bounds), some to a point. */
static vl_aabb* moved_boxes(const vl_aabb* boxes, uint32_t n, uint64_t seed) {
    vl_aabb* out = malloc(sizeof(vl_aabb) * n);
    test_rng rng = {seed};
    for (uint32_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            float d = test_float(&rng, -4.0f, 4.0f);
            out[i].min[a] = boxes[i].min[a] + d, out[i].max[a] = boxes[i].max[a] + d;
        }
    if (n < 10) return out;
    out[5].min[0] = -INFINITY, out[5].max[2] = INFINITY;
    out[9].max[0] = out[9].min[0], out[9].max[1] = out[9].min[1], out[9].max[2] = out[9].min[2];
    return out;
}

static void check_refits(const scene_mesh* world, const scene_mesh* soup, const vl_ray* rays, uint32_t n) {
    float* moved = moved_vertices(world, 0.5f, 21);
    check_refit("world refit", world, moved, NULL, NULL, 0, rays, n);
    check_refit_bad_input(world, moved);
    free(moved);
    moved = moved_vertices(soup, 3.0f, 22);
    check_refit("soup refit", soup, moved, NULL, NULL, 0, rays, n);
    free(moved);
    /* boxes: enough for a deep tree, then a few (a tree shallower than the cut, a lone leaf) */
    const uint32_t counts[] = {20000, 40, 5};
    for (int c = 0; c < 3; c++) {
        uint32_t nb = counts[c];
        vl_aabb* boxes = malloc(sizeof(vl_aabb) * nb);
        make_boxes(boxes, nb, 31 + (uint64_t)c, 50.0f, 3.0f);
        vl_aabb* mb = moved_boxes(boxes, nb, 41 + (uint64_t)c);
        check_refit(c == 0 ? "box refit" : c == 1 ? "box refit, shallow" : "box refit, one leaf", NULL, NULL, boxes,
                    mb, nb, rays, n);
        free(boxes);
        free(mb);
    }
}

int main(void) {
    scene_mesh world, soup;
    context_scenes(&world, &soup, NULL, NULL);

    check_build("world", &world, NULL, 0, NULL);
    vl_bvh_desc d = vl_bvh_default_desc();
    d.max_leaf_size = 1;
    d.sah_bins = 7;
    check_build("soup, leaves of 1", &soup, NULL, 0, &d);
    /* boxes: scattered, then all equal (the top levels split by index) */
    uint32_t nb = 20000;
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * nb);
    make_boxes(boxes, nb, 9, 50.0f, 3.0f);
    boxes[17].min[1] = -INFINITY; /* a ground plane */
    boxes[17].max[0] = INFINITY;
    check_build("boxes", NULL, boxes, nb, NULL);
    for (uint32_t i = 0; i < nb; i++) boxes[i] = boxes[0];
    check_build("equal boxes", NULL, boxes, nb, NULL);
    free(boxes);

    check_build_out_of_memory(&world);
    check_build_bad_input();
    uint32_t n = context_ray_count() < 20000 ? context_ray_count() : 20000;
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    scene_rays_random(&world, n, 4, rays);
    check_refits(&world, &soup, rays, n);
    free(rays);
    context_scenes_free(&world, &soup, NULL, NULL);
    CHECK(vl_get_bytes_in_use() == 0, "leak: %zu bytes", vl_get_bytes_in_use());
    return test_finish("test_tree_context");
}
