#pragma once

#include <string_view>

// The admin console's files (coordinator/api/admin/), embedded by CMake into admin_assets.cc.
namespace settle::api::admin_assets {

extern const std::string_view kConsoleHtml;  // has an <!--ACCESS--> placeholder
extern const std::string_view kConsoleJs;
extern const std::string_view kConsoleCss;
extern const std::string_view kLoginHtml;  // has an <!--ERROR--> placeholder
extern const std::string_view kLoginCss;

}  // namespace settle::api::admin_assets
