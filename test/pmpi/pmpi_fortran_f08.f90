! SPDX-License-Identifier: BSD-3-Clause
! Fortran MPI_Allreduce ("use mpi_f08") through liboptireduce_pmpi.so against
! PMPI_Allreduce: REAL and INTEGER, with and without MPI_IN_PLACE, all served
! by liboptireduce (counters).  Exit 77 without the preload.
program pmpi_fortran_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_long_long
  implicit none
  interface
    subroutine counts(exact, pmpi, fortran) bind(C, name="pmpi_test_counts")
      import :: c_long_long
      integer(c_long_long), intent(out) :: exact, pmpi, fortran
    end subroutine counts
  end interface
  integer, parameter :: n = 1000
  integer :: rank, nranks, i, failures, total
  real :: rs(n), rr(n), rref(n)
  integer :: is(n), ir(n), iref(n)
  integer(c_long_long) :: e0, p0, f0, e1, p1, f1

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call counts(e0, p0, f0)
  if (e0 < 0) then
    if (rank == 0) print '(a)', 'liboptireduce_pmpi not loaded (LD_PRELOAD it): skipping'
    call MPI_Finalize()
    call exit(77)
  end if
  failures = 0
  do i = 1, n
    rs(i) = real(mod(i * 7 + rank * 13, 101)) / 8.0 - 6.0
    is(i) = mod(i * 7 + rank * 13, 17) - 8
  end do

  call MPI_Allreduce(rs, rr, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  call PMPI_Allreduce(rs, rref, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  if (any(abs(rr - rref) > 2.0 * nranks * epsilon(1.0) * 7.0 * nranks)) call fail('REAL SUM')

  ir = is
  call MPI_Allreduce(MPI_IN_PLACE, ir, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call PMPI_Allreduce(is, iref, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (any(ir /= iref)) call fail('INTEGER SUM in place')

  rr = rs
  call MPI_Allreduce(MPI_IN_PLACE, rr, n, MPI_REAL, MPI_MAX, MPI_COMM_WORLD)
  call PMPI_Allreduce(rs, rref, n, MPI_REAL, MPI_MAX, MPI_COMM_WORLD)
  if (any(rr /= rref)) call fail('REAL MAX in place')

  call counts(e1, p1, f1)
  if (e1 - e0 /= 3 .or. p1 /= p0) call fail('not all 3 calls served by liboptireduce')

  call PMPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == 0) then
      print '(a)', 'PASS: Fortran (use mpi_f08)'
    else
      print '(a,i0,a)', 'FAIL: Fortran (use mpi_f08), ', total, ' failures'
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

end program pmpi_fortran_f08
