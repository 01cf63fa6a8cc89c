#pragma once

namespace settle {

// Graceful stop on SIGINT or SIGTERM, for a main() that starts threads. Call
// BlockStopSignals() first, before any thread starts (threads inherit the mask), so that no
// thread is interrupted by them; then WaitForStopSignal() where the program should stop. Also
// ignores SIGPIPE: a peer closing a socket is an error to handle, not a reason to die.
void BlockStopSignals();

// Blocks until SIGINT or SIGTERM arrives; returns its number.
int WaitForStopSignal();

}  // namespace settle
