/* Broadphase handles on every kind: a removed object's handle is refused (VL_ERR_INVALID_HANDLE)
 * by update, remove and get_box, before and after its index serves a new object, and nothing
 * changes; pairs name handles (lower, higher) and a removed object's deletions name its last
 * handle; the generation wraps after 256 owners of one index; sizes are checked before any array
 * is read; the first bad handle of a batch decides the error; a failed add changes no generation. */
#include <stdint.h>

#include <volley/volley.h>

#include "test_sap_scenes.h"
#include "test_util.h"

static const vl_broadphase_kind kinds[] = {VL_BROADPHASE_SAP, VL_BROADPHASE_BOX_PRUNING};
static const char* const kind_names[] = {"sap", "box_pruning"};
#define KIND_COUNT 2

static vl_broadphase* make(int kind, uint32_t flags) {
    vl_broadphase_desc desc = vl_broadphase_default_desc();
    desc.kind = kinds[kind];
    desc.flags = flags;
    vl_broadphase* bp = NULL;
    CHECK(vl_broadphase_create(&desc, &bp) == VL_OK, "create %s", kind_names[kind]);
    return bp;
}

/* A unit box from (x, 0, 0), at g_scene_offset (test_sap_scenes.h). */
static vl_aabb unit_box(float x) {
    vl_aabb b = {{x, 0, 0}, {x + 1, 1, 1}};
    scene_move_boxes(&b, 1, g_scene_offset);
    return b;
}

/* Commits and returns the number of created + deleted pairs. */
static uint32_t commit_changes(vl_broadphase* bp, vl_pair_buffer* c, vl_pair_buffer* d) {
    c->count = d->count = 0;
    CHECK(vl_broadphase_commit(bp, c, d) == VL_OK, "commit");
    return c->count + d->count;
}

static int has_pair(const vl_pair_buffer* b, uint32_t x, uint32_t y) {
    for (uint32_t i = 0; i < b->count; i++)
        if (b->pairs[i].a == x && b->pairs[i].b == y) return 1;
    return 0;
}

/* Every stale handle refused by update, remove and get_box (alone, and after a live one in a
 * batch), nothing changed: the same boxes, valid, and (when `quiet`: no change was pending) no pair
 * change at the next commit. nl >= 1. */
static void check_stale_refused(vl_broadphase* bp, const uint32_t* stale, uint32_t n, const uint32_t* live,
                                uint32_t nl, int quiet, const char* what) {
    vl_pair_buffer c = {0}, d = {0};
    vl_aabb before[8], got;
    for (uint32_t i = 0; i < nl; i++) CHECK(vl_broadphase_get_box(bp, live[i], &before[i]) == VL_OK, "%s: live", what);
    for (uint32_t i = 0; i < n; i++) {
        vl_aabb far = unit_box(500);
        /* alone, and after the live ones in a batch: refused as a whole */
        uint32_t batch[8];
        vl_aabb boxes[8];
        for (uint32_t k = 0; k + 1 < nl; k++) batch[k] = live[k], boxes[k] = far;
        batch[nl - 1] = stale[i];
        boxes[nl - 1] = far;
        CHECK(vl_broadphase_update(bp, &stale[i], boxes, 1) == VL_ERR_INVALID_HANDLE, "%s: update stale %u", what,
              stale[i]);
        CHECK(vl_broadphase_remove(bp, &stale[i], 1) == VL_ERR_INVALID_HANDLE, "%s: remove stale %u", what, stale[i]);
        CHECK(vl_broadphase_update(bp, batch, boxes, nl) == VL_ERR_INVALID_HANDLE, "%s: update batch with %u", what,
              stale[i]);
        CHECK(vl_broadphase_remove(bp, batch, nl) == VL_ERR_INVALID_HANDLE, "%s: remove batch with %u", what,
              stale[i]);
        CHECK(vl_broadphase_get_box(bp, stale[i], &got) == VL_ERR_INVALID_HANDLE, "%s: get_box stale %u", what,
              stale[i]);
    }
    for (uint32_t i = 0; i < nl; i++) {
        CHECK(vl_broadphase_get_box(bp, live[i], &got) == VL_OK && memcmp(&got, &before[i], sizeof got) == 0,
              "%s: a refused batch moved %u", what, live[i]);
    }
    CHECK(vl_broadphase_validate(bp) == VL_OK, "%s: validate", what);
    if (quiet) CHECK(commit_changes(bp, &c, &d) == 0, "%s: a refused batch changed pairs", what);
    vl_pair_buffer_free(&c);
    vl_pair_buffer_free(&d);
}

