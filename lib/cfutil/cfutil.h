/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFUTIL_H_
#define _CFUTIL_H_

/**
 * @file
 * The project's shared plumbing, linked into lib/cuckoo, lib/cflow,
 * lib/blocklist and the programs; not installed.
 *
 * - The error convention (libbpf's): a function returns a negative errno
 *   and sets errno; a constructor returns NULL with errno set; the
 *   human-readable detail goes only to an optional caller buffer.
 * - User files read without trusting their path: only regular files,
 *   never a blocking open, a size limit checked before any read.
 * - Durable writes: a temporary file next to the target, filled, synced,
 *   renamed over it and the directory synced, so that a reader (a live
 *   reload, a restart) sees the old file or the new one, whole.
 * - splitmix64, the one generator of reproducible 64-bit streams.
 * - CFU_ASSERT, the libraries' checks of their own invariants.
 *
 * File errors: -errno (EISDIR for a directory, EINVAL for another
 * non-regular file, EFBIG over a limit, or the system's), errno set, and
 * "PATH: reason" in @p err.
 */

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

/*
 * The libraries' invariants, checked in debug and sanitizer builds and
 * compiled out of release ones: meson's b_ndebug=if-release defines
 * NDEBUG for buildtype=release only, so debug and debugoptimized (the
 * ASan build) check them. A failure aborts with the condition, file and
 * line (assert(3)): it is a bug in the library, never a caller's error,
 * which is reported with a negative errno instead. In release builds the
 * condition is still type-checked but never evaluated.
 */
#ifdef NDEBUG
#define CFU_ASSERT(cond) ((void)sizeof(!(cond)))
#else
#define CFU_ASSERT(cond) assert(cond)
#endif

/*
 * CFU_TARGET_CLONES: compile a hot function once for the build's -march
 * (the default build: x86-64-v2, SSE4.2, Debian's DPDK baseline) and
 * again for AVX2 and AVX-512 CPUs; the loader picks one through an ifunc
 * resolver (glibc) by the CPU's flags, once, before main(). Only the
 * function itself is cloned: what it calls stays at the build's -march
 * unless inlined into it, so the hot paths mark their helpers
 * always_inline. The clones are named by the levels of
 * cf_dispatch_isa() (lib/cuckoo); -Ddispatch=false leaves one version.
 *
 * gcc clones for the x86-64 levels (v3: AVX2, BMI2, FMA...; v4: AVX-512
 * F/BW/CD/DQ/VL). Not clang (the fuzz builds), whose version 14 (Debian
 * 12) does not carry them across files: it names the ifunc f.ifunc and
 * leaves f undefined for the other files' calls (and with
 * arch=x86-64-v3 its resolver tests the CPU's vendor field, not its
 * flags). CFU_CLONES is defined where the clones are made.
 */
#if defined(CFU_DISPATCH) && defined(__x86_64__) && defined(__linux__) && \
	defined(__GNUC__) && !defined(__clang__)
#define CFU_CLONES 1
#define CFU_TARGET_CLONES __attribute__((target_clones("default", \
	"arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define CFU_TARGET_CLONES
#endif

/**
 * Format @p fmt into @p err (if not NULL and @p len > 0), set errno to
 * @p e and return -e: callers fail in one line.
 */
