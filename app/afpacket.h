/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_AFPACKET_H_
#define _APP_AFPACKET_H_

/**
 * @file
 * The kernel's drops at an af_packet port's rings. DPDK 22.11's
 * net_af_packet never reads PACKET_STATISTICS, so frames the kernel
 * dropped because a ring was full are in no ethdev counter. These find
 * the driver's sockets among the process's descriptors and read their
 * drops. Plain C (no DPDK): app/ports.c calls them for net_af_packet
 * ports, tests/unit/test_afpacket.c on sockets of its own.
 */

#include <stdint.h>

/**
 * The AF_PACKET sockets among the descriptors listed in @p fd_dir
 * ("/proc/self/fd") that are bound to interface @p ifindex and, if
 * @p fanout_id is not negative, members of the fanout group of that id
 * (net_af_packet puts each of its sockets in the group (pid ^ ifindex)
 * & 0xffff). Up to @p max of them into @p fds, in ascending order.
 *
 * @return
 *   How many there are (more than @p max if @p fds was too short), or a
 *   negative errno: @p fd_dir could not be opened or read (EMFILE,
 *   /proc not mounted).
 */
int app_afp_sockets(const char *fd_dir, int ifindex, int fanout_id,
		int *fds, unsigned int max);

/**
 * The net_af_packet fanout group id of a port on interface @p ifindex
 * in this process: (getpid() ^ ifindex) & 0xffff, as the driver sets it.
 */
int app_afp_fanout_id(int ifindex);

/**
 * Add to @p drops the frames the kernel dropped at socket @p fd's ring
 * (ring full) since the last read: PACKET_STATISTICS's tp_drops, which
 * each read resets, so exactly one caller may read a socket.
 *
 * @return
 *   0, or a negative errno (not an AF_PACKET socket, closed).
 */
int app_afp_drops_add(int fd, uint64_t *drops);

#endif /* _APP_AFPACKET_H_ */
