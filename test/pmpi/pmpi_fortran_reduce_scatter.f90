! SPDX-License-Identifier: BSD-3-Clause
! Fortran MPI_REDUCE_SCATTER_BLOCK, MPI_IREDUCE_SCATTER_BLOCK,
! MPI_REDUCE_SCATTER and MPI_IREDUCE_SCATTER ("use mpi") through
! liboptireduce_pmpi.so against Open MPI's own PMPI_REDUCE_SCATTER_BLOCK and
! PMPI_REDUCE_SCATTER: REAL, INTEGER and DOUBLE PRECISION, with and without
! MPI_IN_PLACE; the nonblocking ones completed with MPI_WAIT, an MPI_TEST
! loop, MPI_WAITALL over a mix with MPI_IALLREDUCE and point-to-point
! requests, and MPI_REQUEST_FREE; MPI_REDUCE_SCATTER with equal and with
! different blocks, MPI_IREDUCE_SCATTER with different blocks and an empty
! one.  Every call must be served by liboptireduce (counters).  Exit 77
! without the preload.
program pmpi_fortran_reduce_scatter
  use mpi
  use, intrinsic :: iso_c_binding, only: c_long_long
  implicit none
  interface
    subroutine rs_counts(c) bind(C, name="pmpi_test_rs_counts")
      import :: c_long_long
      integer(c_long_long), intent(out) :: c(8)
    end subroutine rs_counts
  end interface
  integer, parameter :: n = 50003
  integer :: ierr, rank, nranks, i, failures, total, req, reqs(4), left, right, nall
  integer :: status(MPI_STATUS_SIZE), token_out, token_in, counts(64), mine, displ
  logical :: flag
  real, allocatable :: rs(:), rr(:), rref(:)
  integer, allocatable :: is(:), ir(:), iref(:), freed(:)
  double precision, allocatable :: ds(:), dr(:), dref(:)
  integer :: as(100), ar(100), aref(100)
  integer(c_long_long) :: c0(8), c1(8)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call rs_counts(c0)
  if (c0(1) < 0) then
    if (rank == 0) print '(a)', 'liboptireduce_pmpi not loaded (LD_PRELOAD it): skipping'
    call MPI_FINALIZE(ierr)
    call exit(77)
  end if
  nall = n * nranks
  allocate(rs(nall), rr(nall), rref(nall), is(nall), ir(nall), iref(nall), ds(nall), &
           dr(nall), dref(nall), freed(n))
  failures = 0
  do i = 1, nall
    rs(i) = real(mod(i * 7 + rank * 13, 1001)) / 7.0 - 70.0
    is(i) = mod(i * 7 + rank * 13, 17) - 8
    ds(i) = dble(mod(i * 3 + rank * 5, 1001)) / 7.0d0 - 50.0d0
  end do
  do i = 1, 100
    as(i) = mod(i + rank * 3, 11)
  end do
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)

  ! MPI_REDUCE_SCATTER_BLOCK: REAL SUM, then INTEGER MAX in place
  call MPI_REDUCE_SCATTER_BLOCK(rs, rr, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_ierr('REDUCE_SCATTER_BLOCK REAL SUM')
  call PMPI_REDUCE_SCATTER_BLOCK(rs, rref, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(abs(rr(1:n) - rref(1:n)) > 2.0 * nranks * epsilon(1.0) * 71.0 * nranks)) &
    call fail('REDUCE_SCATTER_BLOCK REAL SUM')
  ir = is
  call MPI_REDUCE_SCATTER_BLOCK(MPI_IN_PLACE, ir, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call PMPI_REDUCE_SCATTER_BLOCK(is, iref, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (any(ir(1:n) /= iref(1:n))) call fail('REDUCE_SCATTER_BLOCK INTEGER MAX in place')

  ! MPI_IREDUCE_SCATTER_BLOCK: DOUBLE PRECISION SUM with MPI_WAIT, INTEGER MIN in place
  ! with an MPI_TEST loop
  call MPI_IREDUCE_SCATTER_BLOCK(ds, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, &
                                 req, ierr)
  call check_ierr('IREDUCE_SCATTER_BLOCK start')
  call MPI_WAIT(req, status, ierr)
  if (req /= MPI_REQUEST_NULL) call fail('IREDUCE_SCATTER_BLOCK: request left after MPI_WAIT')
  call PMPI_REDUCE_SCATTER_BLOCK(ds, dref, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(abs(dr(1:n) - dref(1:n)) > 2.0d0 * nranks * epsilon(1.0d0) * 51.0d0 * nranks)) &
    call fail('IREDUCE_SCATTER_BLOCK DOUBLE PRECISION SUM')
  ir = is
  call MPI_IREDUCE_SCATTER_BLOCK(MPI_IN_PLACE, ir, n, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, &
                                 req, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_TEST(req, flag, status, ierr)
  end do
  call PMPI_REDUCE_SCATTER_BLOCK(is, iref, n, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  if (any(ir(1:n) /= iref(1:n))) call fail('IREDUCE_SCATTER_BLOCK INTEGER MIN in place')

  ! MPI_WAITALL over MPI_IREDUCE_SCATTER_BLOCK, MPI_IALLREDUCE and a ring exchange
  token_out = rank * 10 + 1
  token_in = -1
  call MPI_IREDUCE_SCATTER_BLOCK(is, ir, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_IRECV(token_in, 1, MPI_INTEGER, left, 7, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_ISEND(token_out, 1, MPI_INTEGER, right, 7, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_IALLREDUCE(as, ar, 100, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_WAITALL(4, reqs, MPI_STATUSES_IGNORE, ierr)
  call check_ierr('MPI_WAITALL')
  if (any(reqs /= MPI_REQUEST_NULL)) call fail('MPI_WAITALL: requests not freed')
  if (token_in /= left * 10 + 1) call fail('MPI_WAITALL: ring exchange')
  call PMPI_REDUCE_SCATTER_BLOCK(is, iref, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(ir(1:n) /= iref(1:n))) call fail('MPI_WAITALL: IREDUCE_SCATTER_BLOCK INTEGER SUM')
  call PMPI_ALLREDUCE(as, aref, 100, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(ar /= aref)) call fail('MPI_WAITALL: IALLREDUCE INTEGER SUM')

  ! MPI_REQUEST_FREE: operations complete in start order, so once a later one on the
  ! communicator is waited for, the freed one is done
  call MPI_IREDUCE_SCATTER_BLOCK(is, freed, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
  call MPI_REQUEST_FREE(req, ierr)
  call check_ierr('MPI_REQUEST_FREE')
  if (req /= MPI_REQUEST_NULL) call fail('MPI_REQUEST_FREE: request not MPI_REQUEST_NULL')
  call MPI_IREDUCE_SCATTER_BLOCK(is, ir, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call PMPI_REDUCE_SCATTER_BLOCK(is, iref, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (any(ir(1:n) /= iref(1:n))) call fail('INTEGER MAX after MPI_REQUEST_FREE')
  if (any(freed /= iref(1:n))) call fail('INTEGER MAX freed with MPI_REQUEST_FREE')

  ! MPI_REDUCE_SCATTER: blocks of different sizes (INTEGER SUM, in place too), then equal
  ! ones (REAL MIN)
  displ = 0
  do i = 1, nranks
    counts(i) = 100 * i + 3
    if (i - 1 < rank) displ = displ + counts(i)
  end do
  mine = counts(rank + 1)
  call MPI_REDUCE_SCATTER(is, ir, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_ierr('REDUCE_SCATTER different')
  call PMPI_REDUCE_SCATTER(is, iref, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(ir(1:mine) /= iref(1:mine))) call fail('REDUCE_SCATTER INTEGER SUM, different blocks')
  ir = is
  call MPI_REDUCE_SCATTER(MPI_IN_PLACE, ir, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(ir(1:mine) /= iref(1:mine))) &
    call fail('REDUCE_SCATTER INTEGER SUM in place, different blocks')
  counts(1:nranks) = 777
  call MPI_REDUCE_SCATTER(rs, rr, counts, MPI_REAL, MPI_MIN, MPI_COMM_WORLD, ierr)
  call PMPI_REDUCE_SCATTER(rs, rref, counts, MPI_REAL, MPI_MIN, MPI_COMM_WORLD, ierr)
  if (any(rr(1:777) /= rref(1:777))) call fail('REDUCE_SCATTER REAL MIN, equal blocks')

  ! MPI_IREDUCE_SCATTER: different blocks, rank 0's empty (INTEGER SUM) with MPI_WAIT, then
  ! in place (DOUBLE PRECISION MAX) with an MPI_TEST loop
  counts(1) = 0
  do i = 2, nranks
    counts(i) = 100 * i + 3
  end do
  mine = counts(rank + 1)
  call MPI_IREDUCE_SCATTER(is, ir, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call check_ierr('IREDUCE_SCATTER start')
  call MPI_WAIT(req, status, ierr)
  if (req /= MPI_REQUEST_NULL) call fail('IREDUCE_SCATTER: request left after MPI_WAIT')
  call PMPI_REDUCE_SCATTER(is, iref, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(ir(1:mine) /= iref(1:mine))) call fail('IREDUCE_SCATTER INTEGER SUM, different blocks')
  dr = ds
  call MPI_IREDUCE_SCATTER(MPI_IN_PLACE, dr, counts, MPI_DOUBLE_PRECISION, MPI_MAX, &
                           MPI_COMM_WORLD, req, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_TEST(req, flag, status, ierr)
  end do
  call PMPI_REDUCE_SCATTER(ds, dref, counts, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (any(dr(1:mine) /= dref(1:mine))) call fail('IREDUCE_SCATTER DOUBLE PRECISION MAX in place')

  ! Counters: 2 blocking, 5 nonblocking (the freed one finished before the one after it),
  ! 3 MPI_REDUCE_SCATTER, 2 MPI_IREDUCE_SCATTER, all served
  call rs_counts(c1)
  if (c1(1) - c0(1) /= 2 .or. c1(2) - c0(2) /= 2) &
    call fail('not 2 MPI_REDUCE_SCATTER_BLOCK served')
  if (c1(3) - c0(3) /= 5 .or. c1(4) - c0(4) /= 5) &
    call fail('not 5 MPI_IREDUCE_SCATTER_BLOCK served')
  if (c1(5) - c0(5) /= 3 .or. c1(6) - c0(6) /= 3) call fail('not 3 MPI_REDUCE_SCATTER served')
  if (c1(7) - c0(7) /= 2 .or. c1(8) - c0(8) /= 2) call fail('not 2 MPI_IREDUCE_SCATTER served')

  call PMPI_ALLREDUCE(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (total == 0) then
      print '(a)', 'PASS: Fortran reduce-scatters (use mpi)'
    else
      print '(a,i0,a)', 'FAIL: Fortran reduce-scatters (use mpi), ', total, ' failures'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (total /= 0) call exit(1)

contains

  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,a,a)', 'rank ', rank, ': ', what
    failures = failures + 1
  end subroutine fail

  subroutine check_ierr(what)
    character(*), intent(in) :: what
    if (ierr /= MPI_SUCCESS) call fail(what // ': ierr /= MPI_SUCCESS')
  end subroutine check_ierr

end program pmpi_fortran_reduce_scatter
