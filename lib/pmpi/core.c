/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * liboptireduce, opened with dlopen at the first call the interposer
 * serves.  Linking it would load libfabric and everything libfabric needs
 * into every preloaded program at exec, also into programs that never
 * reduce anything: Debian's libfabric needs libpsm2 and libpsm_infinipath,
 * whose constructors calibrate a clock for about 0.1 s each.
 *
 * The library is looked for next to the interposer first (installed or
 * uninstalled, both sit in one directory), then on the loader's path
 * (LD_LIBRARY_PATH, the cache).  Loading happens once per process; every
 * rank reaches it in the same collective call, and a failure is agreed on
 * with the other ranks like any other communicator creation failure.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pmpi_internal.h"

#ifndef ORP_CORE_SONAME
#define ORP_CORE_SONAME "liboptireduce.so.0"
#endif

struct orp_core orp_core;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_result = -1;

static void *open_core(void)
{
	static const char *const names[] = {ORP_CORE_SONAME, "liboptireduce.so"};
	char path[4096];
	Dl_info info;
	void *h;

	if (dladdr((void *)orp_core_load, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');
		size_t dir = slash ? (size_t)(slash - info.dli_fname) : 0;
		for (size_t i = 0; slash && i < sizeof(names) / sizeof(names[0]); i++) {
			if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)dir,
			                     info.dli_fname, names[i]) >= sizeof(path))
				continue;
			h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
			if (h)
				return h;
		}
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
	}
	orp_log(ORP_LOG_INFO, "cannot open %s: %s", ORP_CORE_SONAME, dlerror());
	return NULL;
}

#define SYM(field, name)                                                                           \
	do {                                                                                       \
		*(void **)&orp_core.field = dlsym(h, name);                                        \
		if (!orp_core.field) {                                                             \
			orp_log(ORP_LOG_WARN, "%s has no %s", ORP_CORE_SONAME, name);              \
			return;                                                                    \
		}                                                                                  \
	} while (0)

static void load(void)
{
	void *h = open_core();

	if (!h)
		return;
	SYM(init, "optireduce_init");
	SYM(finalize, "optireduce_finalize");
	SYM(comm_create, "optireduce_comm_create");
	SYM(comm_destroy, "optireduce_comm_destroy");
	SYM(comm_provider, "optireduce_comm_provider");
	SYM(allreduce, "optireduce_allreduce");
	SYM(iallreduce, "optireduce_iallreduce");
	SYM(reduce_scatter_block, "optireduce_reduce_scatter_block");
	SYM(ireduce_scatter_block, "optireduce_ireduce_scatter_block");
	SYM(test, "optireduce_test");
	SYM(wait, "optireduce_wait");
	SYM(strerror, "optireduce_strerror");
	SYM(dtype_size, "optireduce_dtype_size");
	SYM(dtype_name, "optireduce_dtype_name");
	SYM(op_name, "optireduce_op_name");
	/* The handle stays open: the library's threads and callbacks may outlive any owner. */
	load_result = 0;
}

int orp_core_load(void)
{
	pthread_once(&load_once, load);
	return load_result;
}

const char *orp_strerror(int err)
{
	if (load_result == 0)
		return orp_core.strerror(err);
	return err ? "liboptireduce cannot be loaded" : "Success";
}
