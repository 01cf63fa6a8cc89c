#include "settle/core/file_text.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace settle {

Result<std::string> ReadFileText(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in) {
    const std::string reason = errno != 0 ? std::strerror(errno) : "read failed";
    return Status::Unavailable("cannot read " + path + ": " + reason);
  }
  return text.str();
}

}  // namespace settle
