#include "superkernel/support/Error.h"

namespace sk {

int exitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Mismatch: return 1;
    case ErrorKind::BadInput: return 2;
    case ErrorKind::Compile: return 3;
    case ErrorKind::Runtime:
    case ErrorKind::Io:
    case ErrorKind::Internal: return 4;
  }
  return 4;
}

const char* errorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::BadInput: return "bad input";
    case ErrorKind::Compile: return "compile error";
    case ErrorKind::Runtime: return "runtime error";
    case ErrorKind::Mismatch: return "mismatch";
    case ErrorKind::Io: return "i/o error";
    case ErrorKind::Internal: return "internal error";
  }
  return "error";
}

}  // namespace sk
