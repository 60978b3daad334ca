/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <xxhash.h>

#include "cflow.h"
#include "cfutil.h"
#include "config.h"
#include "state.h"
#include "worker.h"

#define STATE_MAGIC "CFLWSTAT"
/* 3: the seed's origin, the firewall's roles and allow list; the
 * trackers' tables of format 2 (sided). 4: the flow records' keys after
 * the tables (a length, 0 without). */
#define STATE_VERSION 4
/* The oldest version read: 3 is 4 without the keys (its flows taken
 * over end in unnamed records, as they did with the build that wrote
 * it), so that an upgrade keeps its flows. */
#define STATE_VERSION_MIN 3
#define STATE_BYTE_ORDER UINT32_C(0x01020304)
/* The file holds the hash seed: its owner's alone. */
#define STATE_FILE_MODE 0600

struct file_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t nb_workers;
	uint32_t handoff;
	uint64_t queue_map;     /* app_state_run.queue_map */
	uint64_t clock;         /* enum app_clock */
	uint64_t seed;
	uint64_t saved_wall_ns; /* CLOCK_REALTIME at the save */
	uint64_t saved_clock_ns; /* the run's clock at the save */
	uint64_t seed_set;      /* 1: --hash-seed given (not a secret) */
	uint64_t inside_mask;   /* firewall roles: port id bits */
	uint64_t outside_mask;
	uint64_t mirror_port;   /* APP_NO_PORT: none */
	uint64_t allow;         /* cbl_allow_digest(), 0: no allow list */
};

struct app_state {
	char *buf;              /* the whole file */
	size_t len;
	struct file_header h;
	const uint8_t *table[APP_MAX_WORKERS];
	size_t table_len[APP_MAX_WORKERS];
	const uint8_t *keys;    /* the flow records' keys, or NULL */
	size_t keys_len;
};

static const char *
clock_name(uint64_t clock)
{
	return clock == APP_CLOCK_PKT ? "pkt" : "tsc";
}

/* A port mask as the options spell it (0,2-3), or "none". */
static const char *
ports_text(uint64_t mask, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int p = 0; p < 64 && used < len; p++) {
		unsigned int q = p;

		if (!((mask >> p) & 1))
			continue;
		while (q + 1 < 64 && ((mask >> (q + 1)) & 1))
			q++;
		used += (size_t)snprintf(buf + used, len - used, q == p ?
			"%s%u" : "%s%u-%u", used ? "," : "", p, q);
		p = q;
	}
	return mask == 0 ? "none" : buf;
}

/* The firewall a table was made under against this run's: the roles
 * (--inside, --outside, --mirror-port), then the allow list. */
static int
firewall_differs(const struct file_header *h, const char *path,
		const struct app_state_run *run, char *err, size_t err_len)
{
	char in[2][160], out[2][160];

	ports_text(h->inside_mask, in[0], sizeof(in[0]));
	ports_text(h->outside_mask, out[0], sizeof(out[0]));
	ports_text(run->inside_mask, in[1], sizeof(in[1]));
	ports_text(run->outside_mask, out[1], sizeof(out[1]));
	if (h->inside_mask == 0 && run->inside_mask != 0)
		return cfu_fail(ESTALE, err, err_len, "%s: saved without "
			"firewall roles, this run has --inside %s --outside %s: "
			"flows opened from anywhere would pass", path, in[1],
			out[1]);
	if (h->inside_mask != 0 && run->inside_mask == 0)
		return cfu_fail(ESTALE, err, err_len, "%s: saved with firewall "
			"roles (--inside %s --outside %s), this run has none",
			path, in[0], out[0]);
	if (h->inside_mask != run->inside_mask ||
			h->outside_mask != run->outside_mask)
		return cfu_fail(ESTALE, err, err_len, "%s: saved with other "
			"firewall roles (--inside %s --outside %s), this run has "
			"--inside %s --outside %s", path, in[0], out[0], in[1],
			out[1]);
	if (h->mirror_port != run->mirror_port)
		return cfu_fail(ESTALE, err, err_len, "%s: saved with another "
			"--mirror-port", path);
	if (h->allow != run->allow)
		return cfu_fail(ESTALE, err, err_len, "%s: saved with %s, this "
			"run has %s (--allow: flows it opened would pass)", path,
			h->allow == 0 ? "no allow list" : run->allow == 0 ?
			"an allow list" : "another allow list",
			run->allow == 0 ? "none" : h->allow == 0 ? "one" :
			"other rules");
	return 0;
}

