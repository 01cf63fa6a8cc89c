#include "returned_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace settle::api {

void ReturnFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace settle::api
