#include "settle/core/build_info.h"

#include "settle/build_commit.h"  // generated at build time: SETTLE_BUILD_COMMIT

namespace settle {
namespace {

#if defined(__clang__)
constexpr std::string_view kCompiler = "Clang " __clang_version__;
#elif defined(__GNUC__)
constexpr std::string_view kCompiler = "GCC " __VERSION__;
#else
constexpr std::string_view kCompiler = "unknown compiler";
#endif

}  // namespace

const BuildInfo& ThisBuild() {
  static const BuildInfo info{SETTLE_VERSION, SETTLE_BUILD_COMMIT, SETTLE_BUILD_TYPE, kCompiler};
  return info;
}

}  // namespace settle
