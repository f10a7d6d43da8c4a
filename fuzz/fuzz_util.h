/* Shared by the fuzz targets: a reader over the fuzzer's bytes and a check that aborts, so that
 * libFuzzer (and the replay driver) report the input that broke an invariant. */
#ifndef VL_FUZZ_UTIL_H
#define VL_FUZZ_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <volley/volley.h>

#include "scenes.h"
#include "test_oracle.h"

#define FUZZ_CHECK(cond, ...)                                                         \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: fuzz check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
            abort();                                                                  \
        }                                                                             \
    } while (0)

typedef struct fuzz_input {
    const uint8_t* data;
    size_t size, at;
} fuzz_input;

static inline int fuzz_done(const fuzz_input* in) { return in->at >= in->size; }

/* The next byte, 0 once the input is used up. */
static inline uint8_t fuzz_byte(fuzz_input* in) { return in->at < in->size ? in->data[in->at++] : 0; }

static inline uint32_t fuzz_u32(fuzz_input* in) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v = v << 8 | fuzz_byte(in);
    return v;
}

/* A coordinate: mostly on a coarse grid (so that boxes touch, coincide and share faces exactly),
 * sometimes a special value (signed zeros, infinities, NaN, extremes) or any bit pattern. */
static inline float fuzz_coord(fuzz_input* in) {
    static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 3.4e38f, -3.4e38f, 1e-30f};
    uint8_t b = fuzz_byte(in);
    if (b < 224) return (float)((int)(b % 32) - 16) * 0.5f;
    if (b < 248) return special[(b - 224) % 10];
    uint32_t bits = fuzz_u32(in);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The head of a fuzzed BVH scene (fuzz_rays, fuzz_sweeps): a mode byte (bit 0: boxes rather
 * than triangles; the bits above: the leaf size, 1 to 8), then the primitive count, 1 to `max`.
 * Returns the build description with that leaf size. */
static inline vl_bvh_desc fuzz_bvh_head(fuzz_input* in, uint32_t max, int* boxes, uint32_t* count) {
    uint8_t mode = fuzz_byte(in);
    *boxes = mode & 1;
    *count = 1 + fuzz_byte(in) % max;
    vl_bvh_desc desc = vl_bvh_default_desc();
    desc.max_leaf_size = 1 + (mode >> 1) % 8;
    return desc;
}

/* A fuzzed tree's primitives as the sweeps' and closest points' targets draw them: `count`
 * triangles (9 floats each, finite and under 1e6, else 1) or boxes (any bound, NaN repaired, none
 * at +infinity), every coordinate moved by `off`. */
#define FUZZ_SCENE_MAX 32u
typedef struct fuzz_scene {
    int boxes;
    uint32_t count;
    float xyz[FUZZ_SCENE_MAX * 9];
    vl_aabb box[FUZZ_SCENE_MAX];
} fuzz_scene;

/* Draws s (fuzz_bvh_head, then the primitives) and builds its tree; stops the run if the build
 * refuses what was drawn as valid. */
static inline vl_bvh* fuzz_build_scene(fuzz_input* in, fuzz_scene* s, const float off[3]) {
    vl_bvh_desc desc = fuzz_bvh_head(in, FUZZ_SCENE_MAX, &s->boxes, &s->count);
    vl_bvh* bvh = NULL;
    if (s->boxes) {
        for (uint32_t i = 0; i < s->count; i++)
            for (int a = 0; a < 3; a++) {
                float lo = fuzz_coord(in), size = fabsf(fuzz_coord(in));
                if (isnan(lo) || isnan(size)) lo = 0.0f, size = 1.0f;
                if (lo == INFINITY) lo = -INFINITY; /* a box at +infinity is valid but useless */
                lo += off[a];
                s->box[i].min[a] = lo, s->box[i].max[a] = isnan(lo + size) ? INFINITY : lo + size;
            }
        FUZZ_CHECK(vl_bvh_build_boxes(s->box, s->count, &desc, &bvh, NULL) == VL_OK, "boxes refused");
    } else {
        uint32_t idx[FUZZ_SCENE_MAX * 3];
        for (uint32_t i = 0; i < s->count * 9; i++) {
            float x = fuzz_coord(in);
            s->xyz[i] = (isfinite(x) && fabsf(x) < 1e6f ? x : 1.0f) + off[i % 3];
        }
        for (uint32_t i = 0; i < s->count * 3; i++) idx[i] = i;
        FUZZ_CHECK(vl_bvh_build_triangles(s->xyz, s->count * 3, idx, s->count, &desc, &bvh, NULL) == VL_OK,
                   "tris refused");
    }
    return bvh;
}

/* The far offset (scenes.h: +-2^10, +-2^13, +-2^17, as the vector (o, o / 2, -o)) at which a
 * target runs each input a second time, after running it where its bytes put it, picked by the
 * input's last byte: every check also holds far from the origin, and the regressions replay. */
static inline float fuzz_far_offset(const uint8_t* data, size_t size) {
    return scene_offset(1 + (size ? data[size - 1] : 0) % (SCENE_OFFSET_COUNT - 1));
}

/* The end of a run: every byte the library took since `before` (vl_get_bytes_in_use) given back. */
#define FUZZ_CHECK_NO_LEAK(before) \
    FUZZ_CHECK(vl_get_bytes_in_use() == (before), "leaked %zu bytes", vl_get_bytes_in_use() - (before))

/* A target's LLVMFuzzerTestOneInput: `run` on the input with the offset vector `off` at the
 * origin, then again at the far offset (fuzz_far_offset, as the vector scene_offset_vector makes). */
static inline int fuzz_near_then_far(const uint8_t* data, size_t size, float off[3],
                                     void (*run)(const uint8_t* data, size_t size)) {
    scene_offset_vector(0.0f, off);
    run(data, size);
    scene_offset_vector(fuzz_far_offset(data, size), off);
    run(data, size);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#endif
