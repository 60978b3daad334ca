/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Golden tests: the hashing and the file formats are pinned by known
 * answers and by frozen files, not only by round trips through the
 * current writer (issue 13, item 1). A change to the bucket, fingerprint
 * or alternate-bucket functions, to the table's bit layout, to the
 * semi-sorted code or to the blocklist's keying and seed fails here even
 * though every round trip still passes. See docs/golden.md for the rule
 * a deliberate change follows, and tests/unit/data/make_golden.c for how
 * the numbers and files below were made (it is not run: they are frozen).
 *
 * Only the public API is used (cuckoo_filter.h, blocklist.h): positions
 * from cf_add_with_hash(), fingerprints read from cf_save_mem() output at
 * the documented offsets.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "blocklist.h"
#include "cuckoo_filter.h"
#include "test.h"

#ifndef GOLDEN_DATA
#error "GOLDEN_DATA: the directory of the frozen files"
#endif

/* lib/cuckoo's file header (docs/design.md). */
#define HEADER_SIZE 96
#define OFF_VERSION 8
#define OFF_CHECKSUM 88
/* lib/cflow's compiled blocklist header (blocklist.c, struct bl_header). */
#define BL_HEADER_SIZE 224
#define BL_OFF_VERSION 8
#define BL_OFF_CHECKSUM 216

/* ------------------------------------------------- known answers */

static const uint64_t kat_hash[16] = {
	UINT64_C(0x0000000000000000), UINT64_C(0xffffffffffffffff),
	UINT64_C(0x00000000ffffffff), UINT64_C(0xffffffff00000000),
	UINT64_C(0x8000000080000000), UINT64_C(0x0123456789abcdef),
	UINT64_C(0xfedcba9876543210), UINT64_C(0x9e3779b97f4a7c15),
	UINT64_C(0x00000001fffffffe), UINT64_C(0x7fffffff00000001),
	UINT64_C(0xe220a8397b1dcdaf), UINT64_C(0x6e789e6aa1b965f4),
	UINT64_C(0x06c45d188009454f), UINT64_C(0xf88bb8a8724c81ec),
	UINT64_C(0x1b39896a51a8749b), UINT64_C(0x53cb9f0c747ea2ea),
};

/* Capacity of every known-answer table. */
#define KAT_CAPACITY 1000

/* Fingerprint of kat_hash[k] for f = 4..32: independent of the table. */
static const uint32_t kat_fp[29][16] = {
	{ /* f = 4 */
		0x1, 0xf, 0xf, 0x1, 0x8, 0x9,
		0x7, 0x8, 0xf, 0x1, 0x8, 0xa,
		0x8, 0x7, 0x5, 0x7,
	},
	{ /* f = 5 */
		0x1, 0x1f, 0x1f, 0x1, 0x10, 0x11,
		0xf, 0x10, 0x1f, 0x1, 0xf, 0x14,
		0x10, 0xe, 0xa, 0xf,
	},
	{ /* f = 6 */
		0x1, 0x3f, 0x3f, 0x1, 0x20, 0x22,
		0x1e, 0x20, 0x3f, 0x1, 0x1f, 0x28,
		0x20, 0x1d, 0x15, 0x1d,
	},
	{ /* f = 7 */
		0x1, 0x7f, 0x7f, 0x1, 0x40, 0x45,
		0x3b, 0x40, 0x7f, 0x1, 0x3e, 0x51,
		0x40, 0x39, 0x29, 0x3a,
	},
	{ /* f = 8 */
		0x1, 0xff, 0xff, 0x1, 0x80, 0x8a,
		0x76, 0x7f, 0xff, 0x1, 0x7b, 0xa2,
		0x80, 0x72, 0x52, 0x75,
	},
	{ /* f = 9 */
		0x1, 0x1ff, 0x1ff, 0x1, 0x100, 0x113,
		0xed, 0xff, 0x1ff, 0x1, 0xf6, 0x143,
		0x100, 0xe5, 0xa3, 0xe9,
	},
	{ /* f = 10 */
		0x1, 0x3ff, 0x3ff, 0x1, 0x200, 0x227,
		0x1d9, 0x1fd, 0x3ff, 0x1, 0x1ec, 0x287,
		0x200, 0x1c9, 0x147, 0x1d2,
	},
	{ /* f = 11 */
		0x1, 0x7ff, 0x7ff, 0x1, 0x400, 0x44d,
		0x3b3, 0x3fa, 0x7ff, 0x1, 0x3d9, 0x50e,
		0x400, 0x392, 0x28d, 0x3a4,
	},
	{ /* f = 12 */
		0x1, 0xfff, 0xfff, 0x1, 0x800, 0x89b,
		0x765, 0x7f5, 0xfff, 0x1, 0x7b2, 0xa1b,
		0x801, 0x725, 0x51b, 0x748,
	},
	{ /* f = 13 */
		0x1, 0x1fff, 0x1fff, 0x1, 0x1000, 0x1135,
		0xecb, 0xfe9, 0x1fff, 0x1, 0xf64, 0x1437,
		0x1001, 0xe4a, 0xa35, 0xe90,
	},
	{ /* f = 14 */
		0x1, 0x3fff, 0x3fff, 0x1, 0x2000, 0x226b,
		0x1d95, 0x1fd3, 0x3fff, 0x1, 0x1ec7, 0x286e,
		0x2002, 0x1c93, 0x146a, 0x1d20,
	},
	{ /* f = 15 */
		0x1, 0x7fff, 0x7fff, 0x1, 0x4000, 0x44d6,
		0x3b2a, 0x3fa5, 0x7fff, 0x1, 0x3d8f, 0x50dd,
		0x4005, 0x3926, 0x28d4, 0x3a3f,
	},
	{ /* f = 16 */
		0x1, 0xffff, 0xffff, 0x1, 0x8000, 0x89ac,
		0x7654, 0x7f4a, 0xffff, 0x1, 0x7b1e, 0xa1b9,
		0x8009, 0x724d, 0x51a9, 0x747f,
	},
	{ /* f = 17 */
		0x1, 0x1ffff, 0x1ffff, 0x1, 0x10000, 0x11358,
		0xeca8, 0xfe95, 0x1ffff, 0x1, 0xf63c, 0x14373,
		0x10013, 0xe499, 0xa351, 0xe8fd,
	},
	{ /* f = 18 */
		0x1, 0x3ffff, 0x3ffff, 0x1, 0x20000, 0x226af,
		0x1d951, 0x1fd2a, 0x3ffff, 0x1, 0x1ec77, 0x286e5,
		0x20025, 0x1c932, 0x146a2, 0x1d1fb,
	},
	{ /* f = 19 */
		0x1, 0x7ffff, 0x7ffff, 0x1, 0x40000, 0x44d5e,
		0x3b2a2, 0x3fa54, 0x7ffff, 0x1, 0x3d8ee, 0x50dcb,
		0x4004a, 0x39264, 0x28d44, 0x3a3f5,
	},
	{ /* f = 20 */
		0x1, 0xfffff, 0xfffff, 0x1, 0x80000, 0x89abd,
		0x76543, 0x7f4a8, 0xfffff, 0x1, 0x7b1dd, 0xa1b96,
		0x80094, 0x724c8, 0x51a87, 0x747ea,
	},
	{ /* f = 21 */
		0x1, 0x1fffff, 0x1fffff, 0x1, 0x100000, 0x11357a,
		0xeca86, 0xfe950, 0x1fffff, 0x1, 0xf63ba, 0x14372d,
		0x100129, 0xe4990, 0xa350f, 0xe8fd4,
	},
	{ /* f = 22 */
		0x1, 0x3fffff, 0x3fffff, 0x1, 0x200000, 0x226af3,
		0x1d950d, 0x1fd29f, 0x3fffff, 0x1, 0x1ec773, 0x286e59,
		0x200251, 0x1c9321, 0x146a1d, 0x1d1fa9,
	},
	{ /* f = 23 */
		0x1, 0x7fffff, 0x7fffff, 0x1, 0x400000, 0x44d5e7,
		0x3b2a19, 0x3fa53e, 0x7fffff, 0x1, 0x3d8ee7, 0x50dcb3,
		0x4004a3, 0x392641, 0x28d43a, 0x3a3f52,
	},
	{ /* f = 24 */
		0x1, 0xffffff, 0xffffff, 0x1, 0x800000, 0x89abce,
		0x765432, 0x7f4a7c, 0xffffff, 0x1, 0x7b1dce, 0xa1b966,
		0x800945, 0x724c82, 0x51a875, 0x747ea3,
	},
	{ /* f = 25 */
		0x1, 0x1ffffff, 0x1ffffff, 0x1, 0x1000000, 0x113579c,
		0xeca864, 0xfe94f8, 0x1ffffff, 0x1, 0xf63b9b, 0x14372cc,
		0x100128b, 0xe49904, 0xa350e9, 0xe8fd46,
	},
	{ /* f = 26 */
		0x1, 0x3ffffff, 0x3ffffff, 0x1, 0x2000000, 0x226af38,
		0x1d950c8, 0x1fd29f0, 0x3ffffff, 0x1, 0x1ec7737, 0x286e598,
		0x2002515, 0x1c93208, 0x146a1d3, 0x1d1fa8c,
	},
	{ /* f = 27 */
		0x1, 0x7ffffff, 0x7ffffff, 0x1, 0x4000000, 0x44d5e6f,
		0x3b2a191, 0x3fa53e1, 0x7ffffff, 0x1, 0x3d8ee6d, 0x50dcb2f,
		0x4004a2a, 0x392640f, 0x28d43a5, 0x3a3f517,
	},
	{ /* f = 28 */
		0x1, 0xfffffff, 0xfffffff, 0x1, 0x8000000, 0x89abcdf,
		0x7654321, 0x7f4a7c1, 0xfffffff, 0x1, 0x7b1dcdb, 0xa1b965f,
		0x8009455, 0x724c81f, 0x51a874a, 0x747ea2f,
	},
	{ /* f = 29 */
		0x1, 0x1fffffff, 0x1fffffff, 0x1, 0x10000000, 0x113579be,
		0xeca8642, 0xfe94f83, 0x1fffffff, 0x1, 0xf63b9b6, 0x14372cbe,
		0x100128aa, 0xe49903e, 0xa350e94, 0xe8fd45d,
	},
	{ /* f = 30 */
		0x1, 0x3fffffff, 0x3fffffff, 0x1, 0x20000000, 0x226af37c,
		0x1d950c84, 0x1fd29f05, 0x3fffffff, 0x1, 0x1ec7736c, 0x286e597d,
		0x20025154, 0x1c93207b, 0x146a1d27, 0x1d1fa8bb,
	},
	{ /* f = 31 */
		0x1, 0x7fffffff, 0x7fffffff, 0x1, 0x40000000, 0x44d5e6f7,
		0x3b2a1908, 0x3fa53e0b, 0x7fffffff, 0x1, 0x3d8ee6d8, 0x50dcb2fa,
		0x4004a2a7, 0x392640f6, 0x28d43a4e, 0x3a3f5175,
	},
	{ /* f = 32 */
		0x1, 0xffffffff, 0xffffffff, 0x1, 0x80000000, 0x89abcdef,
		0x76543210, 0x7f4a7c15, 0xfffffffe, 0x1, 0x7b1dcdaf, 0xa1b965f4,
		0x8009454f, 0x724c81ec, 0x51a8749b, 0x747ea2ea,
	},
};

