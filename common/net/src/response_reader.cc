#include "settle/net/response_reader.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/http/parser.hpp>

#include <algorithm>
#include <limits>

#include "framing_errors.h"

namespace settle::net {
namespace http = boost::beast::http;
namespace {

// A Beast body that keeps the first `keep` bytes and counts the rest.
struct PrefixBody {
  struct value_type {
    std::string data;
    std::size_t keep = 0;
    std::uint64_t total = 0;
  };

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(http::header<isRequest, Fields>&, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>&, boost::beast::error_code& ec) { ec = {}; }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& ec) {
      std::size_t n = 0;
      for (const auto piece : boost::beast::buffers_range_ref(buffers)) {
        const std::size_t room = body_.keep - std::min(body_.keep, body_.data.size());
        const char* bytes = static_cast<const char*>(piece.data());
        body_.data.append(bytes, std::min(room, piece.size()));
        n += piece.size();
      }
      body_.total += n;
      ec = {};
      return n;
    }

    void finish(boost::beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

}  // namespace

struct ResponseReader::Parser {
  http::response_parser<PrefixBody> beast;
};

ResponseReader::ResponseReader(std::size_t max_head_bytes, std::size_t keep_body_bytes)
    : max_head_bytes_(max_head_bytes), keep_body_bytes_(keep_body_bytes) {
  Restart();
}

ResponseReader::~ResponseReader() = default;

void ResponseReader::Restart() {
  parser_ = std::make_unique<Parser>();
  parser_->beast.header_limit(static_cast<std::uint32_t>(max_head_bytes_));
  // Kept to a prefix by PrefixBody. Not boost::none: Beast 1.74 compares a length with the
  // unset optional and refuses every body.
  parser_->beast.body_limit(std::numeric_limits<std::uint64_t>::max());
  parser_->beast.eager(true);
  parser_->beast.get().body().keep = keep_body_bytes_;
}

std::span<char> ResponseReader::Prepare(std::size_t n) {
  if (read_ > 0 && read_ >= buffer_.size() / 2) {
    buffer_.erase(0, read_);
    read_ = 0;
  }
  prepared_ = buffer_.size();
  buffer_.resize(prepared_ + n);
  return {buffer_.data() + prepared_, n};
}

void ResponseReader::Commit(std::size_t n) {
  buffer_.resize(prepared_ + std::min(n, buffer_.size() - prepared_));
  prepared_ = buffer_.size();
}

void ResponseReader::Append(std::string_view bytes) {
  std::span<char> room = Prepare(bytes.size());
  std::copy(bytes.begin(), bytes.end(), room.begin());
  Commit(bytes.size());
}

bool ResponseReader::reusable() const { return done_ && keep_alive_ && read_ == buffer_.size(); }

bool ResponseReader::got_some() const {
  return done_ || (parser_ != nullptr && parser_->beast.got_some()) || read_ < buffer_.size();
}

ResponseReader::Step ResponseReader::Take() {
  http::response_parser<PrefixBody>& beast = parser_->beast;
  done_ = true;
  keep_alive_ = beast.keep_alive();
  auto& message = beast.get();
  status_ = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    headers_.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  body_ = std::move(message.body().data);
  body_bytes_ = message.body().total;
  return Step::kResponse;
}

ResponseReader::Step ResponseReader::Parse() {
  if (done_) return Step::kResponse;
  if (!problem_.empty()) return Step::kMalformed;
  for (;;) {
    http::response_parser<PrefixBody>& beast = parser_->beast;
    const std::string_view data = std::string_view(buffer_).substr(read_);
    if (data.empty()) return Step::kNeedMore;
    boost::beast::error_code ec;
    const std::size_t used = beast.put(boost::asio::buffer(data.data(), data.size()), ec);
    read_ += used;
    if (ec && ec != http::error::need_more) {
      problem_ = DescribeResponseError(ec);
      return Step::kMalformed;
    }
    if (beast.is_done()) {
      const unsigned status = beast.get().result_int();
      // An interim answer ("100 Continue"): the real one follows on the same connection.
      if (status >= 100 && status < 200 && status != 101) {
        Restart();
        continue;
      }
      return Take();
    }
    if (used == 0 || read_ == buffer_.size()) return Step::kNeedMore;
  }
}

ResponseReader::Step ResponseReader::Eof() {
  const Step step = Parse();
  if (step != Step::kNeedMore) return step;
  if (!parser_->beast.got_some() && read_ == buffer_.size()) return Step::kNeedMore;
  boost::beast::error_code ec;
  parser_->beast.put_eof(ec);
  if (ec || !parser_->beast.is_done() || read_ < buffer_.size()) {
    problem_ = ec ? DescribeResponseError(ec) : "cut off before its end";
    return Step::kMalformed;
  }
  return Take();
}

}  // namespace settle::net
