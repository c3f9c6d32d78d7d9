! SPDX-License-Identifier: BSD-3-Clause
! Fortran MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block,
! MPI_Reduce_scatter and MPI_Ireduce_scatter ("use mpi_f08") through
! liboptireduce_pmpi.so against PMPI_Reduce_scatter_block and
! PMPI_Reduce_scatter: REAL and INTEGER, in place too, MPI_Waitall over a
! mix with a ring exchange, blocks of different sizes (an empty one too);
! all served by liboptireduce (counters).  Exit 77 without the preload.
program pmpi_fortran_reduce_scatter_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_long_long
  implicit none
  interface
    subroutine rs_counts(c) bind(C, name="pmpi_test_rs_counts")
      import :: c_long_long
      integer(c_long_long), intent(out) :: c(8)
    end subroutine rs_counts
  end interface
  integer, parameter :: n = 5003, nmax = 8 * n
  integer :: rank, nranks, i, failures, total, left, right, token_out, token_in, counts(8), mine
  real, asynchronous :: rs(nmax), rr(nmax)
  real :: rref(nmax)
  integer, asynchronous :: is(nmax), ir(nmax)
  integer :: iref(nmax)
  type(MPI_Request) :: req, reqs(3)
  integer(c_long_long) :: c0(8), c1(8)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call rs_counts(c0)
  if (c0(1) < 0) then
    if (rank == 0) print '(a)', 'liboptireduce_pmpi not loaded (LD_PRELOAD it): skipping'
    call MPI_Finalize()
    call exit(77)
  end if
  failures = 0
  do i = 1, nmax
    rs(i) = real(mod(i * 7 + rank * 13, 101)) / 8.0 - 6.0
    is(i) = mod(i * 7 + rank * 13, 17) - 8
  end do
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)

  call MPI_Reduce_scatter_block(rs, rr, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  call PMPI_Reduce_scatter_block(rs, rref, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  if (any(abs(rr(1:n) - rref(1:n)) > 2.0 * nranks * epsilon(1.0) * 7.0 * nranks)) &
    call fail('REAL SUM')

  ir = is
  call MPI_Ireduce_scatter_block(MPI_IN_PLACE, ir, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call PMPI_Reduce_scatter_block(is, iref, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (any(ir(1:n) /= iref(1:n))) call fail('INTEGER SUM in place, nonblocking')

  token_out = rank + 100
  call MPI_Irecv(token_in, 1, MPI_INTEGER, left, 3, MPI_COMM_WORLD, reqs(1))
  call MPI_Ireduce_scatter_block(rs, rr, n, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, reqs(2))
  call MPI_Isend(token_out, 1, MPI_INTEGER, right, 3, MPI_COMM_WORLD, reqs(3))
  call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE)
  call PMPI_Reduce_scatter_block(rs, rref, n, MPI_REAL, MPI_MAX, MPI_COMM_WORLD)
  if (any(rr(1:n) /= rref(1:n))) call fail('REAL MAX in MPI_Waitall')
  if (token_in /= left + 100) call fail('ring exchange in MPI_Waitall')

  do i = 1, nranks
    counts(i) = 50 * i + 1
  end do
  mine = counts(rank + 1)
  call MPI_Reduce_scatter(is, ir, counts, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
  call PMPI_Reduce_scatter(is, iref, counts, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
  if (any(ir(1:mine) /= iref(1:mine))) call fail('INTEGER MIN, different blocks')

  counts(1) = 0
  mine = counts(rank + 1)
  call MPI_Ireduce_scatter(is, ir, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call PMPI_Reduce_scatter(is, iref, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (any(ir(1:mine) /= iref(1:mine))) call fail('MPI_Ireduce_scatter, rank 0 empty')

  call rs_counts(c1)
  if (c1(2) - c0(2) /= 1 .or. c1(4) - c0(4) /= 2 .or. c1(6) - c0(6) /= 1 .or. &
      c1(8) - c0(8) /= 1) &
    call fail('not every call served by liboptireduce')

  call PMPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == 0) then
      print '(a)', 'PASS: Fortran reduce-scatters (use mpi_f08)'
    else
      print '(a,i0,a)', 'FAIL: Fortran reduce-scatters (use mpi_f08), ', total, ' failures'
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) call exit(1)

contains

  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,a,a)', 'rank ', rank, ': ', what
    failures = failures + 1
  end subroutine fail

end program pmpi_fortran_reduce_scatter_f08