/*
 * Bucket (i1) and, for f = 4..32, alternate bucket (i2) of each
 * kat_hash[k], in a table of KAT_CAPACITY items at each bucket size,
 * power of two and exact size.
 */
struct kat_table {
	unsigned int slots;
	bool exact;
	uint64_t buckets;
	uint32_t i1[16];
	uint32_t i2[29][16];
};

static const struct kat_table kat_tables[] = {
	{ .slots = 4, .exact = false, .buckets = 512,
	  .i1 = {
		0, 511, 0, 511, 0, 359, 152, 441,
		1, 511, 57, 106, 280, 168, 362, 268,
	  },
	  .i2 = {
		{ 441, 33, 478, 70, 459, 226, 138, 114,
		 479, 70, 498, 340, 211, 186, 501, 286, }, /* f = 4 */
		{ 441, 137, 374, 70, 407, 54, 326, 46,
		 375, 70, 487, 23, 143, 140, 84, 210, }, /* f = 5 */
		{ 441, 345, 166, 70, 303, 453, 292, 150,
		 167, 70, 335, 145, 55, 171, 349, 271, }, /* f = 6 */
		{ 441, 249, 262, 70, 95, 408, 344, 486,
		 263, 70, 213, 475, 327, 229, 479, 266, }, /* f = 7 */
		{ 441, 58, 453, 70, 191, 153, 280, 191,
		 452, 70, 25, 264, 423, 50, 0, 203, }, /* f = 8 */
		{ 441, 186, 325, 70, 383, 292, 34, 124,
		 324, 70, 121, 353, 103, 70, 118, 216, }, /* f = 9 */
		{ 441, 444, 67, 70, 254, 295, 292, 107,
		 66, 70, 185, 442, 486, 140, 155, 165, }, /* f = 10 */
		{ 441, 447, 64, 70, 509, 431, 425, 29,
		 65, 70, 131, 459, 229, 224, 323, 95, }, /* f = 11 */
		{ 441, 452, 59, 70, 506, 45, 50, 184,
		 58, 70, 332, 483, 171, 226, 358, 426, }, /* f = 12 */
		{ 441, 464, 47, 70, 500, 444, 406, 499,
		 46, 70, 210, 166, 182, 60, 266, 65, }, /* f = 13 */
		{ 441, 486, 25, 70, 489, 23, 250, 500,
		 24, 70, 37, 498, 68, 472, 426, 407, }, /* f = 14 */
		{ 441, 20, 491, 70, 466, 391, 93, 347,
		 490, 70, 459, 128, 362, 72, 235, 113, }, /* f = 15 */
		{ 441, 111, 400, 70, 421, 167, 274, 125,
		 401, 70, 476, 112, 50, 466, 465, 447, }, /* f = 16 */
		{ 441, 292, 219, 70, 330, 231, 396, 251,
		 218, 70, 498, 389, 278, 403, 215, 162, }, /* f = 17 */
		{ 441, 143, 368, 70, 148, 47, 377, 316,
		 369, 70, 484, 78, 380, 222, 17, 26, }, /* f = 18 */
		{ 441, 357, 154, 70, 297, 503, 347, 178,
		 155, 70, 387, 105, 464, 69, 412, 382, }, /* f = 19 */
		{ 441, 273, 238, 70, 83, 446, 342, 430,
		 239, 70, 279, 108, 137, 371, 350, 489, }, /* f = 20 */
		{ 441, 105, 406, 70, 167, 212, 260, 406,
		 407, 70, 100, 428, 452, 286, 331, 198, }, /* f = 21 */
		{ 441, 282, 229, 70, 335, 202, 105, 287,
		 228, 70, 312, 440, 231, 398, 483, 67, }, /* f = 22 */
		{ 441, 123, 388, 70, 159, 116, 178, 245,
		 389, 70, 389, 308, 160, 60, 121, 402, }, /* f = 23 */
		{ 441, 317, 194, 70, 318, 320, 204, 289,
		 195, 70, 320, 215, 174, 384, 139, 142, }, /* f = 24 */
		{ 441, 193, 318, 70, 124, 296, 48, 136,
		 319, 70, 256, 273, 63, 248, 355, 9, }, /* f = 25 */
		{ 441, 457, 54, 70, 248, 505, 457, 475,
		 55, 70, 21, 156, 397, 8, 161, 263, }, /* f = 26 */
		{ 441, 472, 39, 70, 496, 228, 197, 454,
		 38, 70, 166, 89, 50, 302, 180, 337, }, /* f = 27 */
		{ 441, 504, 7, 70, 480, 472, 409, 252,
		 6, 70, 193, 117, 278, 110, 214, 377, }, /* f = 28 */
		{ 441, 54, 457, 70, 449, 24, 154, 509,
		 456, 70, 457, 85, 261, 293, 18, 61, }, /* f = 29 */
		{ 441, 180, 331, 70, 386, 408, 157, 374,
		 330, 70, 472, 82, 291, 457, 92, 272, }, /* f = 30 */
		{ 441, 430, 81, 70, 261, 290, 147, 238,
		 80, 70, 507, 27, 422, 106, 263, 371, }, /* f = 31 */
		{ 441, 420, 91, 70, 10, 291, 142, 332,
		 163, 70, 499, 136, 46, 300, 75, 498, }, /* f = 32 */
	  },
	},
	{ .slots = 4, .exact = true, .buckets = 261,
	  .i1 = {
		0, 260, 0, 260, 130, 1, 259, 161,
		0, 130, 230, 112, 6, 253, 27, 85,
	  },
	  .i2 = {
		{ 161, 71, 70, 162, 116, 145, 87, 85,
		 70, 31, 16, 196, 240, 93, 257, 0, }, /* f = 4 */
		{ 161, 42, 41, 162, 101, 131, 72, 70,
		 41, 31, 101, 243, 225, 178, 20, 246, }, /* f = 5 */
		{ 161, 245, 244, 162, 72, 2, 143, 41,
		 244, 31, 72, 76, 196, 248, 228, 155, }, /* f = 6 */
		{ 161, 128, 127, 162, 14, 167, 123, 244,
		 127, 31, 114, 164, 138, 67, 61, 135, }, /* f = 7 */
		{ 161, 157, 156, 162, 159, 74, 244, 227,
		 156, 31, 35, 180, 22, 126, 150, 256, }, /* f = 8 */
		{ 161, 213, 212, 162, 187, 249, 125, 256,
		 212, 31, 40, 51, 50, 146, 166, 176, }, /* f = 9 */
		{ 161, 65, 64, 162, 244, 139, 88, 251,
		 64, 31, 49, 114, 107, 123, 259, 177, }, /* f = 10 */
		{ 161, 31, 30, 162, 96, 117, 74, 141,
		 30, 31, 230, 80, 220, 238, 123, 178, }, /* f = 11 */
		{ 161, 222, 221, 162, 61, 137, 246, 83,
		 221, 31, 168, 110, 85, 108, 174, 180, }, /* f = 12 */
		{ 161, 83, 82, 162, 252, 113, 131, 165,
		 82, 31, 45, 234, 16, 208, 213, 184, }, /* f = 13 */
		{ 161, 66, 65, 162, 113, 128, 98, 132,
		 65, 31, 158, 58, 38, 247, 193, 192, }, /* f = 14 */
		{ 161, 32, 31, 162, 96, 258, 195, 2,
		 31, 31, 186, 128, 244, 226, 153, 46, }, /* f = 15 */
		{ 161, 224, 223, 162, 62, 257, 128, 166,
		 223, 31, 81, 207, 72, 84, 234, 78, }, /* f = 16 */
		{ 161, 87, 86, 162, 255, 254, 255, 133,
		 86, 31, 132, 166, 50, 260, 72, 81, }, /* f = 17 */
		{ 161, 75, 74, 162, 118, 88, 148, 167,
		 74, 31, 73, 23, 207, 251, 172, 147, }, /* f = 18 */
		{ 161, 49, 48, 162, 105, 177, 33, 234,
		 48, 31, 116, 59, 160, 234, 111, 219, }, /* f = 19 */
		{ 161, 259, 258, 162, 79, 255, 164, 108,
		 258, 31, 101, 230, 65, 200, 89, 2, }, /* f = 20 */
		{ 161, 156, 155, 162, 28, 251, 66, 117,
		 155, 31, 171, 211, 36, 131, 106, 89, }, /* f = 21 */
		{ 161, 213, 212, 162, 187, 82, 31, 234,
		 212, 31, 151, 112, 179, 155, 78, 164, }, /* f = 22 */
		{ 161, 64, 63, 162, 243, 65, 160, 107,
		 63, 31, 172, 238, 3, 141, 183, 152, }, /* f = 23 */
		{ 161, 28, 27, 162, 95, 132, 57, 115,
		 27, 31, 52, 66, 113, 13, 33, 228, }, /* f = 24 */
		{ 161, 217, 216, 162, 59, 5, 112, 130,
		 216, 31, 174, 244, 132, 18, 192, 19, }, /* f = 25 */
		{ 161, 74, 73, 162, 248, 12, 223, 161,
		 73, 31, 218, 78, 110, 28, 52, 124, }, /* f = 26 */
		{ 161, 47, 46, 162, 104, 124, 84, 123,
		 46, 31, 244, 107, 226, 147, 230, 172, }, /* f = 27 */
		{ 161, 255, 254, 162, 77, 151, 4, 246,
		 254, 31, 98, 227, 98, 187, 227, 68, }, /* f = 28 */
		{ 161, 149, 148, 162, 24, 42, 7, 31,
		 148, 31, 165, 45, 203, 106, 220, 60, }, /* f = 29 */
		{ 161, 198, 197, 162, 179, 85, 12, 63,
		 197, 31, 38, 104, 152, 43, 46, 105, }, /* f = 30 */
		{ 161, 35, 34, 162, 228, 11, 23, 188,
		 34, 31, 45, 59, 148, 79, 119, 135, }, /* f = 31 */
		{ 161, 230, 229, 162, 65, 184, 45, 115,
		 68, 31, 160, 230, 204, 151, 105, 95, }, /* f = 32 */
	  },
	},
	{ .slots = 2, .exact = false, .buckets = 1024,
	  .i1 = {
		0, 1023, 0, 1023, 0, 359, 664, 441,
		1, 1023, 57, 618, 280, 168, 362, 780,
	  },
	  .i2 = {
		{ 441, 545, 478, 582, 459, 738, 650, 114,
		 479, 582, 498, 852, 211, 186, 501, 798, }, /* f = 4 */
		{ 441, 649, 374, 582, 919, 54, 838, 558,
		 375, 582, 487, 23, 655, 140, 84, 722, }, /* f = 5 */
		{ 441, 857, 166, 582, 815, 965, 292, 662,
		 167, 582, 335, 657, 567, 683, 349, 271, }, /* f = 6 */
		{ 441, 249, 774, 582, 607, 920, 856, 998,
		 775, 582, 725, 475, 839, 741, 991, 778, }, /* f = 7 */
		{ 441, 58, 965, 582, 191, 153, 280, 703,
		 964, 582, 25, 264, 423, 50, 0, 715, }, /* f = 8 */
		{ 441, 698, 325, 582, 383, 804, 546, 636,
		 324, 582, 121, 865, 103, 582, 118, 728, }, /* f = 9 */
		{ 441, 956, 67, 582, 766, 807, 292, 107,
		 66, 582, 185, 442, 998, 140, 667, 165, }, /* f = 10 */
		{ 441, 447, 576, 582, 509, 943, 937, 541,
		 577, 582, 643, 459, 229, 224, 835, 95, }, /* f = 11 */
		{ 441, 452, 571, 582, 1018, 557, 562, 184,
		 570, 582, 332, 995, 171, 738, 870, 426, }, /* f = 12 */
		{ 441, 464, 559, 582, 1012, 444, 406, 499,
		 558, 582, 722, 678, 182, 60, 778, 577, }, /* f = 13 */
		{ 441, 486, 537, 582, 1001, 535, 762, 1012,
		 536, 582, 37, 1010, 580, 984, 426, 407, }, /* f = 14 */
		{ 441, 532, 491, 582, 978, 903, 605, 859,
		 490, 582, 459, 640, 362, 584, 235, 113, }, /* f = 15 */
		{ 441, 623, 400, 582, 933, 167, 786, 125,
		 401, 582, 988, 624, 562, 978, 465, 959, }, /* f = 16 */
		{ 441, 804, 219, 582, 842, 743, 396, 251,
		 218, 582, 1010, 901, 278, 403, 727, 162, }, /* f = 17 */
		{ 441, 143, 880, 582, 660, 47, 377, 828,
		 881, 582, 484, 78, 892, 734, 529, 538, }, /* f = 18 */
		{ 441, 869, 154, 582, 297, 1015, 347, 178,
		 155, 582, 899, 105, 464, 69, 924, 894, }, /* f = 19 */
		{ 441, 273, 750, 582, 595, 958, 854, 942,
		 751, 582, 279, 620, 137, 371, 350, 1001, }, /* f = 20 */
		{ 441, 105, 918, 582, 167, 212, 260, 406,
		 919, 582, 612, 940, 452, 798, 843, 710, }, /* f = 21 */
		{ 441, 794, 229, 582, 335, 202, 617, 799,
		 228, 582, 824, 952, 743, 398, 995, 579, }, /* f = 22 */
		{ 441, 123, 900, 582, 671, 116, 690, 245,
		 901, 582, 901, 820, 160, 60, 121, 402, }, /* f = 23 */
		{ 441, 829, 194, 582, 318, 832, 716, 801,
		 195, 582, 832, 215, 174, 384, 651, 142, }, /* f = 24 */
		{ 441, 193, 830, 582, 636, 296, 560, 136,
		 831, 582, 256, 785, 63, 760, 867, 9, }, /* f = 25 */
		{ 441, 969, 54, 582, 248, 505, 969, 987,
		 55, 582, 21, 156, 397, 8, 161, 263, }, /* f = 26 */
		{ 441, 472, 551, 582, 496, 740, 709, 966,
		 550, 582, 678, 601, 50, 814, 180, 337, }, /* f = 27 */
		{ 441, 504, 519, 582, 992, 472, 409, 764,
		 518, 582, 705, 117, 278, 110, 726, 377, }, /* f = 28 */
		{ 441, 566, 457, 582, 961, 24, 154, 509,
		 456, 582, 457, 597, 261, 293, 530, 61, }, /* f = 29 */
		{ 441, 692, 331, 582, 898, 920, 669, 886,
		 330, 582, 984, 82, 291, 457, 92, 784, }, /* f = 30 */
		{ 441, 942, 81, 582, 773, 290, 659, 750,
		 80, 582, 1019, 539, 934, 618, 775, 371, }, /* f = 31 */
		{ 441, 420, 603, 582, 522, 803, 654, 332,
		 163, 582, 499, 648, 558, 300, 587, 1010, }, /* f = 32 */
	  },
	},
	{ .slots = 2, .exact = true, .buckets = 521,
	  .i1 = {
		0, 520, 0, 520, 260, 2, 518, 321,
		0, 260, 460, 224, 13, 505, 55, 170,
	  },
	  .i2 = {
		{ 321, 141, 140, 322, 231, 290, 172, 170,
		 140, 61, 31, 390, 478, 185, 512, 520, }, /* f = 4 */
		{ 321, 83, 82, 322, 202, 261, 143, 141,
		 82, 61, 201, 484, 449, 355, 38, 491, }, /* f = 5 */
		{ 321, 488, 487, 322, 144, 4, 284, 83,
		 487, 61, 143, 151, 391, 496, 454, 310, }, /* f = 6 */
		{ 321, 256, 255, 322, 28, 333, 244, 488,
		 255, 61, 226, 328, 275, 134, 121, 270, }, /* f = 7 */
		{ 321, 312, 311, 322, 317, 148, 486, 455,
		 311, 61, 70, 360, 43, 253, 298, 512, }, /* f = 8 */
		{ 321, 425, 424, 322, 373, 497, 249, 511,
		 424, 61, 79, 101, 99, 292, 330, 351, }, /* f = 9 */
		{ 321, 130, 129, 322, 486, 277, 174, 501,
		 129, 61, 98, 228, 212, 246, 516, 352, }, /* f = 10 */
		{ 321, 61, 60, 322, 191, 235, 147, 282,
		 60, 61, 458, 159, 438, 476, 245, 354, }, /* f = 11 */
		{ 321, 443, 442, 322, 122, 273, 491, 166,
		 442, 61, 335, 220, 170, 216, 346, 358, }, /* f = 12 */
		{ 321, 165, 164, 322, 504, 227, 260, 331,
		 164, 61, 89, 466, 31, 416, 425, 366, }, /* f = 13 */
		{ 321, 131, 130, 322, 226, 257, 196, 264,
		 130, 61, 316, 115, 75, 494, 385, 382, }, /* f = 14 */
		{ 321, 63, 62, 322, 192, 516, 389, 6,
		 62, 61, 372, 256, 486, 452, 305, 93, }, /* f = 15 */
		{ 321, 447, 446, 322, 124, 513, 255, 333,
		 446, 61, 162, 414, 143, 168, 466, 157, }, /* f = 16 */
		{ 321, 174, 173, 322, 508, 508, 508, 267,
		 173, 61, 264, 332, 100, 519, 144, 162, }, /* f = 17 */
		{ 321, 148, 147, 322, 235, 175, 294, 334,
		 147, 61, 145, 46, 413, 502, 344, 295, }, /* f = 18 */
		{ 321, 97, 96, 322, 209, 353, 65, 469,
		 96, 61, 230, 117, 318, 468, 222, 438, }, /* f = 19 */
		{ 321, 516, 515, 322, 158, 510, 327, 217,
		 515, 61, 201, 458, 129, 399, 177, 4, }, /* f = 20 */
		{ 321, 312, 311, 322, 56, 502, 131, 234,
		 311, 61, 342, 421, 72, 262, 210, 178, }, /* f = 21 */
		{ 321, 424, 423, 322, 373, 164, 61, 468,
		 423, 61, 301, 224, 356, 309, 154, 327, }, /* f = 22 */
		{ 321, 128, 127, 322, 485, 131, 318, 215,
		 127, 61, 343, 474, 6, 281, 364, 303, }, /* f = 23 */
		{ 321, 56, 55, 322, 189, 265, 113, 230,
		 55, 61, 104, 131, 225, 25, 64, 455, }, /* f = 24 */
		{ 321, 434, 433, 322, 117, 11, 223, 261,
		 433, 61, 347, 487, 264, 35, 383, 38, }, /* f = 25 */
		{ 321, 147, 146, 322, 495, 24, 444, 322,
		 146, 61, 435, 156, 219, 55, 102, 247, }, /* f = 26 */
		{ 321, 94, 93, 322, 208, 249, 166, 246,
		 93, 61, 487, 214, 451, 294, 459, 343, }, /* f = 27 */
		{ 321, 509, 508, 322, 155, 301, 8, 492,
		 508, 61, 194, 454, 196, 374, 452, 136, }, /* f = 28 */
		{ 321, 297, 296, 322, 49, 84, 13, 64,
		 296, 61, 328, 91, 405, 212, 439, 120, }, /* f = 29 */
		{ 321, 395, 394, 322, 358, 171, 24, 127,
		 394, 61, 75, 207, 302, 87, 91, 211, }, /* f = 30 */
		{ 321, 69, 68, 322, 456, 22, 46, 376,
		 68, 61, 90, 117, 296, 159, 238, 270, }, /* f = 31 */
		{ 321, 459, 458, 322, 130, 368, 90, 231,
		 136, 61, 318, 459, 406, 303, 209, 189, }, /* f = 32 */
	  },
	},
	{ .slots = 8, .exact = false, .buckets = 256,
	  .i1 = {
		0, 255, 0, 255, 0, 103, 152, 185,
		1, 255, 57, 106, 24, 168, 106, 12,
	  },
	  .i2 = {
		{ 185, 33, 222, 70, 203, 226, 138, 114,
		 223, 70, 242, 84, 211, 186, 245, 30, }, /* f = 4 */
		{ 185, 137, 118, 70, 151, 54, 70, 46,
		 119, 70, 231, 23, 143, 140, 84, 210, }, /* f = 5 */
		{ 185, 89, 166, 70, 47, 197, 36, 150,
		 167, 70, 79, 145, 55, 171, 93, 15, }, /* f = 6 */
		{ 185, 249, 6, 70, 95, 152, 88, 230,
		 7, 70, 213, 219, 71, 229, 223, 10, }, /* f = 7 */
		{ 185, 58, 197, 70, 191, 153, 24, 191,
		 196, 70, 25, 8, 167, 50, 0, 203, }, /* f = 8 */
		{ 185, 186, 69, 70, 127, 36, 34, 124,
		 68, 70, 121, 97, 103, 70, 118, 216, }, /* f = 9 */
		{ 185, 188, 67, 70, 254, 39, 36, 107,
		 66, 70, 185, 186, 230, 140, 155, 165, }, /* f = 10 */
		{ 185, 191, 64, 70, 253, 175, 169, 29,
		 65, 70, 131, 203, 229, 224, 67, 95, }, /* f = 11 */
		{ 185, 196, 59, 70, 250, 45, 50, 184,
		 58, 70, 76, 227, 171, 226, 102, 170, }, /* f = 12 */
		{ 185, 208, 47, 70, 244, 188, 150, 243,
		 46, 70, 210, 166, 182, 60, 10, 65, }, /* f = 13 */
		{ 185, 230, 25, 70, 233, 23, 250, 244,
		 24, 70, 37, 242, 68, 216, 170, 151, }, /* f = 14 */
		{ 185, 20, 235, 70, 210, 135, 93, 91,
		 234, 70, 203, 128, 106, 72, 235, 113, }, /* f = 15 */
		{ 185, 111, 144, 70, 165, 167, 18, 125,
		 145, 70, 220, 112, 50, 210, 209, 191, }, /* f = 16 */
		{ 185, 36, 219, 70, 74, 231, 140, 251,
		 218, 70, 242, 133, 22, 147, 215, 162, }, /* f = 17 */
		{ 185, 143, 112, 70, 148, 47, 121, 60,
		 113, 70, 228, 78, 124, 222, 17, 26, }, /* f = 18 */
		{ 185, 101, 154, 70, 41, 247, 91, 178,
		 155, 70, 131, 105, 208, 69, 156, 126, }, /* f = 19 */
		{ 185, 17, 238, 70, 83, 190, 86, 174,
		 239, 70, 23, 108, 137, 115, 94, 233, }, /* f = 20 */
		{ 185, 105, 150, 70, 167, 212, 4, 150,
		 151, 70, 100, 172, 196, 30, 75, 198, }, /* f = 21 */
		{ 185, 26, 229, 70, 79, 202, 105, 31,
		 228, 70, 56, 184, 231, 142, 227, 67, }, /* f = 22 */
		{ 185, 123, 132, 70, 159, 116, 178, 245,
		 133, 70, 133, 52, 160, 60, 121, 146, }, /* f = 23 */
		{ 185, 61, 194, 70, 62, 64, 204, 33,
		 195, 70, 64, 215, 174, 128, 139, 142, }, /* f = 24 */
		{ 185, 193, 62, 70, 124, 40, 48, 136,
		 63, 70, 0, 17, 63, 248, 99, 9, }, /* f = 25 */
		{ 185, 201, 54, 70, 248, 249, 201, 219,
		 55, 70, 21, 156, 141, 8, 161, 7, }, /* f = 26 */
		{ 185, 216, 39, 70, 240, 228, 197, 198,
		 38, 70, 166, 89, 50, 46, 180, 81, }, /* f = 27 */
		{ 185, 248, 7, 70, 224, 216, 153, 252,
		 6, 70, 193, 117, 22, 110, 214, 121, }, /* f = 28 */
		{ 185, 54, 201, 70, 193, 24, 154, 253,
		 200, 70, 201, 85, 5, 37, 18, 61, }, /* f = 29 */
		{ 185, 180, 75, 70, 130, 152, 157, 118,
		 74, 70, 216, 82, 35, 201, 92, 16, }, /* f = 30 */
		{ 185, 174, 81, 70, 5, 34, 147, 238,
		 80, 70, 251, 27, 166, 106, 7, 115, }, /* f = 31 */
		{ 185, 164, 91, 70, 10, 35, 142, 76,
		 163, 70, 243, 136, 46, 44, 75, 242, }, /* f = 32 */
	  },
	},
	{ .slots = 8, .exact = true, .buckets = 131,
	  .i1 = {
		0, 130, 0, 130, 65, 0, 130, 80,
		0, 65, 115, 56, 3, 127, 13, 42,
	  },
	  .i2 = {
		{ 80, 36, 35, 81, 58, 73, 43, 43,
		 35, 15, 8, 98, 120, 46, 129, 0, }, /* f = 4 */
		{ 80, 21, 20, 81, 51, 66, 36, 36,
		 20, 15, 51, 122, 113, 89, 10, 124, }, /* f = 5 */
		{ 80, 123, 122, 81, 36, 1, 71, 21,
		 122, 15, 36, 38, 98, 124, 115, 78, }, /* f = 6 */
		{ 80, 65, 64, 81, 7, 84, 61, 123,
		 64, 15, 57, 82, 69, 33, 31, 68, }, /* f = 7 */
		{ 80, 79, 78, 81, 80, 37, 122, 115,
		 78, 15, 18, 90, 11, 63, 75, 129, }, /* f = 8 */
		{ 80, 107, 106, 81, 94, 125, 63, 129,
		 106, 15, 20, 25, 25, 73, 83, 89, }, /* f = 9 */
		{ 80, 33, 32, 81, 122, 70, 44, 126,
		 32, 15, 25, 57, 53, 61, 130, 89, }, /* f = 10 */
		{ 80, 16, 15, 81, 48, 59, 37, 71,
		 15, 15, 116, 40, 110, 119, 62, 90, }, /* f = 11 */
		{ 80, 112, 111, 81, 31, 69, 123, 42,
		 111, 15, 85, 55, 43, 54, 87, 91, }, /* f = 12 */
		{ 80, 42, 41, 81, 127, 57, 65, 84,
		 41, 15, 23, 117, 8, 104, 107, 93, }, /* f = 13 */
		{ 80, 33, 32, 81, 57, 65, 49, 67,
		 32, 15, 80, 29, 19, 124, 97, 97, }, /* f = 14 */
		{ 80, 16, 15, 81, 48, 130, 98, 2,
		 15, 15, 94, 64, 122, 113, 77, 24, }, /* f = 15 */
		{ 80, 113, 112, 81, 31, 129, 64, 84,
		 112, 15, 41, 104, 36, 42, 118, 40, }, /* f = 16 */
		{ 80, 44, 43, 81, 128, 128, 128, 67,
		 43, 15, 67, 83, 25, 130, 37, 41, }, /* f = 17 */
		{ 80, 38, 37, 81, 59, 44, 74, 84,
		 37, 15, 37, 11, 104, 126, 87, 74, }, /* f = 18 */
		{ 80, 25, 24, 81, 53, 89, 16, 118,
		 24, 15, 58, 29, 80, 117, 56, 110, }, /* f = 19 */
		{ 80, 130, 129, 81, 40, 128, 82, 55,
		 129, 15, 51, 115, 32, 100, 45, 1, }, /* f = 20 */
		{ 80, 79, 78, 81, 14, 126, 33, 59,
		 78, 15, 86, 106, 18, 65, 53, 45, }, /* f = 21 */
		{ 80, 107, 106, 81, 94, 41, 15, 118,
		 106, 15, 76, 56, 89, 77, 39, 83, }, /* f = 22 */
		{ 80, 32, 31, 81, 122, 33, 80, 54,
		 31, 15, 87, 119, 1, 70, 92, 77, }, /* f = 23 */
		{ 80, 14, 13, 81, 47, 67, 28, 58,
		 13, 15, 27, 33, 56, 6, 17, 115, }, /* f = 24 */
		{ 80, 109, 108, 81, 29, 3, 56, 66,
		 108, 15, 88, 122, 66, 9, 97, 10, }, /* f = 25 */
		{ 80, 37, 36, 81, 124, 6, 112, 81,
		 36, 15, 110, 39, 55, 14, 26, 62, }, /* f = 26 */
		{ 80, 24, 23, 81, 52, 63, 42, 62,
		 23, 15, 123, 54, 113, 74, 116, 86, }, /* f = 27 */
		{ 80, 128, 127, 81, 39, 76, 2, 124,
		 127, 15, 49, 114, 49, 94, 114, 34, }, /* f = 28 */
		{ 80, 75, 74, 81, 12, 21, 3, 16,
		 74, 15, 83, 23, 102, 53, 111, 30, }, /* f = 29 */
		{ 80, 100, 99, 81, 90, 43, 6, 32,
		 99, 15, 19, 52, 76, 22, 23, 53, }, /* f = 30 */
		{ 80, 18, 17, 81, 115, 6, 11, 95,
		 17, 15, 23, 29, 74, 40, 60, 68, }, /* f = 31 */
		{ 80, 116, 115, 81, 33, 93, 22, 58,
		 34, 15, 80, 115, 102, 76, 53, 48, }, /* f = 32 */
	  },
	},
};
#define NB_KAT_TABLES (sizeof(kat_tables) / sizeof(kat_tables[0]))

