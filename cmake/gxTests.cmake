# One runner holds every GXT_TEST of tests/test_*.c; each test is registered with
# ctest on its own (its own process).  Tests in the backend-free files run once;
# the others run on the CPU backend and again on CUDA (skipped, visibly, without a GPU).
file(GLOB GX_TEST_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/test_*.c)
set(GX_BACKEND_FREE_FILES test_lambda test_cache test_cuda_nvrtc test_install)
set(list_decls "")
set(list_rows "")
set(GX_ALL_TESTS "")
foreach(f ${GX_TEST_FILES})
  get_filename_component(fname ${f} NAME_WE)
  file(STRINGS ${f} lines REGEX "^GXT_TEST\\(([A-Za-z0-9_]+)\\)")
  foreach(line ${lines})
    string(REGEX REPLACE "^GXT_TEST\\(([A-Za-z0-9_]+)\\).*" "\\1" name "${line}")
    # A test may be written twice under #if (e.g. with and without CUDA): list it once.
    if(name IN_LIST GX_SEEN_TESTS)
      continue()
    endif()
    list(APPEND GX_SEEN_TESTS ${name})
    string(APPEND list_decls "void gxt_test_${name}(void);\n")
    string(APPEND list_rows "    {\"${name}\", gxt_test_${name}},\n")
    list(FIND GX_BACKEND_FREE_FILES ${fname} free_idx)
    if(free_idx GREATER -1)
      list(APPEND GX_ALL_TESTS "${name}:free")
    else()
      list(APPEND GX_ALL_TESTS "${name}:both")
    endif()
  endforeach()
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/gxt_list.h.tmp "${list_decls}\nstatic const struct { const char *name; void (*fn)(void); } gxt_list[] = {\n${list_rows}    {0, 0}\n};\n")
file(COPY_FILE ${CMAKE_BINARY_DIR}/gxt_list.h.tmp ${CMAKE_BINARY_DIR}/gxt_list.h ONLY_IF_DIFFERENT)

add_executable(gx_tests tests/runner.c ${GX_TEST_FILES})
target_include_directories(gx_tests PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tests ${CMAKE_BINARY_DIR})
target_compile_definitions(gx_tests PRIVATE GX_SOURCE_DIR="${CMAKE_SOURCE_DIR}" GX_BINARY_DIR="${CMAKE_BINARY_DIR}")
if(GX_HAVE_CUDA)
  target_compile_definitions(gx_tests PRIVATE GX_HAVE_CUDA=1)
  target_include_directories(gx_tests SYSTEM PRIVATE ${GX_CUDA_INCLUDE_DIR})
endif()
target_link_libraries(gx_tests PRIVATE gx_static)
if(GX_DLPACK_HEADER)
  target_compile_definitions(gx_tests PRIVATE "GX_DLPACK_HEADER=\"${GX_DLPACK_HEADER}\"")
endif()

