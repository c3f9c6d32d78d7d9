/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opening libfabric at the first use, and the per-process provider list cache.
 *
 * Linking libfabric made every program that loads liboptireduce pay for libfabric's
 * load (about 0.2 s here: the PSM providers' constructors calibrate a clock) even when
 * it never opens an endpoint, as a communicator whose ranks share one host does not.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>

#include "load.h"
#include "optireduce.h"

#define OR_FI_SONAME    "libfabric.so.1"
#define OR_FI_CACHE_MAX 8

struct or_fi_api or_fi;

struct cache_entry {
	int ep_type;
	uint64_t caps; /* the hints' caps: a list found without FI_SOURCE must not serve a
	                  request for it */
	char prov[64];
	struct fi_info *list;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *handle;
static struct cache_entry cache[OR_FI_CACHE_MAX];
static int ncache;

/*
 * ofi_rxm posts FI_OFI_RXM_MSG_RX_SIZE (128) bounce buffers of 16 KiB per receive queue
 * and sets them up when the endpoint is enabled: 110-155 ms of fi_enable per endpoint
 * here, 2-15 ms with 32.  A value the user set wins.  libfabric reads it at its first
 * fi_getinfo, so this runs before that.
 */
static void provider_defaults(void)
{
	setenv("FI_OFI_RXM_MSG_RX_SIZE", "32", 0);
}

static int load_locked(void)
{
	if (handle)
		return 0;
	handle = dlopen(OR_FI_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!handle)
		return -OPTIREDUCE_ENOPROVIDER;
	*(void **)&or_fi.getinfo = dlsym(handle, "fi_getinfo");
	*(void **)&or_fi.freeinfo = dlsym(handle, "fi_freeinfo");
	*(void **)&or_fi.dupinfo = dlsym(handle, "fi_dupinfo");
	*(void **)&or_fi.fabric = dlsym(handle, "fi_fabric");
	*(void **)&or_fi.version = dlsym(handle, "fi_version");
	*(void **)&or_fi.strerror = dlsym(handle, "fi_strerror");
	if (!or_fi.getinfo || !or_fi.freeinfo || !or_fi.dupinfo || !or_fi.fabric ||
	    !or_fi.version || !or_fi.strerror) {
		dlclose(handle);
		handle = NULL;
		return -OPTIREDUCE_ENOPROVIDER;
	}
	provider_defaults();
	return 0;
}

int or_fi_load(void)
{
	int ret;

	pthread_mutex_lock(&lock);
	ret = load_locked();
	pthread_mutex_unlock(&lock);
	return ret;
}

static struct cache_entry *lookup(const struct fi_info *hints)
{
	const char *p = hints->fabric_attr->prov_name ? hints->fabric_attr->prov_name : "";

	for (int i = 0; i < ncache; i++)
		if (cache[i].ep_type == (int)hints->ep_attr->type && cache[i].caps == hints->caps &&
		    strcmp(cache[i].prov, p) == 0)
			return &cache[i];
	return NULL;
}

static void remember(const struct fi_info *hints, const struct fi_info *list)
{
	const char *p = hints->fabric_attr->prov_name ? hints->fabric_attr->prov_name : "";
	struct fi_info *copy = NULL, **tail = &copy;

	if (ncache == OR_FI_CACHE_MAX || strlen(p) >= sizeof(cache[0].prov))
		return;
	for (const struct fi_info *fi = list; fi; fi = fi->next) {
		*tail = or_fi.dupinfo(fi);
		if (!*tail) {
			or_fi.freeinfo(copy);
			return;
		}
		tail = &(*tail)->next;
	}
	cache[ncache].ep_type = (int)hints->ep_attr->type;
	cache[ncache].caps = hints->caps;
	strcpy(cache[ncache].prov, p);
	cache[ncache].list = copy;
	ncache++;
}

/* A deep copy of a cached list, so that callers free what they get as before. */
static int copy_list(const struct fi_info *src, struct fi_info **out)
{
	struct fi_info *copy = NULL, **tail = &copy;

	for (const struct fi_info *fi = src; fi; fi = fi->next) {
		*tail = or_fi.dupinfo(fi);
		if (!*tail) {
			or_fi.freeinfo(copy);
			return -FI_ENOMEM;
		}
		tail = &(*tail)->next;
	}
	*out = copy;
	return copy ? 0 : -FI_ENODATA;
}

int or_fi_getinfo_cached(uint32_t version, const struct fi_info *hints, struct fi_info **list)
{
	struct cache_entry *e;
	int ret;

	pthread_mutex_lock(&lock);
	ret = load_locked() ? -FI_ENODATA : 0;
	if (!ret && (e = lookup(hints)) != NULL) {
		ret = copy_list(e->list, list);
	} else if (!ret) {
		ret = or_fi.getinfo(version, NULL, NULL, 0, hints, list);
		if (!ret)
			remember(hints, *list);
	}
	pthread_mutex_unlock(&lock);
	return ret;
}
