/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The little the engine needs from its surroundings, for both builds: the
 * kernel module (Kbuild) and userspace (unit tests, fuzzer). No libc calls:
 * memory comes from the backend, and copies use compiler builtins.
 */
#ifndef _PFM_OS_H
#define _PFM_OS_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#include <linux/overflow.h>
#include <linux/nospec.h>
#include <linux/math64.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <linux/types.h>
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
#endif

/*
 * Sizes computed from a limit or from guest input, overflow-checked: they
 * saturate at SIZE_MAX, which pfm_zalloc() refuses (the kernel's
 * size_mul/size_add, which array_size/struct_size are made of).
 */
#ifdef __KERNEL__
#define pfm_size_mul(a, b)		size_mul(a, b)
#define pfm_size_add(a, b)		size_add(a, b)
#else
static inline size_t pfm_size_mul(size_t a, size_t b)
{
	size_t r;

	return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

static inline size_t pfm_size_add(size_t a, size_t b)
{
	size_t r;

	return __builtin_add_overflow(a, b, &r) ? SIZE_MAX : r;
}
#endif

/* 64-bit division, which 32-bit kernels have only as a call */
#ifdef __KERNEL__
#define pfm_div64(a, b)			div64_u64(a, b)
#else
#define pfm_div64(a, b)			((a) / (b))
#endif

/*
 * A guest-chosen index, after its bounds check, before it is used for a
 * load: @idx if @idx < @size, else 0, also under speculation (Spectre v1).
 * In the kernel array_index_nospec(); in userspace the same branch-free
 * mask, kept opaque to the compiler so that it stays branch-free.
 */
#ifdef __KERNEL__
#define pfm_index_nospec(idx, size)	array_index_nospec(idx, size)
#else
static inline unsigned long pfm_index_mask_nospec(unsigned long idx,
						  unsigned long size)
{
	__asm__ ("" : "+r" (idx));
	return ~(long)(idx | (size - 1UL - idx)) >> (sizeof(long) * 8 - 1);
}

#define pfm_index_nospec(idx, size) ({				\
	__typeof__(idx) pfm_i_ = (idx);					\
	(__typeof__(pfm_i_))(pfm_i_ & pfm_index_mask_nospec(pfm_i_, (size))); \
})
#endif

#define pfm_memcpy(d, s, n)	__builtin_memcpy((d), (s), (n))
#define pfm_memset(d, c, n)	__builtin_memset((d), (c), (n))
#define pfm_memcmp(a, b, n)	__builtin_memcmp((a), (b), (n))

#define PFM_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* bits set in @v (no libgcc helper: the kernel has none) */
static inline unsigned int pfm_popcount64(u64 v)
{
	v = v - ((v >> 1) & 0x5555555555555555ULL);
	v = (v & 0x3333333333333333ULL) + ((v >> 2) & 0x3333333333333333ULL);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (v * 0x0101010101010101ULL) >> 56;
}

/* bitmaps of registers: u64 words, bit n of word n / 64 */
static inline bool pfm_bit_test(const u64 *bv, unsigned int n)
{
	return (bv[n / 64] >> (n % 64)) & 1;
}

static inline void pfm_bit_set(u64 *bv, unsigned int n)
{
	bv[n / 64] |= 1ULL << (n % 64);
}

static inline void pfm_bit_clear(u64 *bv, unsigned int n)
{
	bv[n / 64] &= ~(1ULL << (n % 64));
}

/* true if every bit of @a is also in @b */
static inline bool pfm_bv_subset(const u64 *a, const u64 *b, unsigned int words)
{
	unsigned int i;

	for (i = 0; i < words; i++)
		if (a[i] & ~b[i])
			return false;
	return true;
}

static inline bool pfm_bv_empty(const u64 *a, unsigned int words)
{
	unsigned int i;

	for (i = 0; i < words; i++)
		if (a[i])
			return false;
	return true;
}

/* next set bit at or after @n, or @max */
static inline unsigned int pfm_bit_next(const u64 *bv, unsigned int n,
					unsigned int max)
{
	for (; n < max; n++) {
		if (!(n % 64) && !bv[n / 64]) {
			n += 63;
			continue;
		}
		if (pfm_bit_test(bv, n))
			return n;
	}
	return max;
}

#define pfm_for_each_bit(n, bv, max) \
	for ((n) = pfm_bit_next((bv), 0, (max)); (n) < (max); \
	     (n) = pfm_bit_next((bv), (n) + 1, (max)))

#endif /* _PFM_OS_H */
