/* The ray-box and box-box kernels of tests/box_kernels.h (the library's slab kernels at the
 * batch width) behind a plain C interface, plus the scalar path they are measured against. */
#include "kernel_shim.h"

#include <stdlib.h>

#include "core/alloc.h"
#include "../tests/box_kernels.h"
#include "../tests/test_rng.h"

struct kernel_scene {
    uint32_t box_count, ray_count, any_parallel;
    test_boxes_soa boxes;
    test_rays_soa rays;
    test_ray_prep* preps;
    vl_aabb* aabbs;
    float* tnear;  /* scratch: max(box_count, ray_count) rounded up to 8 */
    uint32_t* ids; /* scratch: box_count */
    float* storage;
    size_t storage_bytes;
};

kernel_scene* kernel_scene_create(uint32_t box_count, uint32_t ray_count, int parallel_rays) {
    kernel_scene* s = calloc(1, sizeof *s);
    if (!s) return NULL;
    uint32_t nb = test_round_up8(box_count), nr = test_round_up8(ray_count), nt = nb > nr ? nb : nr;
    s->box_count = box_count;
    s->ray_count = ray_count;
    s->storage_bytes = sizeof(float) * (6u * nb + 8u * nr + nt);
    s->storage = vl_mem_alloc(s->storage_bytes);
    s->preps = calloc(ray_count, sizeof(test_ray_prep));
    s->aabbs = calloc(box_count, sizeof(vl_aabb));
    s->ids = calloc(box_count, sizeof(uint32_t));
    if (!s->storage || !s->preps || !s->aabbs || !s->ids) {
        kernel_scene_destroy(s);
        return NULL;
    }
    float* f = s->storage;
    for (int a = 0; a < 3; a++) s->boxes.min[a] = f, f += nb;
    for (int a = 0; a < 3; a++) s->boxes.max[a] = f, f += nb;
    for (int a = 0; a < 3; a++) s->rays.origin[a] = f, f += nr;
    for (int a = 0; a < 3; a++) s->rays.inv_dir[a] = f, f += nr;
    s->rays.tmin = f, f += nr;
    s->rays.tmax = f, f += nr;
    s->tnear = f;
    test_rng seed = {1234};
    for (uint32_t i = 0; i < box_count; i++) {
        for (int a = 0; a < 3; a++) {
            float c = test_float(&seed, -10, 10), h = test_float(&seed, 0.1f, 2.0f);
            s->aabbs[i].min[a] = s->boxes.min[a][i] = c - h;
            s->aabbs[i].max[a] = s->boxes.max[a][i] = c + h;
        }
    }
    for (uint32_t i = 0; i < ray_count; i++) {
        vl_ray ray = {{test_float(&seed, -12, 12), test_float(&seed, -12, 12), test_float(&seed, -12, 12)},
                      0,
                      {test_float(&seed, -1, 1), test_float(&seed, -1, 1), test_float(&seed, -1, 1)},
                      test_float(&seed, 5, 30)};
        if (parallel_rays) ray.dir[i % 3] = 0.0f;
        s->preps[i] = test_ray_prepare(&ray);
        s->any_parallel |= s->preps[i].parallel;
        for (int a = 0; a < 3; a++) {
            s->rays.origin[a][i] = s->preps[i].origin[a];
            s->rays.inv_dir[a][i] = s->preps[i].inv_dir[a];
        }
        s->rays.tmin[i] = s->preps[i].tmin;
        s->rays.tmax[i] = s->preps[i].tmax;
    }
    return s;
}

void kernel_scene_destroy(kernel_scene* s) {
    if (!s) return;
    vl_mem_free(s->storage, s->storage_bytes);
    free(s->preps);
    free(s->aabbs);
    free(s->ids);
    free(s);
}

int kernel_simd_width(void) { return (int)simd_kernel_width(); }

uint64_t kernel_scene_tests(const kernel_scene* s) { return (uint64_t)s->box_count * s->ray_count; }

/* The scalar path: the same slab arithmetic, one ray and one box at a time, with early outs. */
static int scalar_slab(const test_ray_prep* r, const vl_aabb* b) {
    float tn = r->tmin, tf = r->tmax;
    for (int a = 0; a < 3; a++) {
        if (r->parallel & (1u << a)) {
            if (r->origin[a] < b->min[a] || r->origin[a] > b->max[a]) return 0;
            continue;
        }
        float t1 = (b->min[a] - r->origin[a]) * r->inv_dir[a];
        float t2 = (b->max[a] - r->origin[a]) * r->inv_dir[a];
        tn = t1 < t2 ? (t1 > tn ? t1 : tn) : (t2 > tn ? t2 : tn);
        tf = t1 < t2 ? (t2 < tf ? t2 : tf) : (t1 < tf ? t1 : tf);
        if (tn > tf) return 0;
    }
    return tn <= tf;
}

static int scalar_overlap(const vl_aabb* a, const vl_aabb* b) {
    return a->min[0] <= b->max[0] && b->min[0] <= a->max[0] && a->min[1] <= b->max[1] && b->min[1] <= a->max[1] &&
           a->min[2] <= b->max[2] && b->min[2] <= a->max[2];
}

uint64_t kernel_ray_vs_boxes(const kernel_scene* s, int width) {
    uint64_t hits = 0;
    for (uint32_t r = 0; r < s->ray_count; r++) {
        if (width > 1) {
            hits += simd_ray_vs_boxes(&s->preps[r], &s->boxes, s->box_count, s->tnear);
        } else {
            for (uint32_t b = 0; b < s->box_count; b++) hits += (uint64_t)scalar_slab(&s->preps[r], &s->aabbs[b]);
        }
    }
    return hits;
}

uint64_t kernel_rays_vs_box(const kernel_scene* s, int width) {
    uint64_t hits = 0;
    for (uint32_t b = 0; b < s->box_count; b++) {
        if (width > 1) {
            hits += simd_rays_vs_box(&s->rays, s->ray_count, s->any_parallel != 0, &s->aabbs[b], s->tnear);
        } else {
            for (uint32_t r = 0; r < s->ray_count; r++) hits += (uint64_t)scalar_slab(&s->preps[r], &s->aabbs[b]);
        }
    }
    return hits;
}

uint64_t kernel_box_vs_boxes(const kernel_scene* s, int width) {
    uint64_t hits = 0;
    for (uint32_t q = 0; q < s->box_count; q++) {
        if (width > 1) {
            hits += simd_box_vs_boxes(&s->aabbs[q], &s->boxes, s->box_count, s->ids);
        } else {
            for (uint32_t b = 0; b < s->box_count; b++) hits += (uint64_t)scalar_overlap(&s->aabbs[q], &s->aabbs[b]);
        }
    }
    return hits;
}
