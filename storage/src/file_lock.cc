#include "file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace settle::storage {

Result<std::unique_ptr<FileLock>> FileLock::Acquire(const std::string& path,
                                                    const std::string& owner_name) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::Unavailable("opening lock file " + path + ": " + std::strerror(errno));
  }
  int rc;
  do {
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return Status::Unavailable("database " + owner_name + " is in use by another process");
    }
    return Status::Unavailable("locking " + path + ": " + std::strerror(error));
  }
  return std::unique_ptr<FileLock>(new FileLock(fd));
}

// Closing the descriptor releases the lock. The file stays: removing it would let a second
// process lock a fresh inode while a third still holds the old one.
FileLock::~FileLock() { ::close(fd_); }

}  // namespace settle::storage