/* Bit n (n <= 64 bits) at bit offset bit, little-endian bit order. */
static uint64_t
load_bits(const uint8_t *p, uint64_t bit, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int k = 0; k < n; k++)
		v |= (uint64_t)(p[(bit + k) / 8] >> ((bit + k) % 8) & 1) << k;
	return v;
}

/*
 * What a filter does with one hash, through the public API: the first
 * copy goes to slot 0 of its bucket (pos1), slots - 1 more fill it, and
 * the next goes to the alternate bucket (pos2), or is refused if the two
 * buckets are one (2b copies of a fingerprint at most). @p buf receives
 * the saved filter.
 */
struct derived {
	uint32_t pos1, i1, i2;
	uint8_t buf[1 << 14];
};

static int
derive(const struct cf_params *p, uint64_t h, struct derived *d)
{
	struct cf_filter *f = cf_create(p);
	uint32_t pos2 = 0;
	int ret;

	TEST_ASSERT(f != NULL, "create: %s", strerror(errno));
	ret = cf_add_with_hash(f, h, 0, &d->pos1);
	for (unsigned int k = 1; ret == 0 && k < p->bucket_slots; k++)
		ret = cf_add_with_hash(f, h, 0, NULL);
	if (ret != 0) {
		cf_free(f);
		TEST_ASSERT(0, "add %#" PRIx64 ": %d", h, ret);
	}
	d->i1 = d->pos1 / p->bucket_slots;
	ret = cf_add_with_hash(f, h, 0, &pos2);
	d->i2 = ret == 0 ? pos2 / p->bucket_slots : d->i1;
	if (ret == -ENOSPC)
		ret = 0;
	if (ret == 0 && cf_save_mem(f, d->buf, sizeof(d->buf)) < 0)
		ret = -1;
	cf_free(f);
	TEST_ASSERT(ret == 0, "add or save %#" PRIx64 ": %d", h, ret);
	return 0;
}

