/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_EAL_HELP_H_
#define _APP_EAL_HELP_H_

/*
 * The EAL's common failures, explained in one line with the fix, from
 * what the system shows rather than from the EAL's own messages (which
 * may be hidden by --log-level, and end in "rte_eal_init: Success"):
 * another process holding the file prefix, hugepages missing, a
 * device's argument its driver does not know.
 */

#include <stddef.h>

/*
 * Why rte_eal_init() failed, given the arguments it had (@p argc,
 * @p argv, the program's name first): the file prefix's lock held by
 * another process (its pid and name), no hugetlbfs mounted or no
 * hugepages reserved (unless --no-huge), each with what to do; into
 * @p buf. Returns 0 if one was found, else -ENOENT (@p buf: "").
 */
int app_eal_explain(int argc, char **argv, char *buf, size_t len);

/*
 * A device that did not start (--vdev NAME,ARGS): the keys of @p args
 * that its driver does not take, with those it does, from the
 * PMD_INFO_STRING each DPDK driver carries (dpdk-pmdinfo.py's source),
 * found in the program and the driver libraries loaded. Returns 0 with
 * the line in @p buf ("key rx_pcapp: net_pcap takes rx_pcap, tx_pcap,
 * ..."), or -ENOENT if every key is known or the driver is not found.
 */
int app_vdev_explain(const char *name, const char *args, char *buf,
		size_t len);

/*
 * The hugepage files this process maps (rte_memseg_walk(), each
 * segment's file by its descriptor), collected before rte_eal_cleanup()
 * and removed after it: the EAL keeps them, for secondary processes
 * (dpdk-dumpcap, dpdk-proc-info) to attach to, but not past the run
 * (DPDK 22.11's cleanup leaves those still holding memory, which would
 * hold the pages until the next start with the same --file-prefix).
 * A process killed leaves them to that next start, which removes them.
 */
void app_hugepage_files_collect(void);
void app_hugepage_files_remove(void);

#endif /* _APP_EAL_HELP_H_ */
