# SPDX-License-Identifier: BSD-3-Clause
"""liboptireduce from Python (ctypes).

optireduce.Communicator is the library's communicator on a thread of its own;
optireduce.torch adds PyTorch: a DDP communication hook and all_reduce, both
bootstrapped through torch.distributed.  The library is loaded on first use:
from OPTIREDUCE_LIBRARY if set, else from where the build installed it.
"""
from ._library import (LibraryNotFound, OptiReduceError, algorithm_name, params, strerror,
                       version_string)
from .communicator import Communicator, Request
from .stats import Stats

__all__ = ["Communicator", "Request", "Stats", "OptiReduceError", "LibraryNotFound",
           "algorithm_name", "params", "strerror", "version_string"]
