/* Fuzzes one-shot box pruning, complete and bipartite, against brute force on boxes from a
 * coarse grid (touching, identical, flat, huge and infinite boxes), with invalid boxes mixed in:
 * those must be refused with VL_ERR_INVALID_BOUNDS and the output left as it was. The scratch
 * form must give the allocating call's status and pairs, in the same order. Each input runs
 * twice: as drawn, and moved by a far offset of scenes.h (2^10 to 2^17 of either sign, chosen by
 * the input's last byte). */
#include "fuzz_util.h"
#include "scenes.h"

#define MAX_BOXES 96

static void check_pairs(vl_pair_buffer* got, uint32_t keep, vl_pair* want, uint32_t nwant, const char* what) {
    FUZZ_CHECK(got->count == keep + nwant, "%s: %u pairs, brute force %u", what, got->count - keep, nwant);
    if (!nwant) return;
    qsort(got->pairs + keep, nwant, sizeof(vl_pair), test_pair_cmp);
    qsort(want, nwant, sizeof(vl_pair), test_pair_cmp);
    for (uint32_t i = 0; i < nwant; i++)
        FUZZ_CHECK(got->pairs[keep + i].a == want[i].a && got->pairs[keep + i].b == want[i].b, "%s: pair %u", what, i);
}

/* The scratch form of the call just made (b NULL: complete) gives status s and the pairs of got
 * past `keep`, in the same order. */
static void check_scratch(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, vl_status s,
                          const vl_pair_buffer* got, uint32_t keep) {
    static _Alignas(64) unsigned char scratch[1u << 16];
    size_t bytes = b ? vl_box_prune_bipartite_scratch_size(na, nb) : vl_box_prune_scratch_size(na);
    FUZZ_CHECK(bytes <= sizeof scratch, "scratch size %zu", bytes);
    vl_pair_buffer out = {0};
    vl_status t = b ? vl_box_prune_bipartite(a, na, b, nb, &out, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes})
                    : vl_box_prune(a, na, &out, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
    FUZZ_CHECK(t == s, "scratch form: %s, allocating call %s", vl_status_string(t), vl_status_string(s));
    FUZZ_CHECK(out.count == got->count - keep, "scratch form: %u pairs, allocating call %u", out.count,
               got->count - keep);
    for (uint32_t i = 0; i < out.count; i++)
        FUZZ_CHECK(out.pairs[i].a == got->pairs[keep + i].a && out.pairs[i].b == got->pairs[keep + i].b,
                   "scratch form: pair %u differs", i);
    vl_pair_buffer_free(&out);
}

static void run(const uint8_t* data, size_t size, float offset) {
    size_t before = vl_get_bytes_in_use();
    fuzz_input in = {data, size, 0};
    static vl_aabb boxes[MAX_BOXES];
    static vl_pair want[MAX_BOXES * MAX_BOXES];
    uint32_t n = fuzz_byte(&in) % (MAX_BOXES + 1), split = n ? fuzz_byte(&in) % (n + 1) : 0;
    int valid = 1;
    for (uint32_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) {
            boxes[i].min[a] = fuzz_coord(&in);
            boxes[i].max[a] = fuzz_byte(&in) == 3 ? boxes[i].min[a] - 1.0f : boxes[i].min[a] + fabsf(fuzz_coord(&in));
        }
        scene_move_boxes(&boxes[i], 1, offset);
        valid &= test_box_valid(&boxes[i]);
    }
    vl_pair_buffer out = {0};
    /* a pair already in the buffer must stay: calls append */
    FUZZ_CHECK(vl_pair_buffer_reserve(&out, 1) == VL_OK, "reserve");
    out.pairs[out.count++] = (vl_pair){12345, 54321};

    vl_status s = vl_box_prune(boxes, n, &out, NULL);
    check_scratch(boxes, n, NULL, 0, s, &out, 1);
    if (!valid) {
        FUZZ_CHECK(s == VL_ERR_INVALID_BOUNDS && out.count == 1, "invalid boxes: %s", vl_status_string(s));
    } else {
        FUZZ_CHECK(s == VL_OK, "box_prune: %s", vl_status_string(s));
        uint32_t nwant = 0;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = i + 1; j < n; j++)
                if (test_box_overlap(&boxes[i], &boxes[j])) want[nwant++] = (vl_pair){i, j};
        check_pairs(&out, 1, want, nwant, "complete");
    }
    FUZZ_CHECK(out.pairs[0].a == 12345 && out.pairs[0].b == 54321, "earlier pair overwritten");

    out.count = 1;
    s = vl_box_prune_bipartite(boxes, split, boxes + split, n - split, &out, NULL);
    check_scratch(boxes, split, boxes + split, n - split, s, &out, 1);
    if (!valid) {
        FUZZ_CHECK(s == VL_ERR_INVALID_BOUNDS && out.count == 1, "invalid bipartite: %s", vl_status_string(s));
    } else {
        FUZZ_CHECK(s == VL_OK, "bipartite: %s", vl_status_string(s));
        uint32_t nwant = 0;
        for (uint32_t i = 0; i < split; i++)
            for (uint32_t j = split; j < n; j++)
                if (test_box_overlap(&boxes[i], &boxes[j])) want[nwant++] = (vl_pair){i, j - split};
        check_pairs(&out, 1, want, nwant, "bipartite");
    }
    vl_pair_buffer_free(&out);
    FUZZ_CHECK_NO_LEAK(before);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    run(data, size, 0.0f);
    run(data, size, fuzz_far_offset(data, size));
    return 0;
}
