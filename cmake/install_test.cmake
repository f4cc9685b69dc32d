# Installs gx into a scratch prefix, then builds two consumers: the README's first program
# with the README's pkg-config line, and a tiny program with find_package(gx); runs both.
set(prefix ${BIN}/install-test/prefix)
file(REMOVE_RECURSE ${BIN}/install-test)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BIN} --prefix ${prefix} RESULT_VARIABLE r OUTPUT_QUIET)
if(r)
  message(FATAL_ERROR "cmake --install failed: ${r}")
endif()
file(WRITE ${BIN}/install-test/consumer.c [=[
#include <gx.h>
#include <stdio.h>
int main(void) {
    gx_ctx *ctx = NULL;
    if (gx_ctx_create(&ctx, GX_BACKEND_CPU) != GX_OK) { printf("%s\n", gx_last_error()); return 1; }
    gx_array *a = NULL;
    if (gx_array_iota(ctx, GX_I32, 5, 1, 1, &a) != GX_OK) return 1;
    int v[5];
    if (gx_array_to_host(a, v, sizeof v) != GX_OK) return 1;
    int ok = v[0] == 1 && v[4] == 5;
    printf("consumer of gx %s: %s\n", gx_version(), ok ? "ok" : "WRONG");
    gx_array_release(a);
    gx_ctx_destroy(ctx);
    return ok ? 0 : 1;
}
]=])
# pkg-config, exactly as the README tells a user: its first program (which must be
# examples/first.c, byte for byte), built with the README's command line, run with no
# LD_LIBRARY_PATH (the rpath in that line must find libgx.so), printing the right value.
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  file(READ ${SRC}/README.md readme)
  string(REGEX MATCH "<!-- first-program -->\n```c\n(.*)```\n<!-- /first-program -->" m "${readme}")
  if(NOT m)
    message(FATAL_ERROR "README.md: no first program between <!-- first-program --> markers")
  endif()
  set(program "${CMAKE_MATCH_1}")
  file(READ ${SRC}/examples/first.c example)
  if(NOT program STREQUAL example)
    message(FATAL_ERROR "README.md's first program differs from examples/first.c: keep them identical")
  endif()
  string(REGEX MATCH "\n(cc first[.]c[^\n]*)\n" m "${readme}")
  if(NOT m)
    message(FATAL_ERROR "README.md: no line starting 'cc first.c' (the build command)")
  endif()
  set(buildline "${CMAKE_MATCH_1}")
  file(MAKE_DIRECTORY ${BIN}/install-test/readme)
  file(WRITE ${BIN}/install-test/readme/first.c "${program}")
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig:${prefix}/lib64/pkgconfig:${prefix}/lib/x86_64-linux-gnu/pkgconfig)
  message(STATUS "README build line: ${buildline}")
  execute_process(COMMAND sh -c "${buildline}" WORKING_DIRECTORY ${BIN}/install-test/readme RESULT_VARIABLE r)
  if(r)
    message(FATAL_ERROR "the README's build line failed: ${buildline}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH GX_BACKEND=cpu ./first
                  WORKING_DIRECTORY ${BIN}/install-test/readme RESULT_VARIABLE r OUTPUT_VARIABLE out)
  message(STATUS "the README's first program printed:\n${out}")
  if(r)
    message(FATAL_ERROR "the README's first program failed (exit ${r})")
  endif()
  if(NOT out MATCHES "mean of sin\\(x\\)\\^2 \\+ cos\\(x\\)\\^2 = 1\\.000000")
    message(FATAL_ERROR "the README's first program printed a wrong mean")
  endif()
else()
  message(STATUS "pkg-config not installed: skipping that half")
endif()
# find_package
file(MAKE_DIRECTORY ${BIN}/install-test/cm)
file(WRITE ${BIN}/install-test/cm/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.21)
project(consumer C)
find_package(gx REQUIRED)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer PRIVATE gx::gx_static)
]=])
execute_process(COMMAND ${CMAKE_COMMAND} -S ${BIN}/install-test/cm -B ${BIN}/install-test/cm/build
                -DCMAKE_PREFIX_PATH=${prefix} RESULT_VARIABLE r OUTPUT_QUIET)
if(r)
  message(FATAL_ERROR "find_package(gx) configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BIN}/install-test/cm/build RESULT_VARIABLE r OUTPUT_QUIET)
if(r)
  message(FATAL_ERROR "find_package(gx) build failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env GX_BACKEND=cpu ${BIN}/install-test/cm/build/consumer RESULT_VARIABLE r)
if(r)
  message(FATAL_ERROR "the find_package consumer failed")
endif()
