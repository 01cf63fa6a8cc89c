#pragma once

namespace settle::checker {

// settle-check's exit status: scripts and CI tell the three outcomes apart by it.
inline constexpr int kExitAllPassed = 0;  // no check failed (some may be unverified)
inline constexpr int kExitFailed = 1;     // at least one check failed
inline constexpr int kExitUsage = 2;      // bad arguments, or the participant is unreachable

}  // namespace settle::checker
