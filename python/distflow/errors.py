"""Errors raised by distflow, with TensorFlow's names.

Every failure the C++ runtime reports arrives as the subclass of `OpError` for
its status code (`InvalidArgumentError` for code 3, ...), carrying `.code`,
`.message` and, where the failure names a node, its name as `.op_name`; an
error of Session.run naming a node of the session's graph also carries that
`.op` and its `.node_def` (name, op, input, device).
"""

import re

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failed operation: the base of every error the runtime reports."""

    def __init__(self, node_def, op, message, error_code=UNKNOWN):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    @property
    def code(self):
        return self._error_code

    @property
    def op_name(self):
        """The name of the node the message names, or None."""
        found = re.search(r"node '([^']+)'", self._message)
        return found.group(1) if found else None

    def __str__(self):
        return self._message


def _subclass(name, code, doc):
    def __init__(self, node_def=None, op=None, message="", *args):
        OpError.__init__(self, node_def, op, message, code)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc})


CancelledError = _subclass("CancelledError", CANCELLED, "The step or call was cancelled.")
UnknownError = _subclass("UnknownError", UNKNOWN, "An error of no other class.")
InvalidArgumentError = _subclass(
    "InvalidArgumentError", INVALID_ARGUMENT, "The caller gave a bad graph, feed or argument.")
DeadlineExceededError = _subclass(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline passed before the work finished.")
NotFoundError = _subclass("NotFoundError", NOT_FOUND, "A named thing does not exist.")
AlreadyExistsError = _subclass("AlreadyExistsError", ALREADY_EXISTS, "The thing exists already.")
PermissionDeniedError = _subclass(
    "PermissionDeniedError", PERMISSION_DENIED, "The caller may not do this.")
ResourceExhaustedError = _subclass(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "Out of memory or another limit.")
FailedPreconditionError = _subclass(
    "FailedPreconditionError", FAILED_PRECONDITION,
    "The system is not in the state the call needs (e.g. an uninitialized variable).")
AbortedError = _subclass("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _subclass(
    "OutOfRangeError", OUT_OF_RANGE, "Past the end (e.g. of an iterator's input).")
UnimplementedError = _subclass(
    "UnimplementedError", UNIMPLEMENTED, "The operation is not implemented or registered.")
InternalError = _subclass("InternalError", INTERNAL, "A bug in distflow.")
UnavailableError = _subclass(
    "UnavailableError", UNAVAILABLE, "A peer is unreachable now and may come back.")
DataLossError = _subclass("DataLossError", DATA_LOSS, "Data was lost or corrupted.")
UnauthenticatedError = _subclass(
    "UnauthenticatedError", UNAUTHENTICATED, "The caller is not authenticated.")

_CLASSES = {
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
}


def exception_type_from_error_code(error_code):
    return _CLASSES.get(error_code, UnknownError)


def _error_from_status(code, message):
    """The exception for a failed absl::Status (called by the extension)."""
    return exception_type_from_error_code(code)(None, None, message)
