# Installs gx into a scratch prefix, then builds a tiny consumer twice: once with
# pkg-config, once with find_package(gx), and runs both.
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
# pkg-config
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig:${prefix}/lib64/pkgconfig:${prefix}/lib/x86_64-linux-gnu/pkgconfig)
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs gx OUTPUT_VARIABLE flags RESULT_VARIABLE r OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(r)
    message(FATAL_ERROR "pkg-config --cflags --libs gx failed")
  endif()
  separate_arguments(flags)
  execute_process(COMMAND cc ${BIN}/install-test/consumer.c ${flags} -o ${BIN}/install-test/consumer_pc RESULT_VARIABLE r)
  if(r)
    message(FATAL_ERROR "building against pkg-config flags failed")
  endif()
  file(GLOB libdirs ${prefix}/lib*)
  string(REPLACE ";" ":" ldpath "${libdirs}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${ldpath}:${prefix}/lib/x86_64-linux-gnu GX_BACKEND=cpu
                  ${BIN}/install-test/consumer_pc RESULT_VARIABLE r)
  if(r)
    message(FATAL_ERROR "the pkg-config consumer failed")
  endif()
else()
  message(STATUS "pkg-config not installed: skipping that half")
endif()
# find_package
file(MAKE_DIRECTORY ${BIN}/install-test/cm)
file(WRITE ${BIN}/install-test/cm/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.25)
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
