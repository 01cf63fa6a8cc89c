#pragma once

#include <string_view>

namespace settle {

// RFC 9110 token: what a header name may be.
bool IsValidHeaderName(std::string_view name);
// No CR, LF, NUL or other control characters except tab: a value cannot smuggle in another
// header or end the header block.
bool IsValidHeaderValue(std::string_view value);

}  // namespace settle