static void test_stale(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        vl_broadphase* bp = make(kind, 0);
        vl_pair_buffer c = {0}, d = {0};
        /* four boxes in a row, each touching the next */
        vl_aabb boxes[4] = {unit_box(0), unit_box(1), unit_box(2), unit_box(3)};
        uint32_t h[4];
        CHECK(vl_broadphase_add(bp, h, boxes, 4, 0) == VL_OK, "add");
        for (int i = 0; i < 4; i++) CHECK(VL_HANDLE_INDEX(h[i]) < 4, "index %u of a fresh broadphase", h[i]);
        commit_changes(bp, &c, &d);
        CHECK(c.count == 3 && has_pair(&c, h[0], h[1]) && has_pair(&c, h[1], h[2]) && has_pair(&c, h[2], h[3]),
              "%s: created as handles", kind_names[kind]);
        /* removed, not yet committed: stale already */
        uint32_t gone[2] = {h[1], h[3]};
        CHECK(vl_broadphase_remove(bp, gone, 2) == VL_OK, "remove");
        uint32_t live[2] = {h[0], h[2]};
        check_stale_refused(bp, gone, 2, live, 2, 0, "removed");
        CHECK(vl_broadphase_remove(bp, gone, 2) == VL_ERR_INVALID_HANDLE, "remove twice");
        commit_changes(bp, &c, &d);
        CHECK(d.count == 3 && has_pair(&d, h[0], h[1]) && has_pair(&d, h[1], h[2]) && has_pair(&d, h[2], h[3]),
              "%s: deletions name the removed handles", kind_names[kind]);
        /* re-added: the same indices, new generations; the old handles stay refused */
        uint32_t again[2];
        vl_aabb back[2] = {unit_box(1), unit_box(3)};
        CHECK(vl_broadphase_add(bp, again, back, 2, 0) == VL_OK, "re-add");
        for (int i = 0; i < 2; i++) {
            int reused = VL_HANDLE_INDEX(again[i]) == VL_HANDLE_INDEX(gone[0]) ||
                         VL_HANDLE_INDEX(again[i]) == VL_HANDLE_INDEX(gone[1]);
            CHECK(reused && again[i] != gone[0] && again[i] != gone[1], "%s: re-add gave %u (old %u %u)",
                  kind_names[kind], again[i], gone[0], gone[1]);
        }
        uint32_t live4[4] = {h[0], h[2], again[0], again[1]};
        check_stale_refused(bp, gone, 2, live4, 2, 0, "re-added, before commit");
        commit_changes(bp, &c, &d);
        check_stale_refused(bp, gone, 2, live4, 4, 1, "re-added");
        /* made-up handles: index past the objects, a generation never given */
        uint32_t made_up[3] = {4u << VL_HANDLE_GENERATION_BITS, h[0] + 1, 0xFFFFFFFFu};
        check_stale_refused(bp, made_up, 3, live4, 4, 1, "made up");
        vl_broadphase_destroy(bp);
        vl_pair_buffer_free(&c);
        vl_pair_buffer_free(&d);
    }
}

/* A removed object's deletions name its last handle, the re-added object's pairs its new one,
 * and vl_broadphase_get_pairs lists handles, (lower, higher). */