static int
check_buckets(const struct cf_params *p, uint64_t want)
{
	struct cf_filter *f = cf_create(p);
	struct cf_stats st;

	TEST_ASSERT(f != NULL, "create");
	cf_stats(f, &st);
	cf_free(f);
	TEST_ASSERT_EQ(st.buckets, want, "%s table, %u slots: %" PRIu64
		" buckets, want %" PRIu64, p->exact_size ? "exact" : "pow2",
		p->bucket_slots, st.buckets, want);
	return 0;
}

/* Plain tables: every width, bucket size and sizing. */
static int
test_kat_plain(void)
{
	static struct derived d;

	for (unsigned int t = 0; t < NB_KAT_TABLES; t++) {
		const struct kat_table *kt = &kat_tables[t];

		for (unsigned int fb = 4; fb <= 32; fb++) {
			struct cf_params p = { .capacity = KAT_CAPACITY,
				.bucket_slots = kt->slots,
				.exact_size = kt->exact, .fp_bits = fb };

			TEST_ASSERT_EQ(check_buckets(&p, kt->buckets), 0,
				"buckets");
			for (int k = 0; k < 16; k++) {
				uint32_t fp;

				TEST_ASSERT_EQ(derive(&p, kat_hash[k], &d), 0,
					"derive");
				fp = (uint32_t)load_bits(d.buf + HEADER_SIZE,
					(uint64_t)d.pos1 * fb, fb);
				TEST_ASSERT(d.pos1 % kt->slots == 0 &&
					d.i1 == kt->i1[k] &&
					fp == kat_fp[fb - 4][k] &&
					d.i2 == kt->i2[fb - 4][k],
					"table %u (%u slots, %s), f %u, hash "
					"%#" PRIx64 ": (%" PRIu32 ", %#" PRIx32
					", %" PRIu32 "), want (%" PRIu32 ", %#"
					PRIx32 ", %" PRIu32 ")", t, kt->slots,
					kt->exact ? "exact" : "pow2", fb,
					kat_hash[k], d.i1, fp, d.i2,
					kt->i1[k], kat_fp[fb - 4][k],
					kt->i2[fb - 4][k]);
			}
		}
	}
	return 0;
}

