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

namespace settle {
namespace asio = boost::asio;
}  // namespace settle
