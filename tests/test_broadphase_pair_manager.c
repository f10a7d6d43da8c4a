/* Pair manager (white box) against a plain set: random adds, removes and commits; created and
 * deleted lists equal the set differences; user data follows its pair; failing allocations. */
#include <stdint.h>

#include "broadphase/pair_manager.h"
#include "test_sap_scenes.h"
#include "test_util.h"

enum { DOMAIN = 96 };

static uint8_t g_live[DOMAIN][DOMAIN], g_committed[DOMAIN][DOMAIN];

static void* pair_user_value(uint32_t a, uint32_t b) { return (void*)(uintptr_t)(a * 1000u + b + 1u); }

static void check_commit(vl_pair_manager* pm, int with_user) {
    vl_pair_buffer created = {0}, deleted = {0};
    CHECK(vl_pm_commit(pm, &created, &deleted) == VL_OK, "commit");
    CHECK(vl_pm_validate(pm) == VL_OK, "validate after commit");
    pair_list want_c = {0}, want_d = {0}, got = {0};
    uint32_t live = 0;
    for (uint32_t a = 0; a < DOMAIN; a++)
        for (uint32_t b = a + 1; b < DOMAIN; b++) {
            if (g_live[a][b] && !g_committed[a][b]) pair_list_push(&want_c, a, b);
            if (!g_live[a][b] && g_committed[a][b]) pair_list_push(&want_d, a, b);
            live += g_live[a][b];
            g_committed[a][b] = g_live[a][b];
        }
    pair_list_copy(&got, created.pairs, created.count);
    CHECK(pair_list_equal(got.p, got.n, want_c.p, want_c.n), "created %u, expected %u", got.n, want_c.n);
    pair_list_copy(&got, deleted.pairs, deleted.count);
    CHECK(pair_list_equal(got.p, got.n, want_d.p, want_d.n), "deleted %u, expected %u", got.n, want_d.n);
    CHECK(pm->count == live, "%u pairs, expected %u", pm->count, live);
    for (uint32_t i = 0; i < pm->count; i++) {
        vl_pair p = pm->pairs[i];
        CHECK(p.a < p.b && g_live[p.a][p.b], "stray pair %u %u", p.a, p.b);
        if (with_user) {
            void** slot = vl_pm_user(pm, p.a, p.b);
            CHECK(slot && (*slot == NULL || *slot == pair_user_value(p.a, p.b)), "user data of %u %u", p.a, p.b);
            if (slot) *slot = pair_user_value(p.a, p.b);
        }
    }
    free(want_c.p), free(want_d.p), free(got.p);
    vl_pair_buffer_free(&created);
    vl_pair_buffer_free(&deleted);
}

static void test_random(int with_user, uint64_t seed) {
    memset(g_live, 0, sizeof g_live);
    memset(g_committed, 0, sizeof g_committed);
    vl_pair_manager pm;
    vl_pm_init(&pm, with_user);
    test_rng r = {seed};
    uint32_t steps = test_scaled(60000);
    for (uint32_t step = 0; step < steps; step++) {
        uint32_t op = test_u32(&r, 100);
        uint32_t a = test_u32(&r, DOMAIN), b = test_u32(&r, DOMAIN);
        if (a == b) continue;
        uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
        if (op < 45) {
            CHECK(vl_pm_add(&pm, a, b) == VL_OK, "add");
            g_live[lo][hi] = 1;
        } else if (op < 90) {
            vl_pm_remove(&pm, a, b);
            g_live[lo][hi] = 0;
        } else if (op < 92) {
            check_commit(&pm, with_user);
        } else {
            uint32_t i = vl_pm_find(&pm, a, b);
            CHECK((i != VL_PM_NONE) == (g_live[lo][hi] || g_committed[lo][hi]), "find %u %u", a, b);
        }
        if (step % 64 == 0) {
            uint32_t live = 0;
            for (uint32_t x = 0; x < DOMAIN; x++)
                for (uint32_t y = x + 1; y < DOMAIN; y++) live += g_live[x][y];
            CHECK(vl_pm_live_count(&pm) == live, "live %u, expected %u", vl_pm_live_count(&pm), live);
            CHECK(vl_pm_validate(&pm) == VL_OK, "validate at step %u", step);
        }
    }
    check_commit(&pm, with_user);
    /* removing owners by flag */
    uint8_t owner_flags[DOMAIN] = {0};
    for (uint32_t x = 0; x < DOMAIN; x += 3) owner_flags[x] = 4;
    vl_pm_remove_owners(&pm, owner_flags, 4);
    for (uint32_t x = 0; x < DOMAIN; x++)
        for (uint32_t y = x + 1; y < DOMAIN; y++)
            if (owner_flags[x] || owner_flags[y]) g_live[x][y] = 0;
    check_commit(&pm, with_user);
    check_commit(&pm, with_user); /* an empty period reports nothing */
    vl_pm_free(&pm);
    CHECK(pm.count == 0 && pm.capacity == 0, "free");
}

static void test_failing_allocator(void) {
    size_t before = vl_get_bytes_in_use();
    test_alloc_hooks h;
    test_alloc_begin(&h);
    vl_pair_manager pm;
    vl_pm_init(&pm, 1);
    int failures = 0;
    for (uint32_t i = 0; i < 3000; i++) {
        uint32_t a = i % 97, b = 97 + i / 97;
        for (long budget = 0;; budget++) {
            uint32_t count = pm.count, cap = pm.capacity;
            h.budget = budget;
            vl_status s = vl_pm_add(&pm, a, b);
            h.budget = -1;
            if (s == VL_OK) break;
            failures++;
            CHECK(s == VL_ERR_OUT_OF_MEMORY, "add: %s", vl_status_string(s));
            CHECK(pm.count == count && pm.capacity == cap && vl_pm_find(&pm, a, b) == VL_PM_NONE,
                  "failed add changed pm");
            CHECK(vl_pm_validate(&pm) == VL_OK, "validate after failed add");
        }
    }
    CHECK(failures > 5, "only %d failures", failures);
    vl_pair_buffer created = {0};
    h.budget = 0;
    CHECK(vl_pm_commit(&pm, &created, NULL) == VL_ERR_OUT_OF_MEMORY, "commit with no memory");
    h.budget = -1;
    CHECK(created.count == 0 && pm.touched_count == 3000 && vl_pm_validate(&pm) == VL_OK, "failed commit changed pm");
    CHECK(vl_pm_commit(&pm, &created, NULL) == VL_OK && created.count == 3000, "commit %u", created.count);
    vl_pair_buffer_free(&created);
    vl_pm_free(&pm);
    test_alloc_end(&h);
    CHECK(vl_get_bytes_in_use() == before, "leak %zu", vl_get_bytes_in_use() - before);
}

int main(void) {
    test_random(0, 1);
    test_random(1, 2);
    test_failing_allocator();
    return test_finish("test_broadphase_pair_manager");
}
