#pragma once

// The parts of Boost.Asio that code outside the network room may use: the io_context,
// coroutines (awaitable, co_spawn, use_awaitable), timers and posting. Beast stays inside
// common/net/src.
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

// Coroutines and GCC 12: it destroys some temporaries that live across a co_await twice.
// In a coroutine, a co_await is a statement of its own or the whole right-hand side of an
// initialization or assignment: never inside a conditional expression, a || or &&, or the
// argument list of another call; and its arguments are named variables or moves of them,
// not braced aggregates, braced lists or string literals turned into strings.
namespace settle {
namespace asio = boost::asio;
}  // namespace settle
