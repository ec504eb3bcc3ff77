# trace_flags: the warning and sanitizer settings applied to our own targets only.
add_library(trace_flags INTERFACE)
target_compile_options(trace_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual
  -Wimplicit-fallthrough)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 reports false -Warray-bounds inside nlohmann::json's std::map (GCC bug 107138).
  # At -O3 (Release) it also reports false -Wrestrict in std::string's operator+ (GCC bug 105329).
  target_compile_options(trace_flags INTERFACE -Wno-array-bounds -Wno-restrict)
endif()
if(TRACE_WERROR)
  target_compile_options(trace_flags INTERFACE -Werror)
endif()
if(TRACE_SANITIZE)
  target_compile_options(trace_flags INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(trace_flags INTERFACE -fsanitize=address,undefined)
endif()
