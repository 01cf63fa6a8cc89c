#include "settle/core/thread_name.h"

#include <pthread.h>

#include <string>

namespace settle {

void NameThisThread(std::string_view name) {
  const std::string kept(name.substr(0, 15));
  pthread_setname_np(pthread_self(), kept.c_str());  // a failure only leaves the old name
}

}  // namespace settle
