/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which of fi_getinfo's candidates an endpoint opens (or_ofi_open tries them best first).
 *
 * Provider choice for RDM: shared memory when every rank shares this host and
 * network namespace, else net, else tcp;ofi_rxm, else whatever libfabric
 * offers except "sockets" (unmaintained) and layered-over-UDP providers.
 * For DGRAM the default is udp.  OPTIREDUCE_PROVIDER overrides both.  Among
 * candidates the ranking leaves equal (the same provider on two NICs), the
 * domains the core prefers win, in its order (docs/design.md, "Placement").
 */
#include <string.h>

#include <rdma/fabric.h>

#include "ofi_int.h"

static int is_loopback(const struct fi_info *fi)
{
	const char *d = fi->domain_attr && fi->domain_attr->name ? fi->domain_attr->name : "";
	return strcmp(d, "lo") == 0;
}

/* Lower is better; negative means never choose automatically. */
static int rank_provider(const struct fi_info *fi, enum or_ofi_kind kind, int same_host)
{
	const char *p = fi->fabric_attr->prov_name;
	int score;

	if (!p || strcmp(p, "sockets") == 0 || strstr(p, "ofi_rxd") || strstr(p, "ofi_mrail") ||
	    strstr(p, "ofi_hook"))
		return -1;
	if (kind == OR_OFI_DGRAM)
		score = strcmp(p, "udp") == 0 ? 0 : 10;
	else if (strcmp(p, "shm") == 0)
		return -1; /* opt-in only (OPTIREDUCE_PROVIDER=shm): hangs at 4 ranks with
		              libfabric 1.17 */
	else if (strcmp(p, "net") == 0)
		score = 1;
	else if (strcmp(p, "tcp;ofi_rxm") == 0)
		score = 2;
	else if (strncmp(p, "psm", 3) == 0)
		return -1; /* needs Omni-Path hardware; fails late without it */
	else
		score = 5;
	if (score < 0)
		return score;
	/* A loopback domain only reaches peers inside this namespace, and is all they need. */
	if (is_loopback(fi))
		score += same_host ? 0 : 100;
	else if (same_host)
		score += 1;
	/* IPv6 link-local fabrics need scoped addresses; IPv4 is what launchers use. */
	if (fi->fabric_attr->name && strchr(fi->fabric_attr->name, ':'))
		score += 10;
	return score;
}

static int tried(struct fi_info *fi, struct fi_info *const *failed, int nfailed)
{
	for (int i = 0; i < nfailed; i++)
		if (failed[i] == fi)
			return 1;
	return 0;
}

/* Positions in the core's list of domains that order candidates; later ones tie. */
#define OR_DOMAIN_SLOTS 16

/* name is want[0..n), or want's device with a suffix ("mlx5_0-dgram", "rdmap0s31-rdm"). */
static int name_matches(const char *name, const char *want, size_t n)
{
	return name && strncmp(name, want, n) == 0 && (name[n] == '\0' || name[n] == '-');
}

/* fi's position in the comma-separated list names (0 = first), or -1 when absent. */
static int domain_pos(const struct fi_info *fi, const char *names)
{
	const char *dom = fi->domain_attr ? fi->domain_attr->name : NULL;
	const char *dev = fi->nic && fi->nic->device_attr ? fi->nic->device_attr->name : NULL;
	int pos = 0;

	for (const char *p = names; p && *p; pos++) {
		size_t n = strcspn(p, ",");
		if (n && (name_matches(dom, p, n) || name_matches(dev, p, n)))
			return pos;
		p += n;
		p += *p == ',';
	}
	return -1;
}

/*
 * The provider's rank first; between equals, the domain's place in want->domains, where
 * domains not listed come last, in libfabric's order.  With domains_only, only those.
 */
struct fi_info *or_ofi_choose(struct fi_info *list, enum or_ofi_kind kind,
                              const struct or_ofi_want *want, struct fi_info *const *failed,
                              int nfailed)
{
	const char *prov = want->provider;
	struct fi_info *best = NULL;
	int best_score = 1 << 30;

	for (struct fi_info *fi = list; fi; fi = fi->next) {
		int s = rank_provider(fi, kind, want->same_host);
		int pos = domain_pos(fi, want->domains);
		if (tried(fi, failed, nfailed) || (want->domains_only && pos < 0))
			continue;
		if (prov && *prov && strcmp(fi->fabric_attr->prov_name, prov) == 0)
			s = is_loopback(fi) && !want->same_host ? 100 : 0;
		if (s < 0)
			continue;
		if (pos < 0 || pos >= OR_DOMAIN_SLOTS)
			pos = OR_DOMAIN_SLOTS;
		s = s * (OR_DOMAIN_SLOTS + 1) + pos;
		if (s < best_score) {
			best = fi;
			best_score = s;
		}
	}
	return best;
}
