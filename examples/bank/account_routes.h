#pragma once

#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::bank {

// GET /api/accounts -> {"accounts":[{"account_id","balance","frozen"},...],"total":N}, where
// total is balance plus frozen of every account (pending credits are not money yet).
sdk::RouteHandler ListAccountsRoute(sdk::SqliteBarrierStore& store);

// GET /api/accounts/{id} -> {"account_id":"1","balance":N,"frozen":N}; 404 {"message":...}
// for an unknown id.
sdk::RouteHandler GetAccountRoute(sdk::SqliteBarrierStore& store);

}  // namespace settle::bank
