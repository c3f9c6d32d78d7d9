! SPDX-License-Identifier: BSD-3-Clause
! Fortran MPI_Iallreduce ("use mpi_f08") through liboptireduce_pmpi.so against
! PMPI_Allreduce: MPI_Wait, MPI_Test, and MPI_Waitall over a mix with a ring
! exchange; REAL and INTEGER, with and without MPI_IN_PLACE, all served by
! liboptireduce (counters).  Exit 77 without the preload.
program pmpi_fortran_nonblocking_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_long_long
  implicit none
  interface
    subroutine nb_counts(calls, served) bind(C, name="pmpi_test_nb_counts")
      import :: c_long_long
      integer(c_long_long), intent(out) :: calls, served
    end subroutine nb_counts
  end interface
  integer, parameter :: n = 5003
  integer :: rank, nranks, i, failures, total, left, right, token_out, token_in
  real, asynchronous :: rs(n), rr(n)
  real :: rref(n)
  integer, asynchronous :: is(n), ir(n)
  integer :: iref(n)
  type(MPI_Request) :: req, reqs(3)
  logical :: flag
  integer(c_long_long) :: c0, s0, c1, s1

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call nb_counts(c0, s0)
  if (c0 < 0) then
    if (rank == 0) print '(a)', 'liboptireduce_pmpi not loaded (LD_PRELOAD it): skipping'
    call MPI_Finalize()
    call exit(77)
  end if
  failures = 0
  do i = 1, n
    rs(i) = real(mod(i * 7 + rank * 13, 101)) / 8.0 - 6.0
    is(i) = mod(i * 7 + rank * 13, 17) - 8
  end do
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)

  call MPI_Iallreduce(rs, rr, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call PMPI_Allreduce(rs, rref, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  if (any(abs(rr - rref) > 2.0 * nranks * epsilon(1.0) * 7.0 * nranks)) call fail('REAL SUM')

  ir = is
  call MPI_Iallreduce(MPI_IN_PLACE, ir, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, MPI_STATUS_IGNORE)
  end do
  call PMPI_Allreduce(is, iref, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (any(ir /= iref)) call fail('INTEGER SUM in place')

  token_out = rank + 100
  call MPI_Irecv(token_in, 1, MPI_INTEGER, left, 3, MPI_COMM_WORLD, reqs(1))
  call MPI_Iallreduce(rs, rr, n, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, reqs(2))
  call MPI_Isend(token_out, 1, MPI_INTEGER, right, 3, MPI_COMM_WORLD, reqs(3))
  call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE)
  call PMPI_Allreduce(rs, rref, n, MPI_REAL, MPI_MAX, MPI_COMM_WORLD)
  if (any(rr /= rref)) call fail('REAL MAX in MPI_Waitall')
  if (token_in /= left + 100) call fail('ring exchange in MPI_Waitall')

  call nb_counts(c1, s1)
  if (c1 - c0 /= 3 .or. s1 - s0 /= 3) call fail('not all 3 calls served by liboptireduce')

  call PMPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == 0) then
      print '(a)', 'PASS: Fortran MPI_Iallreduce (use mpi_f08)'
    else
      print '(a,i0,a)', 'FAIL: Fortran MPI_Iallreduce (use mpi_f08), ', total, ' failures'
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

end program pmpi_fortran_nonblocking_f08
