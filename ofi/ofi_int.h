/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to ofi/: the endpoint as set-up (ofi.c) and data movement (xfer.c) share it.
 * Include after the libfabric headers.
 */
#ifndef OR_OFI_INT_H
#define OR_OFI_INT_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "ofi.h"

#define OR_CQ_BATCH   64
#define OR_OFI_MR_MAX 4 /* memory regions registered per endpoint */

struct or_ofi_mr {
	struct fid_mr *mr;
	const char *base;
	size_t len;
	void *desc;
};

struct or_ofi {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t *addrs;
	uint32_t naddrs;
	int can_wait;    /* the CQ has a wait object: fi_cq_sread blocks in the kernel */
	int has_source;  /* DGRAM with FI_SOURCE: receives say who sent them */
	int av_identity; /* addrs[i] == i: a source fi_addr is the peer's index */
	int kind;
	int send_err; /* libfabric's code of the last failed or_ofi_send, for the log */
	int sock_fd;  /* the endpoint's socket (sockbuf.c): -1 none, -2 not looked up yet */
	int closed;   /* or_ofi_quiesce closed it: it takes and returns nothing */
	/* RDM: transfers posted and not completed, newest first (or_ofi_quiesce). */
	struct or_xport_xfer *posted;
	unsigned nposted;
	/* DGRAM (docs/design.md, "Datagram providers"): bytes the provider owns before every
	 * send and receive buffer (FI_MSG_PREFIX), whether that prefix is only emulated (it then
	 * travels in the datagram), and whether buffers must be registered (FI_MR_LOCAL). */
	size_t prefix;
	int prefix_emulated;
	int need_mr;
	struct or_ofi_mr mr[OR_OFI_MR_MAX];
	unsigned nmr;
	char prov_name[64];
	/* Multicast (group.c, docs/design.md "Multicast"): the endpoint was opened with
	 * FI_MULTICAST; once joined, a second endpoint bound to the group's address and port,
	 * on the same address vector and completion queue, its event queue, the membership
	 * and its address for fi_sendmsg. */
	int multicast;
	struct fid_ep *gep;
	struct fid_eq *geq;
	struct fid_mc *gmc;
	fi_addr_t gaddr;
};
/* A libfabric return code as an OPTIREDUCE one (negative), or ret itself when >= 0. */
int or_fi_to_or(int ret);
/* The best candidate of list for kind, none of the nfailed in failed; NULL when none is left
 * (choose.c). */
struct fi_info *or_ofi_choose(struct fi_info *list, enum or_ofi_kind kind,
                              const struct or_ofi_want *want, struct fi_info *const *failed,
                              int nfailed);

#endif /* OR_OFI_INT_H */
