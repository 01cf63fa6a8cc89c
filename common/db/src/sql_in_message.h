#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace settle::db {

// A statement as error messages quote it: cut after 60 characters, enough to recognise the
// statement and short in logs.
inline std::string AbbreviateSql(std::string_view sql) {
  constexpr std::size_t kSqlInMessage = 60;
  if (sql.size() <= kSqlInMessage) return std::string(sql);
  return std::string(sql.substr(0, kSqlInMessage)) + "...";
}

}  // namespace settle::db
