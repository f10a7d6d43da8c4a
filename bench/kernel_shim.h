/* C shim between the C++ benchmarks and the ray-box and box-box kernels (tests/box_kernels.h). */
#ifndef VL_BENCH_KERNEL_SHIM_H
#define VL_BENCH_KERNEL_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kernel_scene kernel_scene;

/* Random boxes and rays in SoA form; with `parallel_rays`, every ray has an axis-parallel
 * direction component, which forces the exact parallel-axis kernel. NULL on allocation failure. */
kernel_scene* kernel_scene_create(uint32_t box_count, uint32_t ray_count, int parallel_rays);
void kernel_scene_destroy(kernel_scene* scene);
uint64_t kernel_scene_tests(const kernel_scene* scene); /* ray-box tests in one pass */

/* Lanes of the SIMD kernels (the library's batch width: 8 with AVX2, else 4). */
int kernel_simd_width(void);

/* One pass: every ray against every box; width 1 is the scalar path, any other the SIMD kernels.
 * Returns the number of hits, which must not depend on the width. */
uint64_t kernel_ray_vs_boxes(const kernel_scene* scene, int width); /* one ray, SIMD across boxes */
uint64_t kernel_rays_vs_box(const kernel_scene* scene, int width);  /* one box, SIMD across rays */
/* Every box against every box (box_count squared tests); returns overlaps. */
uint64_t kernel_box_vs_boxes(const kernel_scene* scene, int width);

#ifdef __cplusplus
}
#endif

#endif
