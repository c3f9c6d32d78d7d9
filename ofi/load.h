/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric, opened at the first use rather than linked, and its provider list cached
 * once per process (docs/design.md, "Set-up cost").  Private to ofi/: include it after
 * the libfabric headers; it routes the few exported libfabric functions ofi/ calls
 * through the opened library (every other fi_* call is an inline one through the
 * objects' operation tables).
 */
#ifndef OR_OFI_LOAD_H
#define OR_OFI_LOAD_H

#include <rdma/fabric.h>

struct or_fi_api {
	int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
	               struct fi_info **);
	void (*freeinfo)(struct fi_info *);
	struct fi_info *(*dupinfo)(const struct fi_info *);
	int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
	uint32_t (*version)(void);
	const char *(*strerror)(int);
};

/* Valid after or_fi_load() returned 0. */
extern struct or_fi_api or_fi;

/* Opens libfabric once per process: 0 or -OPTIREDUCE_ENOPROVIDER. */
int or_fi_load(void);

/*
 * fi_getinfo(version, hints) through a per-process cache keyed by the endpoint type and
 * the provider name in hints: libfabric's first call initialises every provider (about
 * 0.25 s here), later ones still walk them all.  *list is the caller's (fi_freeinfo).
 */
int or_fi_getinfo_cached(uint32_t version, const struct fi_info *hints, struct fi_info **list);

#define fi_getinfo  or_fi.getinfo
#define fi_freeinfo or_fi.freeinfo
#define fi_dupinfo  or_fi.dupinfo
#define fi_fabric   or_fi.fabric
#define fi_version  or_fi.version
#define fi_strerror or_fi.strerror

#endif /* OR_OFI_LOAD_H */