# The tests do NOT get private kernel caches: every test process (and tool.options)
# points GX_CACHE_DIR at one disk cache in the build folder, build/test-cache, shared
# across runs and across the processes ctest -j runs at once.  That is safe because
# an entry's key is a SHA-256 of gx's version, the target, the compiler's identity
# and the whole source, and entries are written to a temporary file and renamed into
# place; it saves compiling the same kernels again in each of the ~200 processes.
# Only the tests of the disk cache itself (test_cache.c, map_cache_hit_miss_and_
# second_process) switch, inside the process, to fresh folders of their own.  The
# in-memory kernel table is per context, so nothing is shared in memory.
foreach(entry ${GX_ALL_TESTS})
  string(REPLACE ":" ";" parts ${entry})
  list(GET parts 0 name)
  list(GET parts 1 kind)
  if(kind STREQUAL "free")
    add_test(NAME ${name} COMMAND gx_tests ${name})
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77
      ENVIRONMENT "GX_BACKEND=cpu;GX_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
  else()
    add_test(NAME cpu.${name} COMMAND gx_tests ${name})
    set_tests_properties(cpu.${name} PROPERTIES SKIP_RETURN_CODE 77
      ENVIRONMENT "GX_BACKEND=cpu;GX_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
    add_test(NAME cuda.${name} COMMAND gx_tests ${name})
    set_tests_properties(cuda.${name} PROPERTIES SKIP_RETURN_CODE 77
      ENVIRONMENT "GX_BACKEND=cuda;GX_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
  endif()
endforeach()

# Dependencies between src/'s layers go one way (scripts/check-layers): includes,
# and calls between the library's objects.
add_test(NAME repo.layers COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/check-layers $<TARGET_OBJECTS:gx_objects>
         COMMAND_EXPAND_LISTS)

# The gx tool's command line (--help everywhere, unknown options, progress on stderr).
add_test(NAME tool.options COMMAND sh ${CMAKE_SOURCE_DIR}/tests/tool_options.sh $<TARGET_FILE:gx_tool>)
set_tests_properties(tool.options PROPERTIES
  ENVIRONMENT "GX_BACKEND=cpu;GX_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")

# A program built against the installed copy (pkg-config and find_package).
# Not under sanitizers: the consumer is built without them.
if(NOT GX_SANITIZE)
add_test(NAME install.consumer
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DBIN=${CMAKE_BINARY_DIR}
          -P ${CMAKE_SOURCE_DIR}/cmake/install_test.cmake)
set_tests_properties(install.consumer PROPERTIES TIMEOUT 600)
endif()

# C++ users: every public header compiles as C++17 without a warning, and links.
if(CMAKE_CXX_COMPILER)
  add_executable(gx_test_cxx_headers tests/test_cxx_headers.cpp)
  target_compile_options(gx_test_cxx_headers PRIVATE -Wall -Wextra -Werror -pedantic)
  target_link_libraries(gx_test_cxx_headers PRIVATE gx_static)
  add_test(NAME cxx.headers COMMAND gx_test_cxx_headers)
  set_tests_properties(cxx.headers PROPERTIES ENVIRONMENT "GX_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
  add_test(NAME cxx.raii_example COMMAND example_raii)
  set_tests_properties(cxx.raii_example PROPERTIES ENVIRONMENT "GX_BACKEND=cpu;GX_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endif()

# The CUDA runtime and gx in one program (cudaMalloc, the application's stream):
# built where the CUDA toolkit's cudart is; skips (77) without a GPU.
find_package(CUDAToolkit QUIET)
if(GX_HAVE_CUDA AND TARGET CUDA::cudart)
  add_executable(gx_test_cuda_runtime tests/cuda_runtime_interop.c)
  target_link_libraries(gx_test_cuda_runtime PRIVATE gx_static CUDA::cudart)
  add_test(NAME cuda.runtime_interop COMMAND gx_test_cuda_runtime)
  set_tests_properties(cuda.runtime_interop PROPERTIES SKIP_RETURN_CODE 77
    ENVIRONMENT "GX_BACKEND=cuda;GX_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endif()

# PyTorch / CuPy / NumPy exchange arrays with gx through DLPack capsules (ctypes on
# libgx.so).  Skips (77) where none of them is installed.  Not in sanitizer builds:
# an ASan-instrumented libgx.so cannot be loaded into an uninstrumented python (ASan
# must come first in the process), and the C tests cover the same calls there.
if(GX_DLPACK_HEADER AND Python3_Interpreter_FOUND AND NOT GX_SANITIZE)
  foreach(be cpu cuda)
    add_test(NAME ${be}.dlpack_roundtrip
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/dlpack_roundtrip.py $<TARGET_FILE:gx>)
    set_tests_properties(${be}.dlpack_roundtrip PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
      ENVIRONMENT "GX_BACKEND=${be};GX_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;GX_BUILD_DIR=${CMAKE_BINARY_DIR}")
  endforeach()
endif()

# gx/dist.h's checks on N ranks, one process each under mpirun (mpi.dist.nN below), or
# one thread per CUDA device (gx_dist_ranks --threads N: scripts/multi-gpu-check).
add_executable(gx_dist_ranks tests/mpi/dist_ranks.c)
target_include_directories(gx_dist_ranks PRIVATE ${CMAKE_SOURCE_DIR}/tests)
target_link_libraries(gx_dist_ranks PRIVATE gx_static Threads::Threads)

# The scaling benchmark of gx/dist.h, small, on one CPU rank (the table's rows).
add_test(NAME bench.dist_smoke COMMAND gx_bench_dist --backend cpu --log2 16 --reps 1 --ranks 1)
set_tests_properties(bench.dist_smoke PROPERTIES ENVIRONMENT "GX_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  TIMEOUT 300 PASS_REGULAR_EXPRESSION "\\| allreduce \\| busbw  \\|  1 \\|" FAIL_REGULAR_EXPRESSION "GX_ERR_")

# gx/comm.h over 1-4 MPI processes (tests/comm_mpi_main.c: its own program, each rank
# checking every collective against the host's reference).  mpirun runs as root here
# only with the two OMPI_ALLOW_* variables; shared memory without CMA (containers)
# needs single_copy_mechanism=none.  Skipped, visibly, in a gx built without MPI.
if(GX_HAVE_MPI)
  find_program(GX_MPIEXEC NAMES mpirun mpiexec HINTS ${MPIEXEC_EXECUTABLE})
  add_executable(gx_comm_mpi_tests tests/comm_mpi_main.c)
  target_link_libraries(gx_comm_mpi_tests PRIVATE gx_static ${MPI_C_LIBRARIES})
  target_include_directories(gx_comm_mpi_tests SYSTEM PRIVATE ${MPI_C_INCLUDE_DIRS})
  set(GX_MPI_ENV "GX_BACKEND=cpu;GX_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl_vader_single_copy_mechanism=none;OMPI_MCA_rmaps_base_oversubscribe=1;GX_CPU_THREADS=1")
  foreach(n 1 2 3 4)
    add_test(NAME mpi.comm.n${n} COMMAND ${GX_MPIEXEC} --oversubscribe -n ${n} $<TARGET_FILE:gx_comm_mpi_tests> all)
    set_tests_properties(mpi.comm.n${n} PROPERTIES ENVIRONMENT "${GX_MPI_ENV}" TIMEOUT 600
      PASS_REGULAR_EXPRESSION "comm mpi tests: all passed on ${n} ranks" FAIL_REGULAR_EXPRESSION "FAILED")
  endforeach()
  # A rank that never joins: the others return GX_ERR_TIMEOUT (2 s) and rank 0 ends the
  # job with MPI_Abort, so mpirun's own status is not the verdict; the printed line is.
  foreach(n 2 3)
    add_test(NAME mpi.comm_timeout.n${n} COMMAND ${GX_MPIEXEC} --oversubscribe -n ${n} $<TARGET_FILE:gx_comm_mpi_tests> timeout)
    set_tests_properties(mpi.comm_timeout.n${n} PROPERTIES ENVIRONMENT "${GX_MPI_ENV}" TIMEOUT 120
      PASS_REGULAR_EXPRESSION "rank 0: timeout test passed" FAIL_REGULAR_EXPRESSION "FAILED")
  endforeach()
  # The example and `gx info` over 3 ranks.
  add_test(NAME mpi.example_allreduce.n3 COMMAND ${GX_MPIEXEC} --oversubscribe -n 3 $<TARGET_FILE:example_allreduce>)
  set_tests_properties(mpi.example_allreduce.n3 PROPERTIES ENVIRONMENT "${GX_MPI_ENV}" TIMEOUT 300
    PASS_REGULAR_EXPRESSION "allreduce: PASS" FAIL_REGULAR_EXPRESSION "FAIL")
  add_test(NAME mpi.info.n2 COMMAND ${GX_MPIEXEC} --oversubscribe -n 2 $<TARGET_FILE:gx_tool> info)
  set_tests_properties(mpi.info.n2 PROPERTIES ENVIRONMENT "${GX_MPI_ENV}" TIMEOUT 300
    PASS_REGULAR_EXPRESSION "rank 1/2  host")
  # gx/dist.h over 1-4 MPI processes: tests/mpi/dist_ranks.c runs tests/dist_checks.h on
  # every rank (each distributed result against the single-process gx call on the whole
  # array); a failing rank exits 1, so mpirun's status is the verdict.
  foreach(n 1 2 3 4)
    add_test(NAME mpi.dist.n${n} COMMAND ${GX_MPIEXEC} --oversubscribe -n ${n} $<TARGET_FILE:gx_dist_ranks> ${CMAKE_BINARY_DIR})
    # Leak checking off in these processes only (ASan builds): LeakSanitizer reports
    # Open MPI's own allocations, made by MCA components it has unloaded by exit (no
    # library name left to suppress).  gx's side of dist is leak-checked by the
    # single-process dist_* tests.
    set_tests_properties(mpi.dist.n${n} PROPERTIES ENVIRONMENT "${GX_MPI_ENV};GX_COMM_TIMEOUT=120;ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1" TIMEOUT 900
      SKIP_RETURN_CODE 77 FAIL_REGULAR_EXPRESSION "FAILED")
  endforeach()
  add_test(NAME mpi.bench_dist.n2 COMMAND ${GX_MPIEXEC} --oversubscribe -n 2 $<TARGET_FILE:gx_bench_dist>
           --backend cpu --log2 16 --reps 1)
  set_tests_properties(mpi.bench_dist.n2 PROPERTIES ENVIRONMENT "${GX_MPI_ENV};GX_COMM_TIMEOUT=120;ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1" TIMEOUT 300
    PASS_REGULAR_EXPRESSION "\\| allreduce \\| busbw  \\|  2 \\|" FAIL_REGULAR_EXPRESSION "GX_ERR_")
else()
  add_test(NAME mpi.comm COMMAND ${CMAKE_COMMAND} -E echo "SKIP: gx built without MPI (install libopenmpi-dev)")
endif()
