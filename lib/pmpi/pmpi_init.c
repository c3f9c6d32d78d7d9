/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Init, MPI_Init_thread and MPI_Finalize.  Initialisation is lazy (the
 * first MPI_Allreduce), so the init wrappers only note the thread level;
 * MPI_Finalize destroys every cached liboptireduce communicator while MPI
 * still works, then finalizes MPI.
 */
#include "pmpi_internal.h"

ORP_EXPORT int MPI_Init(int *argc, char ***argv)
{
	int ret = PMPI_Init(argc, argv), provided;

	if (ret == MPI_SUCCESS && PMPI_Query_thread(&provided) == MPI_SUCCESS)
		orp_note_thread_level(provided);
	return ret;
}

ORP_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int ret = PMPI_Init_thread(argc, argv, required, provided);

	if (ret == MPI_SUCCESS && provided)
		orp_note_thread_level(*provided);
	return ret;
}

ORP_EXPORT int MPI_Finalize(void)
{
	orp_shutdown();
	return PMPI_Finalize();
}