static void test_pairs_name_handles(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        vl_broadphase* bp = make(kind, 0);
        vl_pair_buffer c = {0}, d = {0};
        vl_aabb boxes[3] = {unit_box(0), unit_box(0.5f), unit_box(10)};
        uint32_t h[3], h2;
        CHECK(vl_broadphase_add(bp, h, boxes, 3, 0) == VL_OK, "add");
        commit_changes(bp, &c, &d);
        CHECK(vl_broadphase_remove(bp, &h[1], 1) == VL_OK, "remove");
        commit_changes(bp, &c, &d);
        CHECK(d.count == 1 && d.pairs[0].a == h[0] && d.pairs[0].b == h[1], "%s: deleted (%u, %u), expected (%u, %u)",
              kind_names[kind], d.count ? d.pairs[0].a : 0, d.count ? d.pairs[0].b : 0, h[0], h[1]);
        CHECK(vl_broadphase_add(bp, &h2, &boxes[1], 1, 0) == VL_OK, "re-add");
        CHECK(VL_HANDLE_INDEX(h2) == VL_HANDLE_INDEX(h[1]) && h2 != h[1], "%s: index reused with a new generation",
              kind_names[kind]);
        commit_changes(bp, &c, &d);
        CHECK(c.count == 1 && c.pairs[0].a == h[0] && c.pairs[0].b == h2, "%s: created names the new handle",
              kind_names[kind]);
        uint32_t n = 0;
        const vl_pair* pairs = vl_broadphase_get_pairs(bp, &n);
        CHECK(n == 1 && pairs[0].a == h[0] && pairs[0].b == h2, "%s: pairs as handles", kind_names[kind]);
        /* the same copy until a change */
        CHECK(vl_broadphase_get_pairs(bp, NULL) == pairs, "%s: the copy made again", kind_names[kind]);
        /* the removed handle's index now lower than a live one's: order by index, whatever the generation */
        CHECK(vl_broadphase_remove(bp, &h[0], 1) == VL_OK, "remove h0");
        commit_changes(bp, &c, &d);
        uint32_t h0b;
        CHECK(vl_broadphase_add(bp, &h0b, &boxes[0], 1, 0) == VL_OK && VL_HANDLE_INDEX(h0b) == VL_HANDLE_INDEX(h[0]),
              "re-add h0");
        commit_changes(bp, &c, &d);
        CHECK(c.count == 1 && c.pairs[0].a == h0b && c.pairs[0].b == h2 && h0b < h2, "%s: (lower, higher)",
              kind_names[kind]);
        vl_broadphase_destroy(bp);
        vl_pair_buffer_free(&c);
        vl_pair_buffer_free(&d);
    }
}

/* One index through 256 owners: every earlier handle is refused until the generation wraps, and
 * the 257th owner gets the first owner's handle back (the documented limit). */
static void test_wrap(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        vl_broadphase* bp = make(kind, 0);
        vl_pair_buffer c = {0}, d = {0};
        vl_aabb box = unit_box(0);
        uint32_t keep, h, first;
        CHECK(vl_broadphase_add(bp, &keep, &box, 1, 0) == VL_OK, "add");
        CHECK(vl_broadphase_add(bp, &first, &box, 1, 0) == VL_OK, "add");
        commit_changes(bp, &c, &d);
        h = first;
        uint32_t seen[256];
        for (int owner = 1; owner <= 256; owner++) {
            seen[owner - 1] = h;
            CHECK(vl_broadphase_remove(bp, &h, 1) == VL_OK, "remove owner %d", owner);
            commit_changes(bp, &c, &d);
            CHECK(d.count == 1 && d.pairs[0].a == keep && d.pairs[0].b == seen[owner - 1], "%s: deletion of owner %d",
                  kind_names[kind], owner);
            CHECK(vl_broadphase_add(bp, &h, &box, 1, 0) == VL_OK, "add owner %d", owner + 1);
            CHECK(VL_HANDLE_INDEX(h) == VL_HANDLE_INDEX(first), "%s: index not reused", kind_names[kind]);
            commit_changes(bp, &c, &d);
            CHECK(c.count == 1 && c.pairs[0].b == h, "%s: creation of owner %d", kind_names[kind], owner + 1);
            if (owner < 256) {
                CHECK(h != first, "%s: owner %d got the first handle back early", kind_names[kind], owner + 1);
                vl_aabb got;
                CHECK(vl_broadphase_get_box(bp, first, &got) == VL_ERR_INVALID_HANDLE &&
                          vl_broadphase_get_box(bp, seen[owner - 1], &got) == VL_ERR_INVALID_HANDLE,
                      "%s: stale handle accepted at owner %d", kind_names[kind], owner + 1);
            }
        }
        for (int i = 1; i < 256; i++) CHECK(seen[i] != seen[i - 1], "generation repeated");
        CHECK(h == first, "%s: the 257th owner has %u, the first had %u (the generation wraps after 256)",
              kind_names[kind], h, first);
        vl_aabb got;
        CHECK(vl_broadphase_get_box(bp, first, &got) == VL_OK, "wrapped handle names the new owner");
        CHECK(vl_broadphase_validate(bp) == VL_OK, "validate");
        vl_broadphase_destroy(bp);
        vl_pair_buffer_free(&c);
        vl_pair_buffer_free(&d);
    }
}

