/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Print the MAC address of every port EAL creates from its arguments, one
 * "port N xx:xx:xx:xx:xx:xx" line each: the tests learn the addresses
 * l2fwd-sirq writes from DPDK itself instead of from a PMD's internals.
 */

#include <stdio.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

int
main(int argc, char **argv)
{
	struct rte_ether_addr mac;
	uint16_t port;
	int ret;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "mac_probe: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	RTE_ETH_FOREACH_DEV(port) {
		ret = rte_eth_macaddr_get(port, &mac);
		if (ret != 0) {
			fprintf(stderr, "mac_probe: port %u: %s\n", port,
				rte_strerror(-ret));
			return 1;
		}
		printf("port %u " RTE_ETHER_ADDR_PRT_FMT "\n", port,
		       RTE_ETHER_ADDR_BYTES(&mac));
	}
	RTE_ETH_FOREACH_DEV(port)
		rte_eth_dev_close(port);
	rte_eal_cleanup();
	return 0;
}
