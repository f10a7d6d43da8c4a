/* Pair manager: open hashing with chains threaded through a parallel `next` array, so that the
 * pairs themselves stay contiguous; a deletion moves the last pair into the hole. */
#include "broadphase/pair_manager.h"

#include <string.h>

static inline uint32_t pm_hash(uint32_t a, uint32_t b) {
    uint32_t h = a * 0x9E3779B1u ^ (b * 0x85EBCA77u + 0x165667B1u);
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    return h ^ (h >> 13);
}

void vl_pm_init(vl_pair_manager* pm, int with_user) {
    memset(pm, 0, sizeof *pm);
    pm->with_user = with_user;
}

static void pm_free_arrays(vl_pair* pairs, uint32_t* next, uint8_t* flags, void** user, vl_pair* touched,
                           uint32_t cap, uint32_t* table, uint32_t buckets) {
    vl_mem_free(pairs, (size_t)cap * sizeof *pairs);
    vl_mem_free(next, (size_t)cap * sizeof *next);
    vl_mem_free(flags, (size_t)cap);
    vl_mem_free(user, (size_t)cap * sizeof *user);
    vl_mem_free(touched, (size_t)cap * sizeof *touched);
    vl_mem_free(table, (size_t)buckets * sizeof *table);
}

void vl_pm_free(vl_pair_manager* pm) {
    if (pm->capacity)
        pm_free_arrays(pm->pairs, pm->next, pm->flags, pm->user, pm->touched, pm->capacity, pm->table,
                       pm->table_mask + 1);
    vl_pm_init(pm, pm->with_user);
}

vl_status vl_pm_reserve(vl_pair_manager* pm, uint64_t extra) {
    uint64_t needed = (uint64_t)pm->count + extra;
    if (needed <= pm->capacity) return VL_OK;
    if (needed > 0x40000000u) return VL_ERR_TOO_LARGE;
    uint32_t cap = pm->capacity ? pm->capacity : 64;
    while (cap < needed) cap *= 2;
    uint32_t buckets = cap; /* load factor at most 1 */
    vl_pair* pairs = vl_mem_alloc((size_t)cap * sizeof *pairs);
    uint32_t* next = vl_mem_alloc((size_t)cap * sizeof *next);
    uint8_t* flags = vl_mem_alloc(cap);
    void** user = pm->with_user ? vl_mem_alloc((size_t)cap * sizeof *user) : NULL;
    vl_pair* touched = vl_mem_alloc((size_t)cap * sizeof *touched);
    uint32_t* table = vl_mem_alloc((size_t)buckets * sizeof *table);
    if (!pairs || !next || !flags || (pm->with_user && !user) || !touched || !table) {
        pm_free_arrays(pairs, next, flags, user, touched, cap, table, buckets);
        return VL_ERR_OUT_OF_MEMORY;
    }
    if (pm->count) {
        memcpy(pairs, pm->pairs, (size_t)pm->count * sizeof *pairs);
        memcpy(flags, pm->flags, pm->count);
        if (user) memcpy(user, pm->user, (size_t)pm->count * sizeof *user);
    }
    if (pm->touched_count) memcpy(touched, pm->touched, (size_t)pm->touched_count * sizeof *touched);
    memset(table, 0xFF, (size_t)buckets * sizeof *table);
    for (uint32_t i = 0; i < pm->count; i++) {
        uint32_t h = pm_hash(pairs[i].a, pairs[i].b) & (buckets - 1);
        next[i] = table[h];
        table[h] = i;
    }
    if (pm->capacity)
        pm_free_arrays(pm->pairs, pm->next, pm->flags, pm->user, pm->touched, pm->capacity, pm->table,
                       pm->table_mask + 1);
    pm->pairs = pairs;
    pm->next = next;
    pm->flags = flags;
    pm->user = user;
    pm->touched = touched;
    pm->table = table;
    pm->capacity = cap;
    pm->table_mask = buckets - 1;
    return VL_OK;
}

static inline uint32_t pm_find_ordered(const vl_pair_manager* pm, uint32_t a, uint32_t b) {
    if (!pm->capacity) return VL_PM_NONE;
    uint32_t i = pm->table[pm_hash(a, b) & pm->table_mask];
    while (i != VL_PM_NONE && (pm->pairs[i].a != a || pm->pairs[i].b != b)) i = pm->next[i];
    return i;
}

uint32_t vl_pm_find(const vl_pair_manager* pm, uint32_t a, uint32_t b) {
    return a < b ? pm_find_ordered(pm, a, b) : pm_find_ordered(pm, b, a);
}

static inline void pm_touch(vl_pair_manager* pm, uint32_t i) {
    if (!(pm->flags[i] & VL_PM_TOUCHED)) {
        pm->flags[i] |= VL_PM_TOUCHED;
        pm->touched[pm->touched_count++] = pm->pairs[i];
    }
}

vl_status vl_pm_add(vl_pair_manager* pm, uint32_t a, uint32_t b) {
    if (a > b) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    uint32_t i = pm_find_ordered(pm, a, b);
    if (i != VL_PM_NONE) {
        pm->flags[i] &= (uint8_t)~VL_PM_REMOVED;
        return VL_OK;
    }
    if (pm->count == pm->capacity) {
        vl_status s = vl_pm_reserve(pm, 1);
        if (s != VL_OK) return s;
    }
    i = pm->count++;
    uint32_t h = pm_hash(a, b) & pm->table_mask;
    pm->pairs[i] = (vl_pair){a, b};
    pm->next[i] = pm->table[h];
    pm->table[h] = i;
    pm->flags[i] = VL_PM_NEW;
    if (pm->user) pm->user[i] = NULL;
    pm_touch(pm, i);
    return VL_OK;
}