/* Sizes before contents: a count past the limit (add) or past the live objects (update, remove)
 * is refused without reading the short arrays given (ASan would see a read past them). */
static void test_sizes_first(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        vl_broadphase* bp = make(kind, 0);
        vl_aabb* one = malloc(sizeof *one);
        uint32_t* handles = malloc(2 * sizeof *handles);
        *one = unit_box(0);
        CHECK(vl_broadphase_add(bp, handles, one, 0x7FFFFFF1u, 0) == VL_ERR_TOO_LARGE, "add huge count");
        CHECK(vl_broadphase_add(bp, handles, one, VL_BROADPHASE_MAX_OBJECTS + 1, 0) == VL_ERR_TOO_LARGE,
              "add past the limit");
        CHECK(vl_broadphase_get_count(bp) == 0, "count");
        CHECK(vl_broadphase_add(bp, handles, one, 1, 0) == VL_OK, "add");
        CHECK(vl_broadphase_update(bp, handles, one, 2) == VL_ERR_TOO_LARGE, "update past the live objects");
        CHECK(vl_broadphase_remove(bp, handles, 0x7FFFFFF1u) == VL_ERR_TOO_LARGE, "remove past the live objects");
        CHECK(vl_broadphase_update(bp, NULL, one, 2) == VL_ERR_INVALID_ARGUMENT, "NULL before size");
        CHECK(vl_broadphase_add(bp, handles, one, 1, 8) == VL_ERR_INVALID_FLAGS, "flags before size");
        CHECK(vl_broadphase_get_count(bp) == 1 && vl_broadphase_validate(bp) == VL_OK, "unchanged");
        vl_broadphase_desc desc = vl_broadphase_default_desc();
        desc.expected_objects = VL_BROADPHASE_MAX_OBJECTS + 1;
        vl_broadphase* big = NULL;
        CHECK(vl_broadphase_create(&desc, &big) == VL_ERR_TOO_LARGE && !big, "expected objects past the limit");
        free(one);
        free(handles);
        vl_broadphase_destroy(bp);
    }
}

/* The first bad handle in batch order decides: a duplicate before an unknown handle is
 * VL_ERR_DUPLICATE_HANDLE, the other way round VL_ERR_INVALID_HANDLE; handle errors come before
 * bounds errors. */
static void test_error_order(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        vl_broadphase* bp = make(kind, 0);
        vl_aabb boxes[4] = {unit_box(0), unit_box(5), unit_box(9), unit_box(20)};
        uint32_t h[4];
        CHECK(vl_broadphase_add(bp, h, boxes, 4, 0) == VL_OK, "add");
        uint32_t bad = 0xFFFFFF00u;
        uint32_t dup_first[4] = {h[0], h[0], bad, h[1]}, bad_first[4] = {h[0], bad, h[1], h[1]};
        CHECK(vl_broadphase_update(bp, dup_first, boxes, 4) == VL_ERR_DUPLICATE_HANDLE, "duplicate first");
        CHECK(vl_broadphase_remove(bp, dup_first, 4) == VL_ERR_DUPLICATE_HANDLE, "duplicate first");
        CHECK(vl_broadphase_update(bp, bad_first, boxes, 4) == VL_ERR_INVALID_HANDLE, "unknown first");
        CHECK(vl_broadphase_remove(bp, bad_first, 4) == VL_ERR_INVALID_HANDLE, "unknown first");
        vl_aabb inverted[4] = {boxes[0], boxes[1], boxes[2], boxes[3]};
        inverted[0].min[0] = inverted[0].max[0] + 6; /* min > max */
        CHECK(vl_broadphase_update(bp, bad_first, inverted, 4) == VL_ERR_INVALID_HANDLE, "handles before bounds");
        CHECK(vl_broadphase_update(bp, h, inverted, 4) == VL_ERR_INVALID_BOUNDS, "bounds");
        CHECK(vl_broadphase_get_count(bp) == 4 && vl_broadphase_validate(bp) == VL_OK, "unchanged");
        vl_broadphase_destroy(bp);
    }
}

/* An add that fails for memory changes no generation: the handles given afterwards are those a
 * broadphase without the failure gives. */
