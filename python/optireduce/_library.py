# SPDX-License-Identifier: BSD-3-Clause
"""Loading liboptireduce with ctypes: prototypes, structures, codes, errors.

The library is found, in this order, at OPTIREDUCE_LIBRARY (a path), at the
path the build wrote into _config.py (the install's libdir, or the build
tree's .libs for a build-tree package), then by the dynamic loader's own
search (LD_LIBRARY_PATH, ld.so.cache).
"""
import ctypes
import ctypes.util
import os
import threading
from typing import List, Tuple

API_MAJOR = 0
API_MINOR = 1
API_VERSION = (API_MAJOR << 16) | API_MINOR
INPROGRESS = 1

# enum optireduce_dtype, in declaration order.
DTYPES = ("int8", "uint8", "int32", "uint32", "int64", "uint64",
          "float16", "bfloat16", "float32", "float64")
DTYPE = {name: i for i, name in enumerate(DTYPES)}
# enum optireduce_op.
OPS = ("sum", "prod", "min", "max", "avg")
OP = {name: i for i, name in enumerate(OPS)}
# enum optireduce_mode.
MODE = {"default": 0, "exact": 1, "bounded": 2}
MODE_NAMES = {v: k for k, v in MODE.items()}
# enum optireduce_phase_end.
PHASE_END = ("none", "all_data", "early_timeout", "hard_bound")

STATUS_BOUNDED = 0x1
STATUS_FELL_BACK = 0x2
STATUS_DEADLINE_FIRED = 0x4
STATUS_INCOMPLETE = 0x8
STATUS_CONSISTENT = 0x10

EOOB = 258
ENOPROVIDER = 257
ENOPARAM = 262
EBUSY = 16
PHASES = 2

# Like MPI_IN_PLACE: sbuf value meaning "reduce rbuf in place".
IN_PLACE = ctypes.c_void_p(1)


class Status(ctypes.Structure):
    """struct optireduce_status."""
    _fields_ = [
        ("error", ctypes.c_int),
        ("flags", ctypes.c_uint32),
        ("mode", ctypes.c_int),
        ("algorithm", ctypes.c_int),
        ("elapsed_us", ctypes.c_double),
        ("elements_expected", ctypes.c_uint64 * PHASES),
        ("elements_received", ctypes.c_uint64 * PHASES),
        ("contributions_expected", ctypes.c_uint64),
        ("contributions_missing", ctypes.c_uint64),
        ("blocks_fallback", ctypes.c_uint64),
        ("packets_sent", ctypes.c_uint64),
        ("packets_received", ctypes.c_uint64),
        ("packets_invalid", ctypes.c_uint64),
        ("packets_stale", ctypes.c_uint64),
        ("packets_duplicate", ctypes.c_uint64),
        ("packets_parked", ctypes.c_uint64),
        ("deadline_us", ctypes.c_uint64 * PHASES),
        ("phase_end", ctypes.c_int * PHASES),
        ("ops_in_flight", ctypes.c_uint32),
        ("repair_requested", ctypes.c_uint64),
        ("repair_resent", ctypes.c_uint64),
        ("repair_recovered", ctypes.c_uint64),
        ("packets_send_failed", ctypes.c_uint64),
        ("packets_recv_failed", ctypes.c_uint64),
        ("packets_stranger", ctypes.c_uint64),
        ("bcast_multicast", ctypes.c_uint64),
        ("bcast_unicast", ctypes.c_uint64),
        ("consistent_us", ctypes.c_double),
        ("consistent_bytes", ctypes.c_uint64),
        ("consistent_packets_replaced", ctypes.c_uint64),
        ("consistent_packets_discarded", ctypes.c_uint64),
        ("consistent_blocks_zeroed", ctypes.c_uint64),
        ("consistent_asks", ctypes.c_uint64),
        ("consistent_packets_fetched", ctypes.c_uint64),
        ("packets_kernel_dropped", ctypes.c_uint64),
    ]


OOB_ALLGATHER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.c_void_p)


class Oob(ctypes.Structure):
    """struct optireduce_oob."""
    _fields_ = [
        ("allgather", OOB_ALLGATHER),
        ("coll_info", ctypes.c_void_p),
        ("rank", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
    ]


class CommAttr(ctypes.Structure):
    """struct optireduce_comm_attr."""
    _fields_ = [("oob", Oob), ("mode", ctypes.c_int)]


class ParamInfo(ctypes.Structure):
    """struct optireduce_param_info."""
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_char_p),
                ("defval", ctypes.c_char_p), ("desc", ctypes.c_char_p)]


class OptiReduceError(RuntimeError):
    """A negative code from liboptireduce, with the library's own message."""

    def __init__(self, code: int, where: str = "") -> None:
        self.code = -abs(int(code))
        self.message = strerror(self.code)
        text = "%s (%d)" % (self.message, self.code)
        super().__init__("%s: %s" % (where, text) if where else text)