int cfu_fail(int e, char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/** The huge page size cfu_zalloc_huge() aligns to: 2 MiB. */
#define CFU_HUGE_ALIGN (2u << 20)

/**
 * Zeroed memory for a table read at random: of @p size bytes or more
 * than CFU_HUGE_ALIGN, aligned to it and advised as transparent huge
 * pages (MADV_HUGEPAGE, before the first touch), so that its reads miss
 * the TLB less; else aligned to @p align (a power of two, at least
 * sizeof(void *)). Free it with free().
 *
 * @return
 *   The memory, or NULL.
 */
void *cfu_zalloc_huge(size_t size, size_t align);

/** "a directory", "a FIFO", "a character device", ... for @p mode. */
const char *cfu_file_kind(mode_t mode);

/** Refuse @p path, of @p mode, for not being a regular file: -EISDIR for
 *  a directory, else -EINVAL, naming what it is. */
int cfu_file_not_regular(const char *path, mode_t mode, char *err,
		size_t len);

/**
 * Open @p path for reading: stat()ed first (a device is not even
 * opened), opened with O_NONBLOCK, fstat()ed again, then made blocking
 * once known to be a regular file.
 *
 * @return
 *   The descriptor, with @p sb filled, or -errno.
 */
int cfu_file_open(const char *path, struct stat *sb, char *err,
		size_t err_len);

/**
 * Whether another process holds @p fd's file open for writing: a writer
 * still at work (truncated, then writing, maybe pausing), whose first
 * part a read now would take for the whole file. Asked with a read lease
 * (fcntl F_SETLEASE), taken and given back at once; a writer opening the
 * file in between sends the lease's signal, SIGIO, so this is asked only
 * of a process that ignores or handles SIGIO.
 *
 * @param fd
 *   A descriptor opened read-only (cfu_file_open()).
 * @return
 *   0 if none does; -EBUSY if one does; -ENOTSUP if this cannot tell
 *   (SIGIO at its default action, which ends the process; not the file's
 *   owner and without CAP_LEASE; a file system without leases).
 */
int cfu_file_no_writer(int fd);

/**
 * Whether the file read through @p fd is still the one @p before (its
 * fstat() at the open) describes, and still at @p path: same size,
 * modification and change times, and @p path names the same file.
 *
 * @return
 *   0 if so; -EAGAIN if it was written meanwhile, or @p path was
 *   replaced (renamed over) or removed.
 */
int cfu_file_unchanged(int fd, const char *path, const struct stat *before);

/**
 * The whole of @p path, at most @p max bytes, NUL-terminated, in a
 * malloc()ed buffer of its size (not of @p max). A file whose size
 * changes while it is read is refused (EAGAIN), never half read.
 *
 * @return
 *   The buffer, its length in @p len; or NULL with errno set.
 */
char *cfu_file_read(const char *path, size_t max, size_t *len, char *err,
		size_t err_len);

/**
 * cfu_file_read(), and the fstat() of the descriptor it read into
 * @p sb: the owner and mode of the very file read (a private file's
 * checks, without a race against a rename).
 */
char *cfu_file_read_stat(const char *path, size_t max, size_t *len,
		struct stat *sb, char *err, size_t err_len);

/** write() all of @p buf, across short writes and EINTR: 0 or -errno. */
int cfu_write_all(int fd, const void *buf, size_t len);

/**
 * Fills a file being written durably: 0 or -errno. @p fd is open for
 * writing at offset 0; pwrite() may go back.
 */
typedef int (*cfu_fill_fn)(int fd, void *ctx);

/**
 * The directory holding @p path into @p dir (@p size bytes): "." for a
 * bare name, "/" for a file at the root.
 *
 * @return
 *   0, or -ENAMETOOLONG if it does not fit.
 */
int cfu_path_dir(const char *path, char *dir, size_t size);

/**
 * Write @p path durably: a new temporary file next to it (O_EXCL: never
 * an existing file, FIFO or link), filled by @p fill, fsync()ed, renamed
 * over @p path, then the directory fsync()ed. On failure @p path is
 * untouched and the temporary file removed. Temporary files of @p path
 * that a writer killed mid-way left (their process is gone) are removed
 * first. An existing @p path that is not a regular file is refused.
 *
 * @return
 *   0, or -errno with the reason in @p err.
 */
int cfu_write_durable(const char *path, cfu_fill_fn fill, void *ctx,
		char *err, size_t err_len);

/**
 * cfu_write_durable(), the temporary file (hence @p path) created with
 * @p mode (less the umask) instead of 0666: 0600 for a file that holds
 * a secret, which no other user may read at any moment.
 */
int cfu_write_durable_mode(const char *path, mode_t mode, cfu_fill_fn fill,
		void *ctx, char *err, size_t err_len);

/** clock_gettime(@p id) in ns. */
static inline uint64_t
cfu_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** splitmix64's finaliser (Stafford's mix 13): a bijection of 64-bit
 *  words whose every output bit depends on every input bit. */
static inline uint64_t
cfu_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/** splitmix64 (Steele, Lea, Flood 2014): the next value of the stream
 *  whose state is @p x. */
static inline uint64_t
cfu_splitmix64(uint64_t *x)
{
	return cfu_mix64(*x += UINT64_C(0x9e3779b97f4a7c15));
}

#endif /* _CFUTIL_H_ */
