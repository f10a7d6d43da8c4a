/* Uses an installed volley: the headers, the library, the allocator counter, a broadphase and
 * box pruning on a context. */
#include <stdio.h>
#include <string.h>

#include <volley/volley.h>

int main(void) {
    if (vl_get_version() != VL_VERSION) return 1;
    vl_pair_buffer pairs = {0};
    if (vl_pair_buffer_reserve(&pairs, 64) != VL_OK || vl_get_bytes_in_use() == 0) return 2;
    vl_pair_buffer_free(&pairs);
    if (vl_get_bytes_in_use() != 0) return 3;
    if (strcmp(vl_status_string(VL_OK), "ok") != 0) return 4;
    /* a broadphase through the installed header: handles first, then boxes and count */
    vl_aabb boxes[2] = {{{0, 0, 0}, {1, 1, 1}}, {{0.5f, 0.5f, 0.5f}, {2, 2, 2}}};
    uint32_t handles[2];
    vl_broadphase* bp = NULL;
    if (vl_broadphase_create(NULL, &bp) != VL_OK || vl_broadphase_add(bp, handles, boxes, 2, 0) != VL_OK) return 5;
    if (vl_broadphase_commit(bp, &pairs, NULL) != VL_OK || pairs.count != 1) return 6;
    if (vl_broadphase_remove(bp, handles, 1) != VL_OK) return 6;
    vl_aabb box;
    if (vl_broadphase_get_box(bp, handles[0], &box) != VL_ERR_INVALID_HANDLE) return 7;
    vl_broadphase_destroy(bp);
    /* one-shot box pruning on a context that keeps its storage */
    vl_context* ctx = NULL;
    pairs.count = 0;
    if (vl_context_create(NULL, &ctx) != VL_OK ||
        vl_box_prune(boxes, 2, &pairs, &(vl_exec){.context = ctx}) != VL_OK || pairs.count != 1)
        return 8;
    vl_context_destroy(ctx);
    vl_pair_buffer_free(&pairs);
    if (vl_get_bytes_in_use() != 0) return 9;
    printf("volley %s (%s) works from an installed package\n", vl_get_version_string(), vl_get_simd_backend());
    return 0;
}