class LibraryNotFound(OSError):
    """liboptireduce.so could not be loaded from any of the places tried."""


_P = ctypes.c_void_p
_PROTOTYPES = {
    "optireduce_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "optireduce_version": (ctypes.c_uint32, []),
    "optireduce_version_string": (ctypes.c_char_p, []),
    "optireduce_init": (ctypes.c_int, [ctypes.c_uint32, ctypes.POINTER(_P)]),
    "optireduce_finalize": (ctypes.c_int, [_P]),
    "optireduce_ctx_set_param": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p]),
    "optireduce_comm_set_param": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p]),
    "optireduce_comm_get_param": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p,
                                                 ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)]),
    "optireduce_comm_create": (ctypes.c_int, [_P, ctypes.POINTER(CommAttr), ctypes.POINTER(_P)]),
    "optireduce_comm_destroy": (ctypes.c_int, [_P]),
    "optireduce_comm_rank": (ctypes.c_int, [_P]),
    "optireduce_comm_size": (ctypes.c_int, [_P]),
    "optireduce_comm_provider": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "optireduce_allreduce": (ctypes.c_int, [_P, _P, _P, ctypes.c_size_t, ctypes.c_int,
                                            ctypes.c_int, ctypes.POINTER(Status)]),
    "optireduce_iallreduce": (ctypes.c_int, [_P, _P, _P, ctypes.c_size_t, ctypes.c_int,
                                             ctypes.c_int, ctypes.POINTER(_P)]),
    "optireduce_test": (ctypes.c_int, [_P]),
    "optireduce_wait": (ctypes.c_int, [_P, ctypes.POINTER(Status)]),
    "optireduce_comm_progress": (ctypes.c_int, [_P, ctypes.c_int]),
    "optireduce_comm_wake": (ctypes.c_int, [_P]),
    "optireduce_dtype_size": (ctypes.c_size_t, [ctypes.c_int]),
    "optireduce_algorithm_name": (ctypes.c_char_p, [ctypes.c_int]),
    "optireduce_param_info": (ctypes.c_int, [ctypes.c_int, ctypes.POINTER(ParamInfo)]),
}

# Entry points a library of the same API version may lack (the package then does without).
_OPTIONAL = frozenset(["optireduce_comm_wake"])

_lock = threading.Lock()
_lib = None


def _candidates():
    env = os.environ.get("OPTIREDUCE_LIBRARY")
    if env:
        # An explicit choice is the only one tried: a fallback would hide a wrong path.
        return [env]
    found = []
    try:
        from . import _config  # written by make (build tree) or make install
        found.append(_config.LIBRARY)
    except ImportError:
        pass
    found.append(ctypes.util.find_library("optireduce") or "liboptireduce.so.0")
    return found


def _load():
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)  # CDLL: calls release the GIL
        except OSError as e:
            errors.append("%s: %s" % (path, e))
            continue
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name, None)
            if fn is None and name in _OPTIONAL:
                continue  # an older library: the package does without it
            if fn is None:
                fn = getattr(lib, name)  # raises AttributeError naming it
            fn.restype = restype
            fn.argtypes = argtypes
        version = lib.optireduce_version()
        if version >> 16 != API_MAJOR or (version & 0xffff) < API_MINOR:
            errors.append("%s: version %d.%d, this package needs %d.%d or a later minor"
                          % (path, version >> 16, version & 0xffff, API_MAJOR, API_MINOR))
            continue
        return lib
    raise LibraryNotFound("liboptireduce could not be loaded (set OPTIREDUCE_LIBRARY to its "
                          "path): " + "; ".join(errors))


def lib() -> ctypes.CDLL:
    """The loaded library (loaded on first use)."""
    global _lib
    with _lock:
        if _lib is None:
            _lib = _load()
        return _lib


def strerror(code: int) -> str:
    return lib().optireduce_strerror(int(code)).decode()


def check(ret: int, where: str = "") -> int:
    """Raise OptiReduceError for a negative return; pass anything else through."""
    if ret < 0:
        raise OptiReduceError(ret, where)
    return ret


def version_string() -> str:
    return lib().optireduce_version_string().decode()


def algorithm_name(algorithm_id: int) -> str:
    name = lib().optireduce_algorithm_name(int(algorithm_id))
    return name.decode() if name else "unknown"


def params() -> List[Tuple[str, str, str, str]]:
    """The parameter table: list of (name, type, default, description)."""
    out, info, i = [], ParamInfo(), 0
    while lib().optireduce_param_info(i, ctypes.byref(info)) == 0:
        out.append((info.name.decode(), info.type.decode(), info.defval.decode(),
                    info.desc.decode()))
        i += 1
    return out