/*
 * Code of the nibble quadruple (n, n, n, n): its rank among the sorted
 * quadruples in lexicographic order, sum over a < n of C(18 - a, 3)
 * (those starting with a). Checked by hand: 816 = C(18, 3) start with 0,
 * and (15, 15, 15, 15) is the last of 3876.
 */
static const uint16_t code_nnnn[16] = {
	0, 816, 1496, 2056, 2511, 2875, 3161, 3381, 3546, 3666, 3750,
	3806, 3841, 3861, 3871, 3875,
};

/*
 * Semi-sorted tables (f = 5..16, 4 slots) place items as plain 4-slot
 * ones do. The first copy of an item in an empty bucket sorts after the
 * three empty slots (fingerprint 0): slot 3. With the bucket full of its
 * 4 copies, the saved bucket is code (n, n, n, n) for n = fp & 0xf, then
 * fp >> 4 four times.
 */
static int
test_kat_semisort(void)
{
	static struct derived d;

	for (unsigned int t = 0; t < 2; t++) {
		const struct kat_table *kt = &kat_tables[t];

		TEST_ASSERT(kt->slots == 4 && kt->exact == (t == 1), "order");
		for (unsigned int fb = 5; fb <= 16; fb++) {
			struct cf_params p = { .capacity = KAT_CAPACITY,
				.bucket_slots = 4, .exact_size = kt->exact,
				.fp_bits = fb, .table = CF_TABLE_SEMISORT };
			unsigned int bits = 4 * (fb - 1);

			TEST_ASSERT_EQ(check_buckets(&p, kt->buckets), 0,
				"buckets");
			for (int k = 0; k < 16; k++) {
				uint32_t fp = kat_fp[fb - 4][k];
				uint64_t word, want = code_nnnn[fp & 0xf];

				for (unsigned int s = 0; s < 4; s++)
					want |= (uint64_t)(fp >> 4) <<
						(12 + s * (fb - 4));

				TEST_ASSERT_EQ(derive(&p, kat_hash[k], &d), 0,
					"derive");
				word = load_bits(d.buf + HEADER_SIZE,
					(uint64_t)d.i1 * bits, bits);
				TEST_ASSERT(d.pos1 % 4 == 3 &&
					d.i1 == kt->i1[k] && word == want &&
					d.i2 == kt->i2[fb - 4][k],
					"%s, f %u, hash %#" PRIx64 ": bucket %"
					PRIu32 " slot %" PRIu32 " word %#"
					PRIx64 " alt %" PRIu32 ", want %" PRIu32
					" slot 3 word %#" PRIx64 " alt %" PRIu32,
					kt->exact ? "exact" : "pow2", fb,
					kat_hash[k], d.i1, d.pos1 % 4, word,
					d.i2, kt->i1[k], want,
					kt->i2[fb - 4][k]);
			}
		}
	}
	return 0;
}

