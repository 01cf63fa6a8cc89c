#pragma once

#include <string>
#include <string_view>

#include "settle/core/status.h"
#include "settle/storage/records.h"

namespace settle::storage {

// TransOptions as the JSON text stored in trans_global.options:
//   {"branch_headers":{"Authorization":"Bearer t"},"concurrent":true,"custom_data":"",
//    "orders":{"1":[0]},"request_timeout":3000,"retry_interval":1000,"retry_limit":0,
//    "timeout_to_fail":35000,"request_fingerprint":"trans_type=saga\n..."}
// Durations are integer milliseconds. Missing keys and nulls decode as the defaults, so a
// field added later reads from older rows.

// InvalidArgument if a string (a header or custom_data) is not valid UTF-8, which JSON cannot
// carry; never throws.
Result<std::string> EncodeOptions(const TransOptions& options);

// Internal, describing what is wrong, if `json` is not an encoding of TransOptions; never
// throws.
Result<TransOptions> DecodeOptions(std::string_view json);

}  // namespace settle::storage
