// The try-it page's files (index.html, try-it.js, try-it.css in this
// folder), compiled into the server by cmake/embed_file.cmake and served by
// the JSON API at /, /try-it.js and /try-it.css.
#ifndef DEBERTA_SERVICE_WEB_TRY_IT_PAGE_H_
#define DEBERTA_SERVICE_WEB_TRY_IT_PAGE_H_

#include <string_view>

namespace deberta::service::web {

std::string_view TryItHtml();
std::string_view TryItScript();
std::string_view TryItStyle();

}  // namespace deberta::service::web

#endif  // DEBERTA_SERVICE_WEB_TRY_IT_PAGE_H_
