#pragma once

#include <boost/beast/core/error.hpp>

#include <string>

#include "settle/net/request_reader.h"

namespace settle::net {

// The answer to a request Beast's parser refused: a status and what is wrong, naming the part
// of the request.
struct FramingError {
  int status = 400;
  std::string problem;
};

FramingError DescribeRequestError(const boost::beast::error_code& ec, const RequestLimits& limits);

// What is wrong with an answer Beast's parser refused, for the caller's message.
std::string DescribeResponseError(const boost::beast::error_code& ec);

}  // namespace settle::net