/* The low 32 bits of a hash whose fingerprint is fp (1..2^f - 1), from
 * the documented fingerprint formula. */
static uint64_t
hash_low_for(uint32_t fp, unsigned int fb)
{
	uint64_t range = (UINT64_C(1) << fb) - 1;

	return (((uint64_t)(fp - 1) << 32) + range - 1) / range;
}

/*
 * Every semi-sorted code: the 3876 sorted nibble quadruples a <= b <= c
 * <= d, numbered in lexicographic order, each in a bucket of its own
 * (bucket k holds quadruple k), with high parts 1, 2, 3, 4: a full
 * bucket of 13-bit fingerprints is code | h0 << 12 | h1 << 21 | ...
 */
static int
test_kat_semisort_codes(void)
{
	struct cf_params p = { .capacity = 15000, .fp_bits = 13,
		.table = CF_TABLE_SEMISORT };
	struct cf_filter *f = cf_create(&p);
	size_t size;
	uint8_t *buf;
	uint32_t code = 0;

	TEST_ASSERT(f != NULL, "create");
	for (uint32_t a = 0; a < 16; a++)
		for (uint32_t b = a; b < 16; b++)
			for (uint32_t c = b; c < 16; c++)
				for (uint32_t e = c; e < 16; e++, code++) {
					/* Given in reverse: the writer sorts. */
					uint32_t fps[4] = { e | 4 << 4,
						c | 3 << 4, b | 2 << 4,
						a | 1 << 4 };

					for (int s = 0; s < 4; s++)
						TEST_ASSERT_EQ(cf_add_with_hash(f,
							(uint64_t)code << 32 |
							hash_low_for(fps[s], 13),
							0, NULL), 0, "add");
				}
	TEST_ASSERT_EQ(code, 3876u, "codes");
	size = cf_save_size(f);
	buf = malloc(size);
	TEST_ASSERT(buf != NULL && cf_save_mem(f, buf, size) ==
		(int64_t)size, "save");
	code = 0;
	for (uint32_t a = 0; a < 16; a++)
		for (uint32_t b = a; b < 16; b++)
			for (uint32_t c = b; c < 16; c++)
				for (uint32_t e = c; e < 16; e++, code++) {
					uint64_t want = code | UINT64_C(1) << 12 |
						UINT64_C(2) << 21 |
						UINT64_C(3) << 30 |
						UINT64_C(4) << 39;
					uint64_t word = load_bits(buf +
						HEADER_SIZE, (uint64_t)code *
						48, 48);

					if (word != want)
						free(buf);
					TEST_ASSERT(word == want, "(%u %u %u "
						"%u): %#" PRIx64 ", want %#"
						PRIx64, a, b, c, e, word, want);
				}
	free(buf);
	cf_free(f);
	return 0;
}

/* ------------------------------------------------- frozen filters */

/* Item hashes of the filter files: cfu_splitmix64, as make_golden.c made
 * them (a change to it would show here first). */

static uint64_t
value_of(uint64_t h)
{
	return h ^ (h >> 29);
}

#define NONMEMBER_SEED UINT64_C(0x6e6f6e6d656d6265)
#define NONMEMBER_QUERIES 100000

