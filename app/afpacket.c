/* SPDX-License-Identifier: BSD-3-Clause */

/* The kernel's drops at an af_packet port's rings (afpacket.h). */

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/if_packet.h>
#include <sys/socket.h>

#include "afpacket.h"

int
app_afp_fanout_id(int ifindex)
{
	return (getpid() ^ ifindex) & 0xffff;
}

/* Whether descriptor @p fd is an AF_PACKET socket bound to @p ifindex,
 * in fanout group @p fanout_id if that is not negative. */
static int
fd_matches(int fd, int ifindex, int fanout_id)
{
	struct sockaddr_ll sll;
	socklen_t len = sizeof(int);
	int domain, fanout;

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 ||
			domain != AF_PACKET)
		return 0;
	len = sizeof(sll);
	if (getsockname(fd, (struct sockaddr *)&sll, &len) != 0 ||
			sll.sll_ifindex != ifindex)
		return 0;
	if (fanout_id < 0)
		return 1;
	len = sizeof(fanout);
	/* the group's id in the low 16 bits, its type and flags above */
	return getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &fanout, &len) == 0 &&
		fanout != 0 && (fanout & 0xffff) == fanout_id;
}

static int
int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int
app_afp_sockets(const char *fd_dir, int ifindex, int fanout_id, int *fds,
		unsigned int max)
{
	DIR *d = opendir(fd_dir);
	struct dirent *e;
	unsigned int n = 0;
	int ret = 0;

	if (d == NULL)
		return -errno;
	for (errno = 0; (e = readdir(d)) != NULL; errno = 0) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		/* ".", "..", and the directory's own descriptor */
		if (end == e->d_name || *end != '\0' || fd == dirfd(d))
			continue;
		if (!fd_matches((int)fd, ifindex, fanout_id))
			continue;
		if (n < max)
			fds[n] = (int)fd;
		n++;
	}
	if (errno != 0)
		ret = -errno;
	closedir(d);
	if (ret < 0)
		return ret;
	qsort(fds, n < max ? n : max, sizeof(*fds), int_cmp);
	return (int)n;
}

int
app_afp_drops_add(int fd, uint64_t *drops)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) != 0)
		return -errno;
	*drops += st.tp_drops;
	return 0;
}
