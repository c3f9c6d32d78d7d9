/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Life cycle.  Nothing happens in MPI_Init: the first MPI_Allreduce (or MPI_Iallreduce) after
 * MPI_Init reads the environment, builds the type table, creates the
 * attribute keyval, and hooks an attribute on MPI_COMM_SELF whose delete
 * callback shuts everything down.  MPI deletes MPI_COMM_SELF's attributes
 * first thing in MPI_Finalize, while MPI still works (Open MPI 4.1 deletes
 * MPI_COMM_WORLD's next, already reporting MPI_Finalized = true), so the
 * shutdown also runs for programs whose MPI_Finalize is not intercepted
 * (Fortran, PMPI_Finalize).  Our MPI_Finalize runs it before PMPI_Finalize.
 * liboptireduce itself is opened later still, when a communicator's
 * channels are first created (core.c).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "pmpi_internal.h"

enum { PHASE_BEFORE, PHASE_ACTIVE, PHASE_DOWN };

static atomic_int phase = PHASE_BEFORE;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int thread_level = -1; /* as MPI_Init_thread returned it, -1 if not seen */
static int threads_blocked;
static int self_keyval = MPI_KEYVAL_INVALID;

static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)keyval, (void)val, (void)extra;
	orp_shutdown();
	return MPI_SUCCESS;
}

static void start(void)
{
	int level = thread_level;

	PMPI_Comm_rank(MPI_COMM_WORLD, &orp_world_rank);
	orp_log_init();
	orp_config_load();
	orp_types_init();
	if (level < 0)
		PMPI_Query_thread(&level);
	threads_blocked = level == MPI_THREAD_MULTIPLE && !orp_cfg.thread_multiple_ok;
	if (threads_blocked && orp_world_rank == 0)
		orp_log(ORP_LOG_WARN, "MPI_THREAD_MULTIPLE: every MPI_Allreduce goes to PMPI "
		                      "(OPTIREDUCE_PMPI_THREAD_MULTIPLE=1 serves them)");
	if (orp_comm_module_init() ||
	    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &self_keyval, NULL) ||
	    PMPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL)) {
		orp_log(ORP_LOG_WARN, "cannot create MPI attributes; MPI_Allreduce goes to PMPI");
		atomic_store(&phase, PHASE_DOWN);
		return;
	}
	/* Unless MPI_Finalize already ran (a call from an attribute callback). */
	int expected = PHASE_BEFORE;
	atomic_compare_exchange_strong(&phase, &expected, PHASE_ACTIVE);
}

int orp_active(void)
{
	int ph = atomic_load_explicit(&phase, memory_order_acquire), initialized, finalized;

	if (ph != PHASE_BEFORE)
		return ph == PHASE_ACTIVE;
	if (PMPI_Initialized(&initialized) || !initialized || PMPI_Finalized(&finalized) ||
	    finalized)
		return 0;
	pthread_once(&start_once, start);
	return atomic_load(&phase) == PHASE_ACTIVE;
}

int orp_threads_blocked(void)
{
	return threads_blocked;
}

void orp_note_thread_level(int provided)
{
	thread_level = provided;
}

/* Idempotent; the first caller of MPI_Finalize or the MPI_COMM_SELF callback does the work. */
void orp_shutdown(void)
{
	if (atomic_exchange(&phase, PHASE_DOWN) != PHASE_ACTIVE)
		return;
	/* Finishes every pending nonblocking operation, then nothing is left for MPI's progress
	 * engine. */
	orp_comm_destroy_all();
	orp_progress_stop();
	if (orp_world_rank == 0 && (orp_cfg.print_stats || orp_log_level >= ORP_LOG_INFO))
		orp_stats_print();
	/* Legal while MPI_COMM_SELF still holds it, even from its own callback. */
	PMPI_Comm_free_keyval(&self_keyval);
}