/* What each file holds, as make_golden.c printed it when it wrote it. */
static const struct golden_filter {
	const char *name;
	struct cf_params params;  /* as cf_get_params() reads them back */
	uint64_t stream_seed;
	unsigned int items;       /* added: stream_seed's first hashes */
	uint64_t stash;
	uint64_t buckets;
	uint64_t count_one;       /* items whose cf_count_with_hash() is 1 */
	uint64_t nonmember_hits;  /* of NONMEMBER_QUERIES */
	size_t size;
} golden_filters[] = {
	{ "plain12.cf", { .capacity = 1000, .fp_bits = 12,
		.bucket_slots = 4, .max_kicks = 500, .seed = 0x601de401 },
		1, 900, 0, 512, 896, 98, 3184 },
	{ "semi13_v8.cf", { .capacity = 1000, .fp_bits = 13,
		.bucket_slots = 4, .max_kicks = 500,
		.table = CF_TABLE_SEMISORT, .value_bits = 8,
		.seed = 0x601de402 }, 2, 900, 0, 512, 900, 38, 5232 },
	{ "fp16_v16.cf", { .capacity = 500, .fp_bits = 16,
		.bucket_slots = 4, .max_kicks = 500, .value_bits = 16,
		.seed = 0x601de403 }, 3, 450, 0, 256, 450, 9, 4208 },
	{ "exact13_v32.cf", { .capacity = 1000, .fp_bits = 13,
		.bucket_slots = 4, .max_kicks = 500, .exact_size = true,
		.value_bits = 32, .seed = 0x601de404 },
		4, 900, 0, 261, 896, 88, 5985 },
	{ "stash20_b8_v64.cf", { .capacity = 60, .fp_bits = 20,
		.bucket_slots = 8, .max_kicks = 50, .value_bits = 64,
		.seed = 0x601de405 }, 5, 66, 2, 8, 66, 2, 816 },
	/* format version 2 */
	{ "il13_v32.cf", { .capacity = 1000, .fp_bits = 13,
		.bucket_slots = 4, .max_kicks = 500,
		.table = CF_TABLE_INTERLEAVED, .value_bits = 32,
		.seed = 0x601de406 }, 6, 900, 0, 512, 900, 45, 16496 },
};
#define NB_GOLDEN_FILTERS (sizeof(golden_filters) / sizeof(golden_filters[0]))

static uint8_t *
read_whole(const char *name, size_t *size)
{
	char path[4096];
	uint8_t *buf = NULL;
	struct stat sb;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", GOLDEN_DATA, name);
	fp = fopen(path, "rb");
	if (fp == NULL)
		return NULL;
	if (fstat(fileno(fp), &sb) == 0 && sb.st_size > 0) {
		buf = malloc((size_t)sb.st_size);
		if (buf != NULL && fread(buf, 1, (size_t)sb.st_size, fp) !=
				(size_t)sb.st_size) {
			free(buf);
			buf = NULL;
		}
		*size = (size_t)sb.st_size;
	}
	fclose(fp);
	return buf;
}

static int
check_golden_filter(const struct golden_filter *g, const uint8_t *file,
		size_t file_size)
{
	char path[4096];
	struct cf_filter *f;
	struct cf_params p;
	struct cf_stats st;
	uint64_t x = g->stream_seed, count_one = 0, hits = 0, mask;
	uint8_t *again;

	snprintf(path, sizeof(path), "%s/%s", GOLDEN_DATA, g->name);
	f = cf_load_file(path, NULL, 0);
	TEST_ASSERT(f != NULL, "%s: load: %s", g->name, strerror(errno));
	cf_get_params(f, &p);
	TEST_ASSERT(memcmp(&p, &g->params, sizeof(p)) == 0, "%s: params: "
		"capacity %" PRIu64 " exact %d fp %u slots %u kicks %u "
		"values %u table %d seed %#" PRIx64, g->name, p.capacity,
		p.exact_size, p.fp_bits, p.bucket_slots, p.max_kicks,
		p.value_bits, p.table, p.seed);
	cf_stats(f, &st);
	TEST_ASSERT(st.items == g->items && st.stash_used == g->stash &&
		st.buckets == g->buckets, "%s: items %" PRIu64 " stash %"
		PRIu64 " buckets %" PRIu64, g->name, st.items, st.stash_used,
		st.buckets);
	mask = p.value_bits == 64 ? UINT64_MAX :
		(UINT64_C(1) << p.value_bits) - 1;
	for (unsigned int k = 0; k < g->items; k++) {
		uint64_t h = cfu_splitmix64(&x), v = 0;
		uint32_t pos;

		TEST_ASSERT_EQ(cf_lookup_with_hash(f, h, &pos), 1,
			"%s: item %u (%#" PRIx64 ") not found", g->name, k, h);
		/* A count of 1: pos is this item's own slot. */
		if (cf_count_with_hash(f, h) != 1)
			continue;
		count_one++;
		if (p.value_bits == 0)
			continue;
		TEST_ASSERT_EQ(cf_value_get(f, pos, &v), 0, "value_get");
		TEST_ASSERT_EQ(v, value_of(h) & mask, "%s: item %u: value %#"
			PRIx64 ", want %#" PRIx64, g->name, k, v,
			value_of(h) & mask);
	}
	TEST_ASSERT_EQ(count_one, g->count_one, "%s: %" PRIu64 " items of "
		"count 1, want %" PRIu64, g->name, count_one, g->count_one);
	x = NONMEMBER_SEED;
	for (unsigned int k = 0; k < NONMEMBER_QUERIES; k++)
		hits += (uint64_t)cf_lookup_with_hash(f, cfu_splitmix64(&x), NULL);
	TEST_ASSERT_EQ(hits, g->nonmember_hits, "%s: %" PRIu64 " false "
		"positives, want %" PRIu64, g->name, hits, g->nonmember_hits);
	/* The current writer writes the same bytes back. */
	TEST_ASSERT_EQ(cf_save_size(f), file_size, "%s: save size", g->name);
	again = malloc(file_size);
	TEST_ASSERT(again != NULL, "malloc");
	cf_save_mem(f, again, file_size);
	cf_free(f);
	if (memcmp(again, file, file_size) != 0) {
		free(again);
		TEST_ASSERT(0, "%s: saved again, the bytes differ", g->name);
	}
	free(again);
	return 0;
}

static int
test_frozen_filters(void)
{
	for (unsigned int i = 0; i < NB_GOLDEN_FILTERS; i++) {
		const struct golden_filter *g = &golden_filters[i];
		size_t size = 0;
		uint8_t *file = read_whole(g->name, &size);
		int ret;

		TEST_ASSERT(file != NULL && size == g->size, "%s: %zu bytes",
			g->name, size);
		ret = check_golden_filter(g, file, size);
		free(file);
		TEST_ASSERT_EQ(ret, 0, "%s", g->name);
	}
	return 0;
}

/* ---------------------------------------------- frozen blocklists */

static const struct {
	const char *entry;
	enum cbl_kind kind;
} bl_queries[] = {
	/* Every entry of golden_list.txt. */
	{ "192.0.2.1", CBL_ADDRESS },
	{ "198.51.100.77/32", CBL_ADDRESS },
	{ "198.51.100.77", CBL_ADDRESS },
	{ "10.0.0.0/8", CBL_PREFIX },
	{ "100.64.0.0/10", CBL_PREFIX },
	{ "172.16.0.0/12", CBL_PREFIX },
	{ "192.168.1.0/24", CBL_PREFIX },
	{ "203.0.113.128/25", CBL_PREFIX },
	{ "2001:db8::1", CBL_ADDRESS },
	{ "2001:db8:dead:beef::42/128", CBL_ADDRESS },
	{ "2001:db8:1000::/36", CBL_PREFIX },
	{ "2001:db8:abcd::/48", CBL_PREFIX },
	{ "fd00:1:2:3::/64", CBL_PREFIX },
	{ "2001:db8:ffff:ffff:ffff:ffff:ffff:fffe/127", CBL_PREFIX },
	{ "tcp 198.18.1.1 1234 198.18.2.2 80", CBL_FLOW },
	{ "udp 192.0.2.200 53 198.51.100.1 5353", CBL_FLOW },
	{ "sctp 203.0.113.5 2905 203.0.113.6 2905", CBL_FLOW },
	{ "47 192.0.2.10 0 192.0.2.11 0", CBL_FLOW },
	{ "tcp 2001:db8::10 443 2001:db8::20 50000", CBL_FLOW },
	{ "udp fe80::1 546 ff02::1:2 547", CBL_FLOW },
	{ "icmpv6 2001:db8::a 0 2001:db8::b 0", CBL_FLOW },
	/* Flows match in either direction. */
	{ "tcp 198.18.2.2 80 198.18.1.1 1234", CBL_FLOW },
	{ "udp ff02::1:2 547 fe80::1 546", CBL_FLOW },
	/* Addresses inside listed prefixes. */
	{ "10.200.3.4", CBL_PREFIX },
	{ "100.127.255.255", CBL_PREFIX },
	{ "172.31.0.1", CBL_PREFIX },
	{ "192.168.1.254", CBL_PREFIX },
	{ "203.0.113.200", CBL_PREFIX },
	{ "2001:db8:1fff:ffff::1", CBL_PREFIX },
	{ "2001:db8:abcd:1234::5", CBL_PREFIX },
	{ "fd00:1:2:3:ffff::1", CBL_PREFIX },
	{ "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", CBL_PREFIX },
	/* Not listed. */
	{ "192.0.2.2", CBL_NONE },
	{ "11.0.0.1", CBL_NONE },
	{ "100.128.0.1", CBL_NONE },
	{ "203.0.113.127", CBL_NONE },
	{ "10.0.0.0/16", CBL_NONE },
	{ "192.168.0.0/16", CBL_NONE },
	{ "2001:db8::2", CBL_NONE },
	{ "2001:db8:2000::1", CBL_NONE },
	{ "2001:db8::/32", CBL_NONE },
	{ "fd00:1:2:4::1", CBL_NONE },
	{ "tcp 198.18.1.1 1235 198.18.2.2 80", CBL_NONE },
	{ "udp 198.18.1.1 1234 198.18.2.2 80", CBL_NONE },
	{ "tcp 2001:db8::10 443 2001:db8::20 50001", CBL_NONE },
};

