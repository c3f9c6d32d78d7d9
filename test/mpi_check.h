/*
 * Shared by the bounded-mode MPI tests (mpi_bounded, mpi_hostile, mpi_straggler): the
 * failure counter every rank keeps, and the deterministic inputs whose exact sums the
 * tests compare against.  Included once per test program.
 */
#ifndef OR_TEST_MPI_CHECK_H
#define OR_TEST_MPI_CHECK_H

#include <stdint.h>
#include <stdio.h>

static int rank, nranks, failures;

/* Every rank reports its own failures: loss and its errors are not even across ranks. */
#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "rank %d: ", rank);                                                \
		fprintf(stderr, __VA_ARGS__);                                                      \
		failures++;                                                                        \
	} while (0)

/* Deterministic, different per rank, element and trial, mean about zero. */
static float input(int r, size_t i, int trial)
{
	uint64_t z = (uint64_t)r * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull +
	             (uint64_t)trial * 0x94d049bb133111ebull;
	z ^= z >> 31;
	z *= 0xd6e8feb86659fd93ull;
	z ^= z >> 32;
	return (float)((double)(z & 0xffffff) / (double)0x1000000 - 0.5);
}

#endif /* OR_TEST_MPI_CHECK_H */
