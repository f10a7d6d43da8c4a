/* Uses an installed volley: the headers, the library, the allocator counter. */
#include <stdio.h>
#include <string.h>

#include <volley/volley.h>

int main(void) {
    if (vl_version() != VL_VERSION) return 1;
    vl_pair_buffer pairs = {0};
    if (vl_pair_buffer_reserve(&pairs, 64) != VL_OK || vl_bytes_in_use() == 0) return 2;
    vl_pair_buffer_free(&pairs);
    if (vl_bytes_in_use() != 0) return 3;
    if (strcmp(vl_status_string(VL_OK), "ok") != 0) return 4;
    printf("volley %s (%s) works from an installed package\n", vl_version_string(), vl_simd_backend());
    return 0;
}
