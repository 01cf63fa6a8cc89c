#pragma once

#include <catch2/catch.hpp>

#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "settle/storage/store.h"

// Assertions shared by the Store contract tests: each REQUIREs success and returns the value.
namespace settle::storage::testing {

// Commits `batch` and requires it to succeed.
inline void MustCommit(Store& store, const WriteBatch& batch) {
  Status s = store.Commit(batch);
  INFO(s.ToString());
  REQUIRE(s.ok());
}

inline Transaction MustLoad(Store& store, const std::string& gid) {
  Result<std::optional<Transaction>> loaded = store.Load(gid);
  INFO(loaded.status().ToString());
  REQUIRE(loaded);
  REQUIRE(loaded->has_value());
  return **loaded;
}

inline ListPage MustList(Store& store, const ListQuery& query) {
  Result<ListPage> page = store.List(query);
  INFO(page.status().ToString());
  REQUIRE(page);
  return *page;
}

inline std::vector<Subscriber> MustSubscribers(Store& store, const std::string& topic) {
  Result<std::vector<Subscriber>> subscribers = store.Subscribers(topic);
  INFO(subscribers.status().ToString());
  REQUIRE(subscribers);
  return *subscribers;
}

inline std::vector<Topic> MustListTopics(Store& store) {
  Result<std::vector<Topic>> topics = store.ListTopics();
  INFO(topics.status().ToString());
  REQUIRE(topics);
  return *topics;
}

inline BulkJob MustLoadJob(Store& store, const std::string& id) {
  Result<std::optional<BulkJob>> loaded = store.LoadJob(id);
  INFO(loaded.status().ToString());
  REQUIRE(loaded);
  REQUIRE(loaded->has_value());
  return **loaded;
}

inline std::vector<BulkJob> MustListJobs(Store& store, std::size_t limit, bool running_only) {
  Result<std::vector<BulkJob>> jobs = store.ListJobs(limit, running_only);
  INFO(jobs.status().ToString());
  REQUIRE(jobs);
  return *jobs;
}

// The urls of `subscribers`, in their order.
inline std::vector<std::string> Urls(const std::vector<Subscriber>& subscribers) {
  std::vector<std::string> urls;
  for (const Subscriber& s : subscribers) urls.push_back(s.url);
  return urls;
}

inline std::vector<std::string> Gids(const ListPage& page) {
  std::vector<std::string> gids;
  for (const GlobalRecord& g : page.transactions) gids.push_back(g.gid);
  return gids;
}

// Runs body(t) for t in [0, threads) on that many threads, released together, and joins them.
template <typename Body>
void RunTogether(int threads, Body body) {
  std::latch start(threads);
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      start.arrive_and_wait();
      body(t);
    });
  }
  for (std::thread& thread : running) thread.join();
}

// "t<thread>-<i>": a gid unique to one iteration of one thread.
inline std::string ThreadGid(int thread, int i) {
  return "t" + std::to_string(thread) + "-" + std::to_string(i);
}

}  // namespace settle::storage::testing
