# Run at every build (cmake -P): writes OUTPUT, a header defining SETTLE_BUILD_COMMIT as the
# source tree's git commit ("unknown" outside a git checkout), with "-dirty" when tracked files
# differ from it. The file is rewritten only when that changes, so an unchanged tree rebuilds
# nothing.
#   -DSOURCE_DIR=<the source tree> -DOUTPUT=<the header>
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head RESULT_VARIABLE failed
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT failed AND head)
    set(commit "${head}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" status --porcelain
                            --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE failed ERROR_QUIET)
    if(NOT failed AND changes)
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(content "// Written by cmake/WriteBuildCommit.cmake at build time.\n#define SETTLE_BUILD_COMMIT \"${commit}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" previous)
endif()
if(NOT previous STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
