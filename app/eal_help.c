/* SPDX-License-Identifier: BSD-3-Clause */

/* The EAL's common failures, explained (eal_help.h). */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal_memconfig.h>
#include <rte_memory.h>

#include "cfutil.h"
#include "eal_help.h"

/* What a driver library holds of itself: a JSON object after this. */
#define PMD_INFO "PMD_INFO_STRING= "
/* A shared object is read whole to find it: no larger than this. */
#define OBJECT_MAX (64u << 20)

/* The explanation into @p buf: 0. */
static int __attribute__((format(printf, 3, 4)))
say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return 0;
}

/* The value of EAL option @p name (--name V or --name=V), or NULL. */
static const char *
eal_value(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], name) == 0 && i + 1 < argc)
			return argv[i + 1];
		if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
			return argv[i] + n + 1;
	}
	return NULL;
}

static int
eal_flag(int argc, char **argv, const char *name)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

/* The EAL's runtime directory of a prefix, as eal_get_runtime_dir()
 * makes it: /var/run/dpdk for root, else $XDG_RUNTIME_DIR/dpdk or
 * /tmp/dpdk. */
static void
runtime_dir(const char *prefix, char *buf, size_t len)
{
	const char *base = "/var/run";

	if (getuid() != 0) {
		base = getenv("XDG_RUNTIME_DIR");
		if (base == NULL)
			base = "/tmp";
	}
	snprintf(buf, len, "%s/dpdk/%s", base, prefix);
}

/* Who holds the prefix's config lock (the EAL's primary takes a write
 * lock on it); 0 if nobody. */
static pid_t
lock_holder(const char *dir)
{
	char path[4200];
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd;

	snprintf(path, sizeof(path), "%s/config", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK)
		fl.l_pid = 0;
	close(fd);
	return fl.l_pid;
}

static void
process_name(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(buf, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) != NULL)
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static bool
hugetlbfs_mounted(void)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	if (f == NULL)
		return true; /* cannot tell: not the reason then */
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		char dev[256], dir[2048], type[64];

		found = sscanf(line, "%255s %2047s %63s", dev, dir, type) == 3 &&
			strcmp(type, "hugetlbfs") == 0;
	}
	fclose(f);
	return found;
}

/* HugePages_Total and HugePages_Free of the default size. */
static void
hugepages(long *total, long *avail)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	*total = *avail = -1;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		sscanf(line, "HugePages_Total: %ld", total);
		sscanf(line, "HugePages_Free: %ld", avail);
	}
	fclose(f);
}

int
app_eal_explain(int argc, char **argv, char *buf, size_t len)
{
	const char *prefix = eal_value(argc, argv, "--file-prefix");
	bool no_huge = eal_flag(argc, argv, "--no-huge");
	char dir[4096], name[64];
	long total, avail;
	pid_t pid;

	if (prefix == NULL)
		prefix = "rte";
	runtime_dir(prefix, dir, sizeof(dir));
	pid = eal_flag(argc, argv, "--in-memory") ||
		eal_flag(argc, argv, "--no-shconf") ? 0 : lock_holder(dir);
	if (pid != 0 && pid != getpid()) {
		process_name(pid, name, sizeof(name));
		return say(buf, len, "--file-prefix %s is in use by "
			"another DPDK process, %s (pid %d): give this run a "
			"--file-prefix of its own (the service's is cuckooflow)",
			prefix, name, (int)pid);
	}
	if (no_huge)
		goto none;
	hugepages(&total, &avail);
	if (total == 0)
		return say(buf, len, "no hugepages are reserved: "
			"reserve them (dpdk-hugepages.py --pagesize 2M --reserve "
			"1G, or vm.nr_hugepages in /etc/sysctl.d), or run "
			"without (--no-huge -m 512)");
	if (!hugetlbfs_mounted())
		return say(buf, len, "no hugetlbfs is mounted: mount "
			"one (dpdk-hugepages.py --mount, or mount -t hugetlbfs "
			"nodev /dev/hugepages), or run without hugepages "
			"(--no-huge -m 512)");
	if (avail == 0)
		return say(buf, len, "all %ld hugepages are in use: "
			"reserve more (dpdk-hugepages.py --pagesize 2M --reserve "
			"...), stop what holds them, or run without (--no-huge "
			"-m 512)", total);
none:
	if (len > 0)
		buf[0] = '\0';
	return -ENOENT;
}

/* ------------------------------------------------------- device keys */

struct object_scan {
	const char *name;       /* of the device */
	char driver[64];        /* the longest driver name it starts with */
	char params[1024];
	size_t best;            /* length of the driver name matched */
};

