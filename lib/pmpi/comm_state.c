/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * liboptireduce state per MPI communicator, cached as an MPI attribute.
 *
 * Created on the first call on a communicator that passed every per-call
 * check; those checks depend only on arguments MPI requires to be the same
 * on every rank (datatype, op, count, communicator), so all ranks get here
 * together and the creation can be collective.  Each state owns a context
 * (a context is single-threaded, and MPI already serialises collectives on
 * one communicator), the exact communicator and, on the first call the
 * bounded policy picks, a bounded one.  MPI_Comm_free deletes the
 * attribute, whose callback destroys the state; MPI_Comm_dup does not copy
 * it.  Live states are listed so the shutdown can delete those of
 * communicators the program never freed, and so MPI's progress engine can
 * complete their nonblocking operations.  MPI_Comm_free and MPI_Finalize
 * are collective, so every rank finishes the pending operations there
 * before the channels go away.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "optireduce_mpi.h"
#include "pmpi_internal.h"

static int keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct orp_comm *live;

static void state_free(struct orp_comm *st)
{
	pthread_mutex_lock(&list_lock);
	if (st->prev)
		st->prev->next = st->next;
	else if (live == st)
		live = st->next;
	if (st->next)
		st->next->prev = st->prev;
	pthread_mutex_unlock(&list_lock);
	pthread_mutex_lock(&st->lock);
	orp_iops_complete(st, 1);
	if (st->bounded) {
		orp_core.comm_destroy(st->bounded);
		orp_stats_comm(0);
	}
	if (st->exact) {
		orp_core.comm_destroy(st->exact);
		orp_stats_comm(0);
	}
	if (st->ctx)
		orp_core.finalize(st->ctx);
	pthread_mutex_unlock(&st->lock);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

static int delete_cb(MPI_Comm comm, int kv, void *val, void *extra)
{
	(void)comm, (void)kv, (void)extra;
	if (val)
		state_free(val);
	return MPI_SUCCESS;
}

int orp_comm_module_init(void)
{
	return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &keyval, NULL) ==
	               MPI_SUCCESS
	           ? 0
	           : -1;
}

/*
 * Every rank learns whether any rank failed, and whether all were given the
 * same bounded policy.  Returns 1 if some rank failed.
 */
static int agree(MPI_Comm comm, int failed, int *policy_differs)
{
	int v[3] = {failed != 0, (int)(orp_cfg.digest & 0x7fffffff),
	            -(int)(orp_cfg.digest & 0x7fffffff)};

	if (PMPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
		return 1;
	if (policy_differs)
		*policy_differs = v[1] != -v[2];
	return v[0];
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* optireduce_comm_from_mpi_mode (optireduce_mpi.h), through the loaded library. */
static int channel_create(struct orp_comm *st, enum optireduce_mode mode, optireduce_comm_t **out)
{
	struct optireduce_comm_attr attr;
	MPI_Comm handle = st->comm;
	int size = 0;

	if (PMPI_Comm_size(st->comm, &size) != MPI_SUCCESS)
		return -OPTIREDUCE_EOOB;
	memset(&attr, 0, sizeof(attr));
	attr.oob.allgather = optireduce_mpi_oob_allgather;
	attr.oob.coll_info = &handle;
	attr.oob.rank = (uint32_t)st->rank;
	attr.oob.size = (uint32_t)size;
	attr.mode = mode;
	return orp_core.comm_create(st->ctx, &attr, out);
}

static const char *bounded_desc(const struct orp_comm *st, char *buf, size_t len)
{
	static const struct {
		enum optireduce_dtype dt;
		const char *name;
	} names[] = {{OPTIREDUCE_FLOAT32, "float"},
	             {OPTIREDUCE_FLOAT64, "double"},
	             {OPTIREDUCE_FLOAT16, "half"},
	             {OPTIREDUCE_BFLOAT16, "bfloat16"}};
	size_t n = 0;

	if (!st->bounded_allowed)
		return "off";
	buf[0] = '\0';
	for (int i = 0; i < orp_cfg.policy.nrules && n < len; i++) {
		const struct orp_rule *r = &orp_cfg.policy.rule[i];
		const char *sep = i ? "; " : "";
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]) && n < len; k++)
			if (r->dtypes & (1u << names[k].dt)) {
				n += (size_t)snprintf(buf + n, len - n, "%s%s", sep, names[k].name);
				sep = ",";
			}
		if (n < len && r->max_bytes == UINT64_MAX)
			n += (size_t)snprintf(buf + n, len - n, " >= %llu B",
			                      (unsigned long long)r->min_bytes);
		else if (n < len)
			n += (size_t)snprintf(buf + n, len - n, " %llu-%llu B",
			                      (unsigned long long)r->min_bytes,
			                      (unsigned long long)r->max_bytes);
	}
	return buf;
}

static void log_new(const struct orp_comm *st, int size, double ms)
{
	char desc[256];

	if (st->rank != 0 || orp_log_level < ORP_LOG_INFO)
		return;
	if (st->reason >= 0)
		/* Every rank is rank 0 of its MPI_COMM_SELF: those lines are for debug level. */
		orp_log(st->reason == OPTIREDUCE_PMPI_REASON_SINGLE ? ORP_LOG_DEBUG : ORP_LOG_INFO,
		        "%s (%d ranks): MPI_Allreduce goes to PMPI (%s)", st->name, size,
		        optireduce_pmpi_reason_name(st->reason));
	else
		orp_log(ORP_LOG_INFO,
		        "%s (%d ranks): MPI_Allreduce on liboptireduce, exact provider %s, "
		        "bounded %s; set up in %.1f ms",
		        st->name, size, orp_core.comm_provider(st->exact, OPTIREDUCE_MODE_EXACT),
		        bounded_desc(st, desc, sizeof(desc)), ms);
}

