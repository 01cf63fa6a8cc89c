// query, all and topics under --max-answer-bytes: each page within the cap (or one item), and
// following next_position to the end gives every item once, byte for byte.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "settle/api/transaction_json.h"

namespace settle::api {
namespace {

using nlohmann::json;

// A TCC of `n` branches whose bodies are `bytes` long, each its own (index and a pattern).
storage::Transaction BigTcc(std::size_t n, std::size_t bytes) {
  storage::Transaction tx;
  tx.global.id = 7;
  tx.global.gid = "big";
  tx.global.status = GlobalStatus::kPrepared;
  for (std::size_t i = 0; i < n; ++i) {
    storage::BranchRecord b;
    b.gid = "big";
    b.branch_id = std::to_string(1000 + i);
    b.op = i % 2 == 0 ? BranchOp::kConfirm : BranchOp::kCancel;
    b.url = "http://bank:8081/" + std::to_string(i);
    std::string data = std::to_string(i) + ":";
    while (data.size() < bytes) data += static_cast<char>('a' + (data.size() + i) % 26);
    // One in ten is not UTF-8 (a protobuf message's bytes): shown in base64.
    if (i % 10 == 3) data[data.size() / 2] = static_cast<char>(0xff);
    b.data = std::move(data);
    tx.branches.push_back(std::move(b));
  }
  return tx;
}

std::string Decoded(const json& branch);

TEST_CASE("a query with payloads is cut into pages within the cap, and followed to the end",
          "[answer_pages]") {
  const storage::Transaction tx = BigTcc(1000, 10'000);
  constexpr std::size_t kCap = 256 << 10;
  std::size_t position = 0;
  std::vector<json> branches;
  int pages = 0;
  for (;; ++pages) {
    REQUIRE(pages < 200);
    const std::string body = QueryResponseBody(tx, true, position, kCap);
    CHECK(body.size() <= kCap);
    const json page = json::parse(body);
    CHECK(page["transaction"]["gid"] == "big");
    for (const json& b : page["branches"]) branches.push_back(b);
    const std::string next = page["next_position"].get<std::string>();
    if (next.empty()) break;
    CHECK(std::stoul(next) == branches.size());
    position = std::stoul(next);
  }
  CHECK(pages > 10);
  REQUIRE(branches.size() == tx.branches.size());
  for (std::size_t i = 0; i < branches.size(); ++i) {
    INFO("branch " << i);
    CHECK(branches[i]["branch_id"] == tx.branches[i].branch_id);
    CHECK(Decoded(branches[i]) == tx.branches[i].data);
  }
}

TEST_CASE("a page always shows one branch, however large, so that paging moves on",
          "[answer_pages]") {
  const storage::Transaction tx = BigTcc(3, 100'000);
  const json first = json::parse(QueryResponseBody(tx, true, 0, 1000));
  CHECK(first["branches"].size() == 1);
  CHECK(first["next_position"] == "1");
  const json last = json::parse(QueryResponseBody(tx, true, 2, 1000));
  CHECK(last["branches"].size() == 1);
  CHECK(last["next_position"] == "");
  // Beyond the end: no branches, and nothing more.
  const json beyond = json::parse(QueryResponseBody(tx, true, 5, 1000));
  CHECK(beyond["branches"].empty());
  CHECK(beyond["next_position"] == "");
  // Uncut, as before: every branch and an empty next_position.
  const json whole = json::parse(QueryResponseBody(tx, true));
  CHECK(whole["branches"].size() == 3);
  CHECK(whole["next_position"] == "");
  CHECK(json::parse(QueryResponseBody(std::nullopt)) ==
        json::parse(R"({"transaction":null,"branches":[],"next_position":""})"));
}

TEST_CASE("all is cut within the cap, and its next_position starts with the first left out",
          "[answer_pages]") {
  storage::ListPage page;
  for (std::int64_t id = 500; id > 400; --id) {
    storage::GlobalRecord g;
    g.id = id;
    g.gid = "g" + std::to_string(id);
    g.options.custom_data = std::string(5000, 'x');
    page.transactions.push_back(g);
  }
  page.next_position = 401;
  const json cut = json::parse(ListResponseBody(page, 64 << 10));
  const std::size_t shown = cut["transactions"].size();
  CHECK(shown > 1);
  CHECK(shown < 100);
  CHECK(ListResponseBody(page, 64 << 10).size() <= (64 << 10));
  // The next page is the transactions with ids below position: the first left out onwards.
  const std::int64_t first_left_out = 500 - static_cast<std::int64_t>(shown);
  CHECK(cut["next_position"] == std::to_string(first_left_out + 1));
  // Uncut, the store's own position.
  CHECK(json::parse(ListResponseBody(page))["next_position"] == "401");
}

TEST_CASE("topics are cut within the cap, and next_position is the last name shown",
          "[answer_pages]") {
  std::vector<storage::Topic> topics;
  for (int i = 100; i < 400; ++i) {
    storage::Topic t{.name = "t" + std::to_string(i)};
    for (int s = 0; s < 20; ++s) {
      t.subscribers.push_back({.url = "http://mail:80/" + std::to_string(s), .remark = "r"});
    }
    topics.push_back(std::move(t));
  }
  std::string after;
  std::vector<std::string> names;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 100);
    const std::string body = TopicsResponseBody(topics, after, 64 << 10);
    CHECK(body.size() <= (64 << 10));
    const json page = json::parse(body);
    for (const json& t : page["topics"]) names.push_back(t["name"].get<std::string>());
    after = page["next_position"].get<std::string>();
    if (after.empty()) break;
    CHECK(after == names.back());
  }
  REQUIRE(names.size() == topics.size());
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(names[i] == topics[i].name);
}

std::string Base64Decoded(const std::string& text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned value = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    value = (value << 6) | static_cast<unsigned>(kAlphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((value >> bits) & 0xff);
    }
  }
  return out;
}

std::string Decoded(const json& branch) {
  const std::string data = branch["data"].get<std::string>();
  return branch["data_encoding"] == "base64" ? Base64Decoded(data) : data;
}

}  // namespace
}  // namespace settle::api
