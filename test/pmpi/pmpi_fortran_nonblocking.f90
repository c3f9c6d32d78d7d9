! SPDX-License-Identifier: BSD-3-Clause
! Fortran MPI_IALLREDUCE ("use mpi") through liboptireduce_pmpi.so against
! PMPI_ALLREDUCE: completed with MPI_WAIT, an MPI_TEST loop, MPI_WAITALL over
! a mix with point-to-point requests, and MPI_REQUEST_FREE; REAL, INTEGER and
! DOUBLE PRECISION, with and without MPI_IN_PLACE.  Every MPI_IALLREDUCE must
! be served by liboptireduce (counters), and MPI_MAXLOC on MPI_2INTEGER must
! go to PMPI.  Exit 77 without the preload.
program pmpi_fortran_nonblocking
  use mpi
  use, intrinsic :: iso_c_binding, only: c_long_long
  implicit none
  interface
    subroutine nb_counts(calls, served) bind(C, name="pmpi_test_nb_counts")
      import :: c_long_long
      integer(c_long_long), intent(out) :: calls, served
    end subroutine nb_counts
  end interface
  integer, parameter :: n = 100003
  integer :: ierr, rank, nranks, i, failures, total, req, reqs(4), left, right, iters
  integer :: stats(MPI_STATUS_SIZE, 4), status(MPI_STATUS_SIZE)
  logical :: flag
  real, allocatable :: rs(:), rr(:), rref(:)
  integer, allocatable :: is(:), ir(:), iref(:), freed(:)
  double precision, allocatable :: ds(:), dr(:), dref(:)
  integer :: token_out, token_in, pairs(2, 4), pres(2, 4), pref(2, 4)
  integer(c_long_long) :: c0, s0, c1, s1

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call nb_counts(c0, s0)
  if (c0 < 0) then
    if (rank == 0) print '(a)', 'liboptireduce_pmpi not loaded (LD_PRELOAD it): skipping'
    call MPI_FINALIZE(ierr)
    call exit(77)
  end if
  allocate(rs(n), rr(n), rref(n), is(n), ir(n), iref(n), ds(n), dr(n), dref(n), freed(n))
  failures = 0
  do i = 1, n
    rs(i) = real(mod(i * 7 + rank * 13, 1001)) / 7.0 - 70.0
    is(i) = mod(i * 7 + rank * 13, 17) - 8
    ds(i) = dble(mod(i * 3 + rank * 5, 1001)) / 7.0d0 - 50.0d0
  end do
  do i = 1, 4
    pairs(1, i) = mod(i + rank * 3, 5)
    pairs(2, i) = rank
  end do
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)

  ! REAL SUM, MPI_WAIT
  call MPI_IALLREDUCE(rs, rr, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call check_ierr('REAL SUM start')
  call MPI_WAIT(req, status, ierr)
  call check_ierr('REAL SUM wait')
  if (req /= MPI_REQUEST_NULL) call fail('REAL SUM: request not MPI_REQUEST_NULL after MPI_WAIT')
  call PMPI_ALLREDUCE(rs, rref, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(abs(rr - rref) > 2.0 * nranks * epsilon(1.0) * 71.0 * nranks)) call fail('REAL SUM')

  ! INTEGER MAX in place, an MPI_TEST loop
  ir = is
  call MPI_IALLREDUCE(MPI_IN_PLACE, ir, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
  call check_ierr('INTEGER MAX in place start')
  flag = .false.
  iters = 0
  do while (.not. flag)
    call MPI_TEST(req, flag, status, ierr)
    iters = iters + 1
  end do
  call check_ierr('INTEGER MAX in place test')
  call PMPI_ALLREDUCE(is, iref, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (any(ir /= iref)) call fail('INTEGER MAX in place')

  ! MPI_WAITALL over two MPI_IALLREDUCE and a ring exchange, posted between them
  token_out = rank * 10 + 1
  token_in = -1
  call MPI_IALLREDUCE(ds, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_IRECV(token_in, 1, MPI_INTEGER, left, 7, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_ISEND(token_out, 1, MPI_INTEGER, right, 7, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_IALLREDUCE(is, ir, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_WAITALL(4, reqs, stats, ierr)
  call check_ierr('MPI_WAITALL')
  if (any(reqs /= MPI_REQUEST_NULL)) call fail('MPI_WAITALL: requests not freed')
  if (token_in /= left * 10 + 1) call fail('MPI_WAITALL: ring exchange')
  call PMPI_ALLREDUCE(ds, dref, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(abs(dr - dref) > 2.0d0 * nranks * epsilon(1.0d0) * 51.0d0 * nranks)) &
    call fail('MPI_WAITALL: DOUBLE PRECISION SUM')
  call PMPI_ALLREDUCE(is, iref, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(ir /= iref)) call fail('MPI_WAITALL: INTEGER SUM')

  ! MPI_REQUEST_FREE: the operation still runs to its end (freed stays allocated); the
  ! next blocking call on the communicator works
  call MPI_IALLREDUCE(is, freed, n, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, req, ierr)
  call MPI_REQUEST_FREE(req, ierr)
  call check_ierr('MPI_REQUEST_FREE')
  if (req /= MPI_REQUEST_NULL) call fail('MPI_REQUEST_FREE: request not MPI_REQUEST_NULL')
  call MPI_ALLREDUCE(is, ir, n, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  call PMPI_ALLREDUCE(is, iref, n, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  if (any(ir /= iref)) call fail('INTEGER MIN after MPI_REQUEST_FREE')

  ! Every MPI_IALLREDUCE so far served (the freed one counts once it finished: not checked)
  call nb_counts(c1, s1)
  if (c1 - c0 /= 5) call fail('not 5 MPI_IALLREDUCE calls counted')
  if (s1 - s0 < 4) call fail('not every MPI_IALLREDUCE served by liboptireduce')

  ! MPI_MAXLOC on MPI_2INTEGER: PMPI, still a working request
  call MPI_IALLREDUCE(pairs, pres, 4, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, status, ierr)
  call check_ierr('2INTEGER MAXLOC')
  call PMPI_ALLREDUCE(pairs, pref, 4, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  if (any(pres /= pref)) call fail('2INTEGER MAXLOC')

  call PMPI_ALLREDUCE(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (total == 0) then
      print '(a,i0,a)', 'PASS: Fortran MPI_IALLREDUCE (use mpi), test loop of ', iters, &
        ' calls on rank 0'
    else
      print '(a,i0,a)', 'FAIL: Fortran MPI_IALLREDUCE (use mpi), ', total, ' failures'
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

end program pmpi_fortran_nonblocking