static void test_failed_add_keeps_generations(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        test_alloc_hooks hooks;
        test_alloc_begin(&hooks);
        vl_broadphase* bp[2] = {make(kind, 0), make(kind, 0)};
        vl_pair_buffer c = {0}, d = {0};
        vl_aabb boxes[64];
        test_rng r = {5};
        for (int i = 0; i < 64; i++) boxes[i] = scene_box(&r, SCENE_CLUSTERED);
        uint32_t h[2][64], again[2][64];
        for (int k = 0; k < 2; k++) {
            CHECK(vl_broadphase_add(bp[k], h[k], boxes, 64, 0) == VL_OK, "add");
            commit_changes(bp[k], &c, &d);
            CHECK(vl_broadphase_remove(bp[k], h[k], 40) == VL_OK, "remove");
            commit_changes(bp[k], &c, &d);
        }
        int failures = 0;
        for (long budget = 0;; budget++) {
            hooks.budget = budget;
            vl_status s = vl_broadphase_add(bp[0], again[0], boxes, 50, 0);
            hooks.budget = -1;
            if (s == VL_OK) break;
            CHECK(s == VL_ERR_OUT_OF_MEMORY, "add: %s", vl_status_string(s));
            failures++;
        }
        CHECK(vl_broadphase_add(bp[1], again[1], boxes, 50, 0) == VL_OK, "add");
        for (int i = 0; i < 50; i++)
            CHECK(again[0][i] == again[1][i], "%s: handle %d is %u, %u without the %d failed adds", kind_names[kind], i,
                  again[0][i], again[1][i], failures);
        CHECK(failures > 0, "%s: no failure exercised", kind_names[kind]);
        vl_broadphase_destroy(bp[0]);
        vl_broadphase_destroy(bp[1]);
        vl_pair_buffer_free(&c);
        vl_pair_buffer_free(&d);
        test_alloc_end(&hooks);
        CHECK(hooks.bytes == 0, "leak %zu", hooks.bytes);
    }
}

/* Pair user data by handles: stale handles name no pair. */
static void test_user_data(void) {
    vl_broadphase* bp = make(0, VL_BROADPHASE_PAIR_USER_DATA);
    vl_pair_buffer c = {0}, d = {0};
    vl_aabb boxes[3] = {unit_box(0), unit_box(0.5f), unit_box(0.7f)};
    uint32_t h[3], h1b;
    int tag = 0;
    CHECK(vl_broadphase_add(bp, h, boxes, 3, 0) == VL_OK, "add");
    commit_changes(bp, &c, &d);
    CHECK(vl_broadphase_set_pair_user_data(bp, h[1], h[0], &tag) == VL_OK, "set");
    CHECK(vl_broadphase_get_pair_user_data(bp, h[0], h[1]) == &tag, "get");
    CHECK(vl_broadphase_remove(bp, &h[1], 1) == VL_OK, "remove");
    commit_changes(bp, &c, &d);
    CHECK(vl_broadphase_add(bp, &h1b, &boxes[1], 1, 0) == VL_OK && VL_HANDLE_INDEX(h1b) == VL_HANDLE_INDEX(h[1]),
          "re-add");
    commit_changes(bp, &c, &d);
    CHECK(vl_broadphase_get_pair_user_data(bp, h[0], h1b) == NULL, "a new pair starts with NULL");
    CHECK(vl_broadphase_get_pair_user_data(bp, h[0], h[1]) == NULL, "stale handle names a pair");
    CHECK(vl_broadphase_set_pair_user_data(bp, h[0], h[1], &tag) == VL_ERR_INVALID_ARGUMENT, "set by stale handle");
    CHECK(vl_broadphase_get_pair_user_data(bp, h[0], h1b) == NULL, "set by a stale handle reached the new pair");
    vl_broadphase_destroy(bp);
    vl_pair_buffer_free(&c);
    vl_pair_buffer_free(&d);
}

int main(void) {
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) { /* the boxes at every offset of scenes.h */
        g_scene_offset = scene_offset(k);
        test_stale();
        test_pairs_name_handles();
        test_wrap();
        test_sizes_first();
        test_error_order();
        test_failed_add_keeps_generations();
        test_user_data();
    }
    g_scene_offset = 0.0f;
    return test_finish("test_broadphase_handles");
}