static void create_channels(struct orp_comm *st, MPI_Comm comm)
{
	int ret, differs = 0;

	st->bounded_allowed =
	    orp_cfg.policy.nrules > 0 && (orp_cfg.bounded_all_comms || comm == MPI_COMM_WORLD);
	ret = orp_core_load() ? -OPTIREDUCE_ENOSYS : 0;
	if (!ret)
		ret = orp_core.init(OPTIREDUCE_API_VERSION, &st->ctx);
	if (!ret)
		ret = channel_create(st, OPTIREDUCE_MODE_EXACT, &st->exact);
	if (ret && st->rank != 0)
		orp_log(ORP_LOG_INFO, "%s: liboptireduce communicator: %s", st->name,
		        orp_strerror(ret));
	if (agree(comm, ret, &differs)) {
		/* A warning once per process: later communicators would repeat it. */
		static atomic_int warned;
		if (st->rank == 0)
			orp_log(atomic_exchange(&warned, 1) ? ORP_LOG_INFO : ORP_LOG_WARN,
			        "%s: liboptireduce unavailable (%s), MPI_Allreduce goes to PMPI",
			        st->name, ret ? orp_strerror(ret) : "failed on another rank");
		if (st->exact)
			orp_core.comm_destroy(st->exact);
		st->exact = NULL;
		st->reason = OPTIREDUCE_PMPI_REASON_UNAVAILABLE;
		return;
	}
	orp_stats_comm(1);
	if (differs && st->bounded_allowed) {
		if (st->rank == 0)
			orp_log(ORP_LOG_WARN,
			        "%s: ranks were given different "
			        "OPTIREDUCE_PMPI_BOUNDED[_COMMS]; bounded mode off",
			        st->name);
		st->bounded_allowed = 0;
	}
}

static struct orp_comm *state_create(MPI_Comm comm)
{
	struct orp_comm *st = calloc(1, sizeof(*st));
	int inter = 0, size = 0, len = 0;
	double t0 = now_ms();

	if (!st)
		return NULL;
	st->comm = comm;
	st->reason = -1;
	atomic_init(&st->busy, 0);
	pthread_mutex_init(&st->lock, NULL);
	PMPI_Comm_rank(comm, &st->rank);
	PMPI_Comm_size(comm, &size);
	PMPI_Comm_get_name(comm, st->name, &len);
	if (len == 0)
		strcpy(st->name, "unnamed communicator");
	/* Local decisions first: they need no communication. */
	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		st->reason = OPTIREDUCE_PMPI_REASON_INTERCOMM;
	else if (size < 2)
		st->reason = OPTIREDUCE_PMPI_REASON_SINGLE;
	else
		create_channels(st, comm);
	if (PMPI_Comm_set_attr(comm, keyval, st) != MPI_SUCCESS) {
		state_free(st);
		return NULL;
	}
	pthread_mutex_lock(&list_lock);
	st->next = live;
	if (live)
		live->prev = st;
	live = st;
	pthread_mutex_unlock(&list_lock);
	log_new(st, size, now_ms() - t0);
	return st;
}

struct orp_comm *orp_comm_get(MPI_Comm comm)
{
	void *val = NULL;
	int found = 0;

	if (PMPI_Comm_get_attr(comm, keyval, &val, &found) != MPI_SUCCESS)
		return NULL;
	return found ? val : state_create(comm);
}

int orp_comm_bounded(struct orp_comm *st)
{
	double t0 = now_ms();
	int ret;

	if (st->bounded_state)
		return st->bounded_state > 0;
	ret = channel_create(st, OPTIREDUCE_MODE_BOUNDED, &st->bounded);
	if (agree(st->comm, ret, NULL)) {
		if (st->rank == 0)
			orp_log(ORP_LOG_WARN,
			        "%s: bounded mode unavailable (%s); its calls run exact", st->name,
			        ret ? orp_strerror(ret) : "failed on another rank");
		if (st->bounded)
			orp_core.comm_destroy(st->bounded);
		st->bounded = NULL;
		st->bounded_state = -1;
		return 0;
	}
	orp_stats_comm(1);
	if (st->rank == 0)
		orp_log(ORP_LOG_INFO, "%s: bounded channel ready, provider %s, in %.1f ms",
		        st->name, orp_core.comm_provider(st->bounded, OPTIREDUCE_MODE_BOUNDED),
		        now_ms() - t0);
	st->bounded_state = 1;
	return 1;
}

int orp_comm_progress_all(void)
{
	int done = 0;

	/* Never wait from inside MPI's progress engine: whoever holds a lock makes progress. */
	if (pthread_mutex_trylock(&list_lock))
		return 0;
	for (struct orp_comm *st = live; st; st = st->next) {
		if (!st->ihead || pthread_mutex_trylock(&st->lock))
			continue;
		done += orp_iops_complete(st, 0);
		pthread_mutex_unlock(&st->lock);
	}
	pthread_mutex_unlock(&list_lock);
	return done;
}

/* Deleting the attribute runs delete_cb, which frees the state and unlinks it. */
void orp_comm_destroy_all(void)
{
	for (;;) {
		struct orp_comm *st;
		MPI_Comm comm;

		pthread_mutex_lock(&list_lock);
		st = live;
		comm = st ? st->comm : MPI_COMM_NULL;
		pthread_mutex_unlock(&list_lock);
		if (!st)
			break;
		if (PMPI_Comm_delete_attr(comm, keyval) != MPI_SUCCESS && live == st)
			state_free(st); /* not reached in practice; never loop forever */
	}
	if (keyval != MPI_KEYVAL_INVALID)
		PMPI_Comm_free_keyval(&keyval);
}