/* The container's checks: framing, checksum, version. */
static int
state_parse(struct app_state *s, const char *path, char *err,
		size_t err_len)
{
	const struct file_header *h = &s->h;
	size_t off = sizeof(*h);
	uint64_t sum;

	if (s->len < sizeof(*h) + sizeof(sum))
		return cfu_fail(ENODATA, err, err_len, "%s: %zu bytes, too "
			"short for a state file", path, s->len);
	memcpy(&s->h, s->buf, sizeof(*h));
	if (memcmp(h->magic, STATE_MAGIC, sizeof(h->magic)) != 0)
		return cfu_fail(EBADMSG, err, err_len, "%s: not a cuckooflow "
			"state file", path);
	if (h->byte_order != STATE_BYTE_ORDER)
		return cfu_fail(ENOTSUP, err, err_len, "%s: written on a host "
			"of the other byte order", path);
	memcpy(&sum, s->buf + s->len - sizeof(sum), sizeof(sum));
	if (sum != XXH64(s->buf, s->len - sizeof(sum), 0))
		return cfu_fail(EBADMSG, err, err_len, "%s: checksum mismatch "
			"(a damaged or cut file)", path);
	if (h->version < STATE_VERSION_MIN || h->version > STATE_VERSION)
		return cfu_fail(EPROTONOSUPPORT, err, err_len, "%s: format "
			"version %u, this build reads %u to %u", path,
			h->version, STATE_VERSION_MIN, STATE_VERSION);
	if (h->nb_workers == 0 || h->nb_workers > APP_MAX_WORKERS)
		return cfu_fail(EBADMSG, err, err_len, "%s: %u workers", path,
			h->nb_workers);
	for (unsigned int i = 0; i < h->nb_workers; i++) {
		uint64_t n;

		if (s->len - sizeof(sum) - off < sizeof(n))
			return cfu_fail(EBADMSG, err, err_len, "%s: worker %u's "
				"table cut", path, i);
		memcpy(&n, s->buf + off, sizeof(n));
		off += sizeof(n);
		if (n > s->len - sizeof(sum) - off)
			return cfu_fail(EBADMSG, err, err_len, "%s: worker %u's "
				"table cut", path, i);
		s->table[i] = (const uint8_t *)s->buf + off;
		s->table_len[i] = (size_t)n;
		off += (size_t)n;
	}
	if (h->version >= 4) {
		uint64_t n;

		if (s->len - sizeof(sum) - off < sizeof(n))
			return cfu_fail(EBADMSG, err, err_len, "%s: the flow "
				"records' keys cut", path);
		memcpy(&n, s->buf + off, sizeof(n));
		off += sizeof(n);
		if (n > s->len - sizeof(sum) - off)
			return cfu_fail(EBADMSG, err, err_len, "%s: the flow "
				"records' keys cut", path);
		s->keys = n != 0 ? (const uint8_t *)s->buf + off : NULL;
		s->keys_len = (size_t)n;
		off += (size_t)n;
	}
	if (off != s->len - sizeof(sum))
		return cfu_fail(EBADMSG, err, err_len, "%s: %zu bytes after the "
			"tables and keys", path, s->len - sizeof(sum) - off);
	return 0;
}

/* Was the file saved by a run like @p run? */
static int
state_match(const struct app_state *s, const char *path,
		const struct app_state_run *run, char *err, size_t err_len)
{
	const struct file_header *h = &s->h;

	/* Flows belong to workers by their hash: the same workers, the
	 * same way of choosing one, the same seed. */
	if (h->nb_workers != run->nb_workers)
		return cfu_fail(ESTALE, err, err_len, "%s: saved by %u "
			"workers, this run has %u", path, h->nb_workers,
			run->nb_workers);
	if ((h->handoff != 0) != run->handoff)
		return cfu_fail(ESTALE, err, err_len, "%s: saved with --affinity "
			"%s, this run has %s", path, h->handoff ? "handoff" :
			"rss", run->handoff ? "handoff" : "rss");
	if (h->queue_map != run->queue_map)
		return cfu_fail(ESTALE, err, err_len, "%s: saved with another "
			"queue map (--config, --rxq, ports or workers): flows "
			"would reach other workers", path);
	if (h->clock != run->clock)
		return cfu_fail(ESTALE, err, err_len, "%s: saved with --clock "
			"%s, this run has %s", path, clock_name(h->clock),
			clock_name(run->clock));
	if (run->seed_set && h->seed != run->seed)
		return cfu_fail(ESTALE, err, err_len, "%s: saved with another "
			"--hash-seed (%#" PRIx64 ")", path, h->seed);
	if (!run->seed_set && h->seed_set)
		return cfu_fail(ESTALE, err, err_len, "%s: saved with a fixed "
			"--hash-seed: a run without one keeps its seed secret "
			"and does not take a known one over (give the same "
			"--hash-seed to)", path);
	return firewall_differs(h, path, run, err, err_len);
}

