! SPDX-License-Identifier: BSD-3-Clause
! Fortran MPI_ALLREDUCE ("use mpi") through liboptireduce_pmpi.so against
! PMPI_ALLREDUCE: REAL, INTEGER and DOUBLE PRECISION, with and without
! MPI_IN_PLACE; each must be served by liboptireduce (counters), and
! MPI_MAXLOC on MPI_2INTEGER must go to PMPI.  Exit 77 without the preload.
program pmpi_fortran
  use mpi
  use, intrinsic :: iso_c_binding, only: c_long_long
  implicit none
  interface
    subroutine counts(exact, pmpi, fortran) bind(C, name="pmpi_test_counts")
      import :: c_long_long
      integer(c_long_long), intent(out) :: exact, pmpi, fortran
    end subroutine counts
  end interface
  integer, parameter :: n = 100003
  integer :: ierr, rank, nranks, i, failures, total
  real, allocatable :: rs(:), rr(:), rref(:)
  integer, allocatable :: is(:), ir(:), iref(:)
  double precision, allocatable :: ds(:), dr(:), dref(:)
  integer :: pairs(2, 4), pres(2, 4), pref(2, 4)
  integer(c_long_long) :: e0, p0, f0, e1, p1, f1

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call counts(e0, p0, f0)
  if (e0 < 0) then
    if (rank == 0) print '(a)', 'liboptireduce_pmpi not loaded (LD_PRELOAD it): skipping'
    call MPI_FINALIZE(ierr)
    call exit(77)
  end if
  allocate(rs(n), rr(n), rref(n), is(n), ir(n), iref(n), ds(n), dr(n), dref(n))
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

  ! REAL SUM, separate buffers
  call MPI_ALLREDUCE(rs, rr, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_ierr('REAL SUM')
  call PMPI_ALLREDUCE(rs, rref, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(abs(rr - rref) > 2.0 * nranks * epsilon(1.0) * 71.0 * nranks)) call fail('REAL SUM')

  ! REAL MIN in place
  rr = rs
  call MPI_ALLREDUCE(MPI_IN_PLACE, rr, n, MPI_REAL, MPI_MIN, MPI_COMM_WORLD, ierr)
  call check_ierr('REAL MIN in place')
  call PMPI_ALLREDUCE(rs, rref, n, MPI_REAL, MPI_MIN, MPI_COMM_WORLD, ierr)
  if (any(rr /= rref)) call fail('REAL MIN in place')

  ! INTEGER SUM in place
  ir = is
  call MPI_ALLREDUCE(MPI_IN_PLACE, ir, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_ierr('INTEGER SUM in place')
  call PMPI_ALLREDUCE(is, iref, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(ir /= iref)) call fail('INTEGER SUM in place')

  ! INTEGER MAX, separate buffers; the send buffer must stay as it was
  call MPI_ALLREDUCE(is, ir, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check_ierr('INTEGER MAX')
  call PMPI_ALLREDUCE(is, iref, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (any(ir /= iref)) call fail('INTEGER MAX')
  if (is(5) /= mod(5 * 7 + rank * 13, 17) - 8) call fail('INTEGER MAX sendbuf')

  ! DOUBLE PRECISION SUM in place
  dr = ds
  call MPI_ALLREDUCE(MPI_IN_PLACE, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_ierr('DOUBLE PRECISION SUM in place')
  call PMPI_ALLREDUCE(ds, dref, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(abs(dr - dref) > 2.0d0 * nranks * epsilon(1.0d0) * 51.0d0 * nranks)) &
    call fail('DOUBLE PRECISION SUM in place')

  call counts(e1, p1, f1)
  if (e1 - e0 /= 5) call fail('not all 5 calls served by liboptireduce')

  ! MPI_MAXLOC on MPI_2INTEGER: PMPI
  call MPI_ALLREDUCE(pairs, pres, 4, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call check_ierr('2INTEGER MAXLOC')
  call PMPI_ALLREDUCE(pairs, pref, 4, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  if (any(pres /= pref)) call fail('2INTEGER MAXLOC')
  call counts(e0, p0, f0)
  if (e0 /= e1 .or. p0 /= p1 + 1 .or. f0 /= f1) call fail('MAXLOC not sent to PMPI')

  call PMPI_ALLREDUCE(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (total == 0) then
      print '(a)', 'PASS: Fortran (use mpi)'
    else
      print '(a,i0,a)', 'FAIL: Fortran (use mpi), ', total, ' failures'
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

end program pmpi_fortran
