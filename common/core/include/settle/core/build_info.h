#pragma once

#include <string>
#include <string_view>

namespace settle {

// What a binary was built from: the project's version (CMakeLists.txt), the git commit of the
// source tree at build time ("unknown" outside a checkout, with "-dirty" for changes not
// committed), the build type and the compiler. ThisBuild() (library settle_build_info) is
// the running binary's; code that reports it takes a BuildInfo, so that tests can give one.
struct BuildInfo {
  std::string_view version = "0.0.0";
  std::string_view commit = "unknown";
  std::string_view build_type = "unknown";
  std::string_view compiler = "unknown";
};

// The binary's own build; only binaries that link settle_build_info have it.
const BuildInfo& ThisBuild();

// "<program> 0.1.0 (commit 1a2b3c4d5e6f, RelWithDebInfo, GCC 12.2.0)": what --version prints.
inline std::string VersionLine(std::string_view program, const BuildInfo& b) {
  std::string line(program);
  line.append(" ").append(b.version);
  line.append(" (commit ").append(b.commit);
  line.append(", ").append(b.build_type);
  line.append(", ").append(b.compiler).append(")");
  return line;
}

}  // namespace settle
