/* The compiler features volley uses, in one place: forced inlining, prefetch, branch hints, bit
 * scans and the spin-wait hint. GCC and Clang (the compilers the build supports) have builtins for each; another compiler
 * gets portable fallbacks here and nowhere else. */
#ifndef VL_COMPILER_H
#define VL_COMPILER_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define VL_INLINE static inline __attribute__((always_inline))
#define VL_NOINLINE __attribute__((noinline))
#define VL_PREFETCH(p) __builtin_prefetch((p))
#define VL_PREFETCH_WRITE(p) __builtin_prefetch((p), 1)
#define VL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VL_TRAP() __builtin_trap()
#else
#define VL_INLINE static inline
#define VL_NOINLINE
#define VL_PREFETCH(p) ((void)(p))
#define VL_PREFETCH_WRITE(p) ((void)(p))
#define VL_UNLIKELY(x) (x)
#define VL_TRAP() (*(volatile int*)0 = 0)
#endif

/* A spinning thread's hint to the core that it waits (x86 pause, ARM yield). */
static inline void vl_cpu_pause(void) {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Index of the lowest set bit; x != 0. */
static inline uint32_t vl_ctz32(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_ctz(x);
#else
    uint32_t n = 0;
    while (!(x & 1u)) x >>= 1, n++;
    return n;
#endif
}

/* Leading zero bits; x != 0. */
static inline uint32_t vl_clz32(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_clz(x);
#else
    uint32_t n = 0;
    while (!(x & 0x80000000u)) x <<= 1, n++;
    return n;
#endif
}

/* Set bits. */
static inline uint32_t vl_popcount32(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_popcount(x);
#else
    uint32_t n = 0;
    for (; x; x &= x - 1) n++;
    return n;
#endif
}

#endif
