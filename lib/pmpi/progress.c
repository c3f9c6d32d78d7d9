/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress of the nonblocking operations (MPI_Iallreduce and the
 * MPI_Ireduce_scatter forms): a callback in MPI's own progress engine.
 * Open MPI calls every callback registered with opal_progress_register
 * (libopen-pal, exported and unchanged since Open MPI 1.x) on each pass of
 * its progress loop: inside
 * MPI_Wait, MPI_Test and their all/any/some forms, and inside every
 * blocking call (MPI_Recv, MPI_Barrier, Fortran MPI_WAIT, PMPI_ calls from
 * other libraries).  So a rank that waits for a plain request, or blocks
 * in any MPI call, still moves its liboptireduce operations along, and the
 * peer waiting for them is not left hanging, which wrapping only the wait
 * functions could not guarantee.
 *
 * The hook is looked up at run time.  Without it (another MPI) the
 * interposer leaves the nonblocking calls to MPI, for every rank alike.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "pmpi_internal.h"

typedef int (*progress_cb)(void);

static int (*hook_register)(progress_cb);
static int (*hook_unregister)(progress_cb);
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static atomic_int registered;
static _Thread_local int in_callback;

static int callback(void)
{
	int done;

	if (!atomic_load_explicit(&orp_pending, memory_order_relaxed) || in_callback)
		return 0;
	in_callback = 1;
	done = orp_comm_progress_all();
	in_callback = 0;
	return done;
}

static void init(void)
{
	*(void **)&hook_register = dlsym(RTLD_DEFAULT, "opal_progress_register");
	*(void **)&hook_unregister = dlsym(RTLD_DEFAULT, "opal_progress_unregister");
	if (!hook_register || !hook_unregister) {
		if (orp_world_rank == 0)
			orp_log(ORP_LOG_INFO, "no MPI progress hook (opal_progress_register): "
			                      "nonblocking calls go to PMPI");
		return;
	}
	/* Open MPI returns OPAL_SUCCESS (0). */
	if (hook_register(callback) == 0)
		atomic_store(&registered, 1);
	else
		orp_log(ORP_LOG_WARN,
		        "opal_progress_register failed: nonblocking calls go to PMPI");
}

int orp_progress_init(void)
{
	pthread_once(&init_once, init);
	return atomic_load(&registered) ? 0 : -1;
}

/* At shutdown, after every operation completed. */
void orp_progress_stop(void)
{
	if (atomic_exchange(&registered, 0))
		hook_unregister(callback);
}
