/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bounded channel's datagram endpoint (docs/design.md, "Datagram transports"): what the
 * parameters and the core's placement ask of it, which transport serves it and why, said
 * once in the log.
 */
#include "lib/bounded/bounded_int.h"

void or_bounded_dgram_want(const struct or_params *p, const struct or_nic_choice *nic,
                           int same_host, struct or_dgram_want *w)
{
	int64_t mcast = or_param_int(p, OR_P_MULTICAST);

	w->kind = (enum or_dgram_kind)or_param_int(p, OR_P_BOUNDED_TRANSPORT);
	w->provider = or_param_str(p, OR_P_BOUNDED_PROVIDER);
	w->domains = nic ? nic->names : NULL;
	w->domains_only = nic ? nic->only : 0;
	w->same_host = same_host;
	w->emulate_modes = (int)or_param_int(p, OR_P_EMULATE_DGRAM_MODES);
	w->multicast = mcast == OR_MCAST_ON || (mcast == OR_MCAST_AUTO && !same_host);
	w->flows = (unsigned)or_param_int(p, OR_P_UDP_FLOWS);
	w->gso = (int)or_param_int(p, OR_P_UDP_GSO);
	w->gro = (int)or_param_int(p, OR_P_UDP_GRO);
	w->mtu = (unsigned)or_param_int(p, OR_P_UDP_MTU);
}

/* Why a named libfabric provider cannot serve, or that iface named devices nobody offers. */
static void explain_failure(struct or_bounded *b, const struct or_dgram_want *w)
{
	char why[256];

	if (w->provider && *w->provider &&
	    or_ofi_explain(OR_OFI_DGRAM, w->provider, why, sizeof(why)) == 0)
		or_log(OR_LOG_WARN,
		       "%s: choose another for bounded mode (parameter bounded_provider)", why);
	else if (b->ch.comm->place.nic.only)
		or_placement_warn_unoffered(&b->ch.comm->place.nic, "bounded");
}

int or_bd_open_endpoint(struct or_bounded *b, int same_host)
{
	struct or_dgram_want w;
	char why[256], what[400];
	int ret;

	or_bounded_dgram_want(&b->ch.comm->params, &b->ch.comm->place.nic, same_host, &w);
	ret = or_dgram_open(&w, &b->ep, why, sizeof(why));
	if (ret) {
		or_log(OR_LOG_WARN, "bounded mode: no datagram endpoint (%s)", why);
		if (ret == -OPTIREDUCE_ENOPROVIDER)
			explain_failure(b, &w);
		return ret;
	}
	or_dg_describe(b->ep, what, sizeof(what));
	or_log(OR_LOG_INFO, "bounded transport %s (%s): %s", or_dgram_kind_name(b->ep->kind), why,
	       what);
	return 0;
}

/* At close: what the transport did, for the log. */
void or_bd_close_endpoint(struct or_bounded *b)
{
	char what[400];

	if (!b->ep)
		return;
	or_dg_describe(b->ep, what, sizeof(what));
	or_log(OR_LOG_DEBUG, "bounded transport closed: %s", what);
	or_dg_close(b->ep);
	b->ep = NULL;
}
