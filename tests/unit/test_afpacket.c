/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * app/afpacket.c: finding an af_packet port's sockets among the
 * process's descriptors, and reading the drops at their rings, on
 * sockets of the test's own bound to the loopback interface (root).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

#include "afpacket.h"
#include "test.h"

/* An AF_PACKET socket bound to @p ifindex, in fanout group @p fanout
 * if that is not negative; its descriptor, or -1. */
static int
packet_socket(int ifindex, int fanout)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = ifindex,
	};
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	int arg = fanout | PACKET_FANOUT_HASH << 16;

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) != 0 ||
			(fanout >= 0 && setsockopt(fd, SOL_PACKET,
			PACKET_FANOUT, &arg, sizeof(arg)) != 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
contains(const int *fds, int n, int fd)
{
	for (int i = 0; i < n; i++)
		if (fds[i] == fd)
			return 1;
	return 0;
}

/* The sockets bound to lo in the group are found, and only they: not
 * one of another group, nor one bound to no interface, nor a UDP
 * socket. */
static int
test_sockets_found(void)
{
	int lo = (int)if_nametoindex("lo"), id = app_afp_fanout_id(lo);
	int a, b, other, unbound, udp, fds[8], n, ret = 0;

	TEST_ASSERT(lo > 0, "no lo");
	a = packet_socket(lo, id);
	b = packet_socket(lo, id);
	other = packet_socket(lo, (id + 1) & 0xffff);
	unbound = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	TEST_ASSERT(a >= 0 && b >= 0 && other >= 0 && unbound >= 0 &&
		udp >= 0, "sockets: %s (root?)", strerror(errno));
	n = app_afp_sockets("/proc/self/fd", lo, id, fds, (unsigned int)(sizeof(fds) / sizeof(fds[0])));
	if (n != 2 || fds[0] != (a < b ? a : b) || fds[1] != (a < b ? b : a))
		ret = -1;
	printf("# in the group: %d (%d, %d; want %d, %d)\n", n,
		n > 0 ? fds[0] : -1, n > 1 ? fds[1] : -1, a, b);
	/* any group: the other group's too, not the unbound one */
	n = app_afp_sockets("/proc/self/fd", lo, -1, fds, (unsigned int)(sizeof(fds) / sizeof(fds[0])));
	if (n != 3 || !contains(fds, n, a) || !contains(fds, n, b) ||
			!contains(fds, n, other) || contains(fds, n, unbound))
		ret = -1;
	printf("# any group: %d\n", n);
	/* too short an array: the count, the first ones */
	n = app_afp_sockets("/proc/self/fd", lo, id, fds, 1);
	if (n != 2 || fds[0] != (a < b ? a : b))
		ret = -1;
	close(a);
	close(b);
	close(other);
	close(unbound);
	close(udp);
	/* closed: none */
	n = app_afp_sockets("/proc/self/fd", lo, id, fds, (unsigned int)(sizeof(fds) / sizeof(fds[0])));
	TEST_ASSERT_EQ(n, 0, "after close: %d", n);
	return ret;
}

/* A directory that cannot be read is an error, not "no sockets". */
static int
test_scan_fails(void)
{
	int fds[4], n;

	n = app_afp_sockets("/nonexistent/fd", 1, -1, fds, 4);
	TEST_ASSERT_EQ(n, -ENOENT, "%d", n);
	return 0;
}

/* Frames dropped at a full ring are read once: the read resets them. A
 * socket with a receive buffer of the minimum, not read, on lo: of the
 * frames sent to it, the kernel drops most; what it counts dropped is
 * what did not reach the socket. */
static int
test_drops_read(void)
{
	int lo = (int)if_nametoindex("lo");
	int rx = packet_socket(lo, -1), tx, small = 1;
	uint64_t drops = 0, again = 0;
	unsigned int got = 0, sent = 200;
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_ifindex = lo,
		.sll_halen = ETH_ALEN,
	};
	uint8_t frame[1000] = { 0 };

	TEST_ASSERT(rx >= 0, "socket: %s", strerror(errno));
	tx = socket(AF_PACKET, SOCK_RAW, 0);
	TEST_ASSERT(tx >= 0, "socket: %s", strerror(errno));
	TEST_ASSERT_EQ(setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &small,
		sizeof(small)), 0, "SO_RCVBUF: %s", strerror(errno));
	/* from here on: zero */
	TEST_ASSERT_EQ(app_afp_drops_add(rx, &drops), 0, "read");
	drops = 0;
	frame[12] = 0x88;       /* a local experimental ethertype */
	frame[13] = 0xb5;
	for (unsigned int i = 0; i < sent; i++)
		TEST_ASSERT(sendto(tx, frame, sizeof(frame), 0,
			(struct sockaddr *)&to, sizeof(to)) ==
			(ssize_t)sizeof(frame), "send: %s", strerror(errno));
	/* lo delivers in the sender's context: all there now */
	TEST_ASSERT_EQ(app_afp_drops_add(rx, &drops), 0, "read");
	for (;;) {
		uint8_t b[2048];
		ssize_t len = recv(rx, b, sizeof(b), MSG_DONTWAIT);

		if (len < 0)
			break;
		got += len == (ssize_t)sizeof(frame) && b[12] == 0x88 &&
			b[13] == 0xb5;
	}
	printf("# sent %u, read %u, dropped %llu\n", sent, got,
		(unsigned long long)drops);
	TEST_ASSERT(drops > 0, "nothing dropped");
	TEST_ASSERT(got + drops >= sent, "%u read + %llu dropped < %u sent",
		got, (unsigned long long)drops, sent);
	/* read again, the socket's queue empty: nothing new can have been
	 * dropped, and the last read reset them */
	TEST_ASSERT_EQ(app_afp_drops_add(rx, &again), 0, "read");
	drops += again;
	again = 0;
	TEST_ASSERT_EQ(app_afp_drops_add(rx, &again), 0, "read");
	TEST_ASSERT_EQ(again, 0, "%llu again", (unsigned long long)again);
	/* not an AF_PACKET socket */
	TEST_ASSERT(app_afp_drops_add(tx + 1000, &again) < 0, "a bad fd");
	close(rx);
	close(tx);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_sockets_found),
		TEST_CASE(test_scan_fails),
		TEST_CASE(test_drops_read),
		TEST_CASES_END(),
	};

	return test_run(cases, argc, argv);
}