static inline void pm_flag_removed(vl_pair_manager* pm, uint32_t i) {
    if (!(pm->flags[i] & VL_PM_REMOVED)) {
        pm->flags[i] |= VL_PM_REMOVED;
        pm_touch(pm, i);
    }
}

void vl_pm_remove(vl_pair_manager* pm, uint32_t a, uint32_t b) {
    uint32_t i = vl_pm_find(pm, a, b);
    if (i != VL_PM_NONE) pm_flag_removed(pm, i);
}

void vl_pm_remove_at(vl_pair_manager* pm, uint32_t i) { pm_flag_removed(pm, i); }

void vl_pm_remove_owners(vl_pair_manager* pm, const uint8_t* owner_flags, uint8_t mask) {
    for (uint32_t i = 0; i < pm->count; i++)
        if ((owner_flags[pm->pairs[i].a] | owner_flags[pm->pairs[i].b]) & mask) pm_flag_removed(pm, i);
}

/* Unlinks pair i from its chain and moves the last pair into its place. */
static void pm_delete(vl_pair_manager* pm, uint32_t i) {
    uint32_t* link = &pm->table[pm_hash(pm->pairs[i].a, pm->pairs[i].b) & pm->table_mask];
    while (*link != i) link = &pm->next[*link];
    *link = pm->next[i];
    uint32_t last = --pm->count;
    if (i == last) return;
    link = &pm->table[pm_hash(pm->pairs[last].a, pm->pairs[last].b) & pm->table_mask];
    while (*link != last) link = &pm->next[*link];
    *link = i;
    pm->pairs[i] = pm->pairs[last];
    pm->next[i] = pm->next[last];
    pm->flags[i] = pm->flags[last];
    if (pm->user) pm->user[i] = pm->user[last];
}

vl_status vl_pm_commit(vl_pair_manager* pm, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    uint32_t n = pm->touched_count;
    if (created && vl_pair_buffer_reserve(created, created->count + n) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
    if (deleted && vl_pair_buffer_reserve(deleted, deleted->count + n) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
    for (uint32_t t = 0; t < n; t++) {
        vl_pair p = pm->touched[t];
        uint32_t i = pm_find_ordered(pm, p.a, p.b);
        uint8_t f = pm->flags[i];
        if (f & VL_PM_REMOVED) {
            if (!(f & VL_PM_NEW) && deleted) deleted->pairs[deleted->count++] = p;
            pm_delete(pm, i);
        } else {
            if ((f & VL_PM_NEW) && created) created->pairs[created->count++] = p;
            pm->flags[i] = 0;
        }
    }
    pm->touched_count = 0;
    return VL_OK;
}

void** vl_pm_user(const vl_pair_manager* pm, uint32_t a, uint32_t b) {
    uint32_t i = vl_pm_find(pm, a, b);
    return (i == VL_PM_NONE || !pm->user) ? NULL : &pm->user[i];
}

uint32_t vl_pm_committed(const vl_pair_manager* pm, vl_pair* out) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < pm->count; i++)
        if (!(pm->flags[i] & VL_PM_NEW)) out[n++] = pm->pairs[i];
    return n;
}

uint32_t vl_pm_live_count(const vl_pair_manager* pm) {
    uint32_t live = pm->count;
    for (uint32_t t = 0; t < pm->touched_count; t++) {
        uint32_t i = pm_find_ordered(pm, pm->touched[t].a, pm->touched[t].b);
        if (i != VL_PM_NONE && (pm->flags[i] & VL_PM_REMOVED)) live--;
    }
    return live;
}

vl_status vl_pm_validate(const vl_pair_manager* pm) {
    if (pm->count > pm->capacity || pm->touched_count > pm->count) return VL_ERR_INVALID_ARGUMENT;
    uint32_t flagged = 0;
    for (uint32_t i = 0; i < pm->count; i++) {
        vl_pair p = pm->pairs[i];
        if (p.a >= p.b) return VL_ERR_INVALID_ARGUMENT;
        if (pm_find_ordered(pm, p.a, p.b) != i) return VL_ERR_INVALID_ARGUMENT;
        uint8_t f = pm->flags[i];
        if (f & ~(VL_PM_NEW | VL_PM_REMOVED | VL_PM_TOUCHED)) return VL_ERR_INVALID_ARGUMENT;
        if (f && !(f & VL_PM_TOUCHED)) return VL_ERR_INVALID_ARGUMENT;
        flagged += (f & VL_PM_TOUCHED) != 0;
    }
    if (flagged != pm->touched_count) return VL_ERR_INVALID_ARGUMENT;
    for (uint32_t t = 0; t < pm->touched_count; t++) {
        uint32_t i = pm_find_ordered(pm, pm->touched[t].a, pm->touched[t].b);
        if (i == VL_PM_NONE || !(pm->flags[i] & VL_PM_TOUCHED)) return VL_ERR_INVALID_ARGUMENT;
    }
    /* every chain ends, and the chains together hold exactly count pairs */
    if (pm->capacity) {
        uint64_t seen = 0;
        for (uint32_t h = 0; h <= pm->table_mask; h++)
            for (uint32_t i = pm->table[h]; i != VL_PM_NONE; i = pm->next[i]) {
                if (i >= pm->count || (pm_hash(pm->pairs[i].a, pm->pairs[i].b) & pm->table_mask) != h ||
                    ++seen > pm->count)
                    return VL_ERR_INVALID_ARGUMENT;
            }
        if (seen != pm->count) return VL_ERR_INVALID_ARGUMENT;
    }
    return VL_OK;
}