/* The file holds the seed: only a file of this run's user that no one
 * else may read or write (as ssh's StrictModes). */
static int
state_private(const struct stat *sb, const char *path, char *err,
		size_t err_len)
{
	if (sb->st_uid != geteuid())
		return cfu_fail(EACCES, err, err_len, "%s: owned by uid %u, "
			"not by this run's (%u): it holds the flow tables' "
			"secret hash seed", path, (unsigned int)sb->st_uid,
			(unsigned int)geteuid());
	if (sb->st_mode & 077)
		return cfu_fail(EACCES, err, err_len, "%s: readable or "
			"writable by others (mode %04o): it holds the flow "
			"tables' secret hash seed (chmod 600 it, or remove it)",
			path, (unsigned int)(sb->st_mode & 07777));
	return 0;
}

static int
map_entry_cmp(const void *a, const void *b)
{
	const struct app_queue_map *x = a, *y = b;

	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if (x->queue != y->queue)
		return x->queue < y->queue ? -1 : 1;
	return (x->lcore > y->lcore) - (x->lcore < y->lcore);
}

uint64_t
app_state_queue_map(const struct app_queue_map *map, unsigned int n)
{
	struct app_queue_map sorted[APP_MAX_QUEUE_MAP];

	/* Three uint16_t, no padding: hashed as they lie. */
	RTE_BUILD_BUG_ON(sizeof(*sorted) != 3 * sizeof(uint16_t));
	if (n > APP_MAX_QUEUE_MAP)
		return 0;
	memcpy(sorted, map, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), map_entry_cmp);
	return XXH64(sorted, n * sizeof(*sorted), 0);
}

int
app_state_read(const char *path, const struct app_state_run *run,
		struct app_state **state, char *err, size_t err_len)
{
	struct app_state *s;
	struct stat sb;
	uint64_t max;
	int ret;

	*state = NULL;
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return 0;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return cfu_fail(ENOMEM, err, err_len, "%s: out of memory", path);
	/* Read whole: at most what this run's tables can save, so that a
	 * huge file is refused before it is read. (One saved by a run with
	 * larger tables is refused here, as it would be after.) */
	max = sizeof(struct file_header) + run->nb_workers *
		(sizeof(uint64_t) + run->table_max) + sizeof(uint64_t) +
		run->keys_max + sizeof(uint64_t);
	s->buf = cfu_file_read_stat(path, max, &s->len, &sb, err, err_len);
	if (s->buf == NULL) {
		ret = -errno;
		free(s);
		if (ret == -EFBIG)
			cfu_fail(EFBIG, err, err_len, "%s: larger than %u "
				"workers' tables of this run can save (%" PRIu64
				" bytes): saved with more workers or larger tables "
				"(--flows, --exact-size, --fp-bits, --age-bits, "
				"--table-layout), or not a state file", path,
				run->nb_workers, max);
		return ret;
	}
	/* A file of another version by its version first (an upgrade's
	 * is likely to be 0644 too), then its privacy, then the run's. */
	ret = state_parse(s, path, err, err_len);
	if (ret == 0)
		ret = state_private(&sb, path, err, err_len);
	if (ret == 0)
		ret = state_match(s, path, run, err, err_len);
	if (ret < 0) {
		app_state_free(s);
		return ret;
	}
	*state = s;
	return 0;
}

uint64_t
app_state_seed(const struct app_state *s)
{
	return s->h.seed;
}

uint64_t
app_state_clock_offset(const struct app_state *s, uint64_t now_ns,
		uint64_t *down_ns)
{
	uint64_t wall = cfu_clock_ns(CLOCK_REALTIME);

	/* A wall clock set back counts as no time down. */
	*down_ns = wall > s->h.saved_wall_ns ? wall - s->h.saved_wall_ns : 0;
	if (s->h.clock == APP_CLOCK_PKT)
		return 0;
	/* Modulo 2^64: now_ns + offset = saved clock + time down. */
	return s->h.saved_clock_ns + *down_ns - now_ns;
}