static const struct {
	const char *name;
	unsigned int fp_bits;
} golden_lists[] = {
	{ "golden_list_fp32.cfbl", 32 },
	{ "golden_list_fp12.cfbl", 12 },
};

static int
test_frozen_blocklists(void)
{
	for (unsigned int i = 0; i < 2; i++) {
		char path[4096], err[512] = "";
		struct cbl *bl;
		struct cbl_info in;

		snprintf(path, sizeof(path), "%s/%s", GOLDEN_DATA,
			golden_lists[i].name);
		bl = cbl_load(path, err, sizeof(err));
		TEST_ASSERT(bl != NULL, "%s", err);
		cbl_info(bl, &in);
		TEST_ASSERT(in.entries[CBL_ADDRESS] == 4 &&
			in.entries[CBL_PREFIX] == 9 &&
			in.entries[CBL_FLOW] == 7 && in.total == 20 &&
			in.v4_lengths == 6 && in.v6_lengths == 5 &&
			in.fp_bits == golden_lists[i].fp_bits,
			"%s: info", golden_lists[i].name);
		for (unsigned int q = 0; q < sizeof(bl_queries) /
				sizeof(bl_queries[0]); q++) {
			enum cbl_kind kind = CBL_KINDS;
			int ret = cbl_match_text(bl, bl_queries[q].entry,
				&kind, err, sizeof(err));

			if (ret != 0 || kind != bl_queries[q].kind)
				cbl_free(bl);
			TEST_ASSERT(ret == 0 && kind == bl_queries[q].kind,
				"%s: '%s': %s, want %s", golden_lists[i].name,
				bl_queries[q].entry, cbl_kind_name(kind),
				cbl_kind_name(bl_queries[q].kind));
		}
		cbl_free(bl);
	}
	return 0;
}

/* ------------------------------------------------ unknown versions */

static void
reseal_filter(uint8_t *buf, size_t size)
{
	uint64_t sum = 0;

	memcpy(buf + OFF_CHECKSUM, &sum, 8);
	sum = XXH64(buf, size, 0);
	memcpy(buf + OFF_CHECKSUM, &sum, 8);
}

/*
 * A frozen file of another version, whether its checksum was made for
 * the patched header or not: refused as a version (EPROTONOSUPPORT),
 * never read as a version 1 file nor blamed on damage.
 */
static int
test_unknown_filter_version(void)
{
	/* 2 is the interleaved layout's: a plain file that says 2 is
	 * refused as damaged (test_io); 3 that of a key hash other than
	 * XXH3 (test_io) */
	static const uint32_t versions[] = { 0, 4, 0x100, UINT32_MAX };
	size_t size;
	uint8_t *buf = read_whole("plain12.cf", &size);
	uint32_t v;

	TEST_ASSERT(buf != NULL, "read");
	memcpy(&v, buf + OFF_VERSION, 4);
	TEST_ASSERT_EQ(v, 1u, "the frozen files are version 1");
	for (unsigned int i = 0; i < sizeof(versions) / sizeof(versions[0]);
			i++) {
		for (int reseal = 0; reseal < 2; reseal++) {
			uint8_t *copy = malloc(size);
			struct cf_filter *f;

			TEST_ASSERT(copy != NULL, "malloc");
			memcpy(copy, buf, size);
			memcpy(copy + OFF_VERSION, &versions[i], 4);
			if (reseal)
				reseal_filter(copy, size);
			errno = 0;
			f = cf_load_mem(copy, size, NULL, 0);
			free(copy);
			cf_free(f);
			TEST_ASSERT(f == NULL && errno == EPROTONOSUPPORT,
				"version %" PRIu32 " (%s checksum): %s",
				versions[i], reseal ? "its own" : "the old",
				f != NULL ? "loaded" : strerror(errno));
		}
	}
	free(buf);
	return 0;
}

static int
load_patched_list(const uint8_t *buf, size_t size, char *err,
		size_t err_len, int *e)
{
	char path[] = "/tmp/cf_golden_XXXXXX";
	struct cbl *bl;
	int fd = mkstemp(path);
	FILE *fp;

	TEST_ASSERT(fd >= 0, "mkstemp");
	fp = fdopen(fd, "wb");
	TEST_ASSERT(fp != NULL && fwrite(buf, 1, size, fp) == size &&
		fclose(fp) == 0, "write %s", path);
	errno = 0;
	bl = cbl_load(path, err, err_len);
	*e = errno;
	unlink(path);
	if (bl != NULL) {
		cbl_free(bl);
		TEST_ASSERT(0, "loaded");
	}
	return 0;
}

/*
 * A compiled list whose blocklist header, or whose embedded filter,
 * says another version (checksums made for it): refused by name. With
 * the header's checksum not matching, it is refused as damaged: a
 * future version must keep the header checksum computed as version 1
 * does for this reader to name the version (docs/golden.md).
 */
static int
test_unknown_blocklist_version(void)
{
	size_t size;
	uint8_t *buf = read_whole("golden_list_fp32.cfbl", &size);
	uint32_t v = 2, one;
	uint64_t sum;
	char err[512];
	int e;

	TEST_ASSERT(buf != NULL && size > BL_HEADER_SIZE + HEADER_SIZE,
		"read");
	memcpy(&one, buf + BL_OFF_VERSION, 4);
	TEST_ASSERT_EQ(one, 1u, "version 1");
	memcpy(&one, buf + BL_HEADER_SIZE + OFF_VERSION, 4);
	TEST_ASSERT_EQ(one, 1u, "filter version 1");

	/* The blocklist header. */
	memcpy(buf + BL_OFF_VERSION, &v, 4);
	sum = XXH64(buf, BL_OFF_CHECKSUM, 0);
	memcpy(buf + BL_OFF_CHECKSUM, &sum, 8);
	TEST_ASSERT_EQ(load_patched_list(buf, size, err, sizeof(err), &e), 0,
		"header version 2");
	TEST_ASSERT(e == EPROTONOSUPPORT && strstr(err, "compiled blocklist "
		"format version 2, this build reads 1") != NULL,
		"header version 2: %s (%s)", err, strerror(e));
	/* A later version's header may checksum differently: refused by
	 * its version all the same, not taken for damage. */
	sum ^= 1;
	memcpy(buf + BL_OFF_CHECKSUM, &sum, 8);
	TEST_ASSERT_EQ(load_patched_list(buf, size, err, sizeof(err), &e), 0,
		"header version 2, another checksum");
	TEST_ASSERT(e == EPROTONOSUPPORT && strstr(err, "compiled blocklist "
		"format version 2, this build reads 1") != NULL,
		"header version 2, another checksum: %s (%s)", err,
		strerror(e));

	/* The embedded filter. */
	free(buf);
	buf = read_whole("golden_list_fp32.cfbl", &size);
	TEST_ASSERT(buf != NULL, "read");
	/* (filter format versions 2 and 3 are the interleaved layout's and
	 * that of another key hash) */
	v = 4;
	memcpy(buf + BL_HEADER_SIZE + OFF_VERSION, &v, 4);
	reseal_filter(buf + BL_HEADER_SIZE, size - BL_HEADER_SIZE);
	TEST_ASSERT_EQ(load_patched_list(buf, size, err, sizeof(err), &e), 0,
		"filter version 4");
	TEST_ASSERT(e == EPROTONOSUPPORT && strstr(err, "unsupported filter "
		"format version") != NULL, "filter version 4: %s (%s)", err,
		strerror(e));
	free(buf);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_kat_plain),
	TEST_CASE(test_kat_semisort),
	TEST_CASE(test_kat_semisort_codes),
	TEST_CASE(test_frozen_filters),
	TEST_CASE(test_frozen_blocklists),
	TEST_CASE(test_unknown_filter_version),
	TEST_CASE(test_unknown_blocklist_version),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
