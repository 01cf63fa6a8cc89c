#include "settle/engine/type_rules.h"

#include <array>
#include <string>

#include "settle/engine/msg_engine.h"
#include "settle/engine/request_rules.h"
#include "settle/engine/saga_engine.h"
#include "settle/engine/two_phase_engine.h"
#include "settle/engine/workflow_engine.h"

namespace settle::engine {
namespace {

// Every type's home, in the order errors name them. A new type is its home's descriptor here.
const std::array<const TypeRules*, kTransTypeCount>& Table() {
  static const std::array<const TypeRules*, kTransTypeCount> table = {
      &TccRules(), &XaRules(), &MsgRules(), &SagaRules(), &WorkflowRules()};
  return table;
}

}  // namespace

const TypeRules& RulesOf(TransType type) {
  for (const TypeRules* rules : Table()) {
    if (rules->type == type) return *rules;
  }
  // Every TransType has a home: a value outside the enum is a caller's bug (ParseTransType
  // makes none).
  std::abort();
}

std::span<const TypeRules* const> AllTypeRules() { return Table(); }

Status RefuseType(std::string_view operation, bool (*takes)(const TypeRules&)) {
  std::vector<std::string_view> names;
  for (const TypeRules* rules : Table()) {
    if (takes(*rules)) names.push_back(ToString(rules->type));
  }
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    list += i == 0 ? "" : i + 1 == names.size() ? " and " : ", ";
    list += names[i];
  }
  return FieldError("trans_type",
                    std::string(operation) + " applies to " + list + " transactions only");
}

}  // namespace settle::engine
