#pragma once

#include <memory>
#include <string>

#include "settle/core/status.h"

namespace settle::storage {

// An exclusive advisory lock (flock) on a file, held until destruction or process death.
// flock locks belong to the open file description, so a second lock on the same file fails
// even from the same process.
//
// Owns the file descriptor (closes it on destruction). Not thread-safe; nothing shares it.
class FileLock {
 public:
  // Creates `path` if needed and locks it without waiting. Unavailable naming `owner_name` if
  // another holder has it, or if the file cannot be created.
  static Result<std::unique_ptr<FileLock>> Acquire(const std::string& path,
                                                   const std::string& owner_name);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace settle::storage
