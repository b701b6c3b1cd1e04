#include "distflow/core/errno_text.h"

#include <string.h>

namespace distflow {

std::string ErrnoText(int error) {
  char buf[128];
  // GNU strerror_r: returns the text, in `buf` or in a static string.
  return strerror_r(error, buf, sizeof(buf));
}

}  // namespace distflow