/* "name": "net_pcap", "params": "rx_pcap=<string> ..." of @p info. */
static void
pmd_info(struct object_scan *s, const char *info, size_t len)
{
	const char *n = memmem(info, len, "\"name\": \"", 9);
	const char *p = memmem(info, len, "\"params\": \"", 11);
	size_t nlen, plen;

	if (n == NULL || p == NULL)
		return;
	n += 9;
	p += 11;
	nlen = strcspn(n, "\"");
	plen = strcspn(p, "\"");
	/* the device is named after its driver, an instance number after
	 * (net_pcap0, net_memif1) */
	if (nlen <= s->best || strncmp(s->name, n, nlen) != 0)
		return;
	s->best = nlen;
	snprintf(s->driver, sizeof(s->driver), "%.*s", (int)nlen, n);
	snprintf(s->params, sizeof(s->params), "%.*s", (int)plen, p);
}

static int
scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object_scan *s = arg;
	const char *path = info->dlpi_name[0] != '\0' ? info->dlpi_name :
		"/proc/self/exe";
	char err[256];
	size_t len;
	char *data;

	(void)size;
	/* the program (static DPDK) and DPDK's libraries */
	if (info->dlpi_name[0] != '\0' && strstr(path, "librte_") == NULL)
		return 0;
	data = cfu_file_read(path, OBJECT_MAX, &len, err, sizeof(err));
	if (data == NULL)
		return 0;
	for (char *at = data; (at = memmem(at, len - (size_t)(at - data),
			PMD_INFO, strlen(PMD_INFO))) != NULL; at++)
		pmd_info(s, at, strnlen(at, len - (size_t)(at - data)));
	free(data);
	return 0;
}

int
app_vdev_explain(const char *name, const char *args, char *buf,
		size_t len)
{
	struct object_scan s = { .name = name };
	char bad[256] = "", keys[1024] = "";
	size_t nb = 0, nk = 0;
	const char *p;

	dl_iterate_phdr(scan_object, &s);
	if (s.best == 0)
		goto none;
	/* its keys: each word "key=<type>" of params (a word may lack its
	 * space: "phy_mac=<int>infinite_rx=<0|1>") */
	for (p = s.params; (p = strstr(p, "=<")) != NULL; p++) {
		const char *k = p;

		while (k > s.params && (isalnum((unsigned char)k[-1]) ||
				k[-1] == '_'))
			k--;
		if (nk < sizeof(keys))
			nk += (size_t)snprintf(keys + nk, sizeof(keys) - nk,
				"%s%.*s", nk ? ", " : "", (int)(p - k), k);
	}
	/* each key=value of the device's arguments */
	for (p = args; p != NULL && *p != '\0'; ) {
		size_t klen = strcspn(p, "=,");
		char key[128];
		bool known = false;

		snprintf(key, sizeof(key), "%.*s", (int)klen, p);
		for (const char *k = keys; !known && *k != '\0'; ) {
			size_t l = strcspn(k, ",");

			known = l == klen && strncmp(k, key, klen) == 0;
			k += l;
			while (*k == ',' || *k == ' ')
				k++;
		}
		if (!known && klen != 0 && nb < sizeof(bad))
			nb += (size_t)snprintf(bad + nb, sizeof(bad) - nb,
				"%s%s", nb ? ", " : "", key);
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	if (nb == 0)
		goto none;
	return say(buf, len, "%s %s %s not %s's: it takes %s",
		strchr(bad, ',') != NULL ? "keys" : "key", bad,
		strchr(bad, ',') != NULL ? "are" : "is", s.driver, keys);
none:
	if (len > 0)
		buf[0] = '\0';
	return -ENOENT;
}

/* ------------------------------------------------------- hugepage files */

static struct {
	char **path;
	unsigned int n, cap;
} files;

static int
collect_file(const struct rte_memseg_list *msl, const struct rte_memseg *ms,
		void *arg)
{
	char link[64], path[PATH_MAX];
	ssize_t len;
	int fd;

	(void)msl;
	(void)arg;
	fd = rte_memseg_get_fd_thread_unsafe(ms);
	if (fd < 0)
		return 0; /* --no-huge, --in-memory: no file */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	if (len <= 0)
		return 0;
	path[len] = '\0';
	for (unsigned int i = 0; i < files.n; i++)
		if (strcmp(files.path[i], path) == 0)
			return 0;
	if (files.n == files.cap) {
		unsigned int cap = files.cap ? 2 * files.cap : 64;
		char **p = realloc(files.path, cap * sizeof(*p));

		if (p == NULL)
			return -1;
		files.path = p;
		files.cap = cap;
	}
	files.path[files.n] = strdup(path);
	if (files.path[files.n] != NULL)
		files.n++;
	return 0;
}

void
app_hugepage_files_collect(void)
{
	rte_mcfg_mem_read_lock();
	rte_memseg_walk_thread_unsafe(collect_file, NULL);
	rte_mcfg_mem_read_unlock();
}

void
app_hugepage_files_remove(void)
{
	for (unsigned int i = 0; i < files.n; i++) {
		(void)unlink(files.path[i]);
		free(files.path[i]);
	}
	free(files.path);
	files.path = NULL;
	files.n = files.cap = 0;
}