int
app_state_restore(const struct app_state *s, unsigned int i,
		struct cflow_tracker *t, char *err, size_t err_len)
{
	char why[200];
	int ret;

	ret = cflow_tracker_restore(t, s->table[i], s->table_len[i], NULL,
		why, sizeof(why));
	if (ret < 0)
		cfu_fail(-ret, err, err_len, "worker %u's table: %s", i, why);
	return ret;
}

const void *
app_state_keys(const struct app_state *s, size_t *len)
{
	*len = s->keys_len;
	return s->keys;
}

void
app_state_free(struct app_state *s)
{
	if (s == NULL)
		return;
	free(s->buf);
	free(s);
}

struct state_fill {
	const struct app_state_run *run;
	const struct app_worker *workers;
	app_state_save_fn save;
	void *save_arg;
	uint64_t clock_ns;
	const void *keys;
	uint64_t keys_len;
	uint64_t flows;
};

static int
state_fill(int fd, void *arg)
{
	struct state_fill *f = arg;
	struct file_header h;
	XXH64_state_t *sum;
	uint64_t digest;
	int ret = 0;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, STATE_MAGIC, sizeof(h.magic));
	h.version = STATE_VERSION;
	h.byte_order = STATE_BYTE_ORDER;
	h.nb_workers = f->run->nb_workers;
	h.handoff = f->run->handoff;
	h.queue_map = f->run->queue_map;
	h.clock = f->run->clock;
	h.seed = f->run->seed;
	h.saved_wall_ns = cfu_clock_ns(CLOCK_REALTIME);
	h.saved_clock_ns = f->clock_ns;
	h.seed_set = f->run->seed_set;
	h.inside_mask = f->run->inside_mask;
	h.outside_mask = f->run->outside_mask;
	h.mirror_port = f->run->mirror_port;
	h.allow = f->run->allow;
	sum = XXH64_createState();
	if (sum == NULL)
		return -ENOMEM;
	XXH64_reset(sum, 0);
	XXH64_update(sum, &h, sizeof(h));
	ret = cfu_write_all(fd, &h, sizeof(h));
	for (unsigned int i = 0; ret == 0 && i < h.nb_workers; i++) {
		const struct cflow_tracker *t = f->workers[i].tracker;
		uint64_t cap = f->save != NULL ? f->run->table_max :
			cflow_tracker_save_size(t), n;
		struct cflow_counters c;
		void *buf = malloc(cap);
		int64_t got;

		if (buf == NULL) {
			ret = -ENOMEM;
			break;
		}
		got = f->save != NULL ? f->save(i, buf, cap, f->save_arg) :
			cflow_tracker_save(t, buf, cap);
		if (got <= 0) {
			free(buf);
			ret = got < 0 ? (int)got : -EIO;
			break;
		}
		n = (uint64_t)got;
		XXH64_update(sum, &n, sizeof(n));
		XXH64_update(sum, buf, n);
		ret = cfu_write_all(fd, &n, sizeof(n));
		if (ret == 0)
			ret = cfu_write_all(fd, buf, n);
		free(buf);
		cflow_counters_get(t, &c);
		f->flows += c.active;
	}
	if (ret == 0) {
		XXH64_update(sum, &f->keys_len, sizeof(f->keys_len));
		ret = cfu_write_all(fd, &f->keys_len, sizeof(f->keys_len));
	}
	if (ret == 0 && f->keys_len != 0) {
		XXH64_update(sum, f->keys, f->keys_len);
		ret = cfu_write_all(fd, f->keys, f->keys_len);
	}
	digest = XXH64_digest(sum);
	XXH64_freeState(sum);
	if (ret == 0)
		ret = cfu_write_all(fd, &digest, sizeof(digest));
	return ret;
}

int
app_state_write(const char *path, const struct app_state_run *run,
		const struct app_worker *workers, app_state_save_fn save,
		void *save_arg, uint64_t clock_ns, const void *keys,
		uint64_t keys_len, uint64_t *flows, char *err, size_t err_len)
{
	struct state_fill f = {
		.run = run, .workers = workers, .save = save,
		.save_arg = save_arg, .clock_ns = clock_ns, .keys = keys,
		.keys_len = keys_len,
	};
	int ret;

	ret = cfu_write_durable_mode(path, STATE_FILE_MODE, state_fill, &f,
		err, err_len);
	*flows = f.flows;
	return ret;
}
