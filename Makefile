# The two commands a new user needs:
#   make demo   -- configure + build in ./build, then run the tour
#   make test   -- build + run the whole test suite through ctest
# Others: make bench, make install PREFIX=..., make asan, make tsan, make deps, make clean.
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all demo test bench install asan tsan valgrind fuzz clean configure deps

all: configure
	cmake --build $(BUILD) -j $(JOBS)

# scripts/deps checks the build dependencies and installs the missing ones when it
# can (root or sudo without a password; GX_NO_INSTALL=1 stops it), else prints the
# command and the build goes on with optional features off.  When what is present
# changes, the state file is rewritten and CMake configures afresh.
deps:
	@scripts/deps --state $(BUILD)/deps.state

configure: deps
	@if [ -f $(BUILD)/CMakeCache.txt ] && [ $(BUILD)/deps.state -nt $(BUILD)/CMakeCache.txt ]; then rm -f $(BUILD)/CMakeCache.txt; fi
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

demo: all
	./$(BUILD)/gx tour

test: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: all
	./$(BUILD)/gx bench

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

# Sanitizer builds live in their own folders so they never mix with ./build.
asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGX_SANITIZE=address,undefined $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DGX_SANITIZE=thread $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && ctest --output-on-failure -R threads

# valgrind cannot run AVX-512: CPU kernels for it are built without, in their own cache.
valgrind: all
	GX_BACKEND=cpu GX_CC="cc -mno-avx512f" GX_CACHE_DIR=$(BUILD)/valgrind-cache valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	  ./$(BUILD)/gx_tests

# `all` first: the lambda prelude's pieces are embedded by the build ($(BUILD)/gx_prelude_*.inc).
fuzz: all
	clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc -I$(BUILD) -D_GNU_SOURCE \
	  src/core/error.c src/core/dtype.c src/jit/lambda*.c fuzz/fuzz_lambda.c -lm -o $(BUILD)/fuzz_lambda
	mkdir -p $(BUILD)/fuzz-corpus && cp fuzz/corpus/* $(BUILD)/fuzz-corpus/
	$(BUILD)/fuzz_lambda -max_total_time=$${FUZZ_SECONDS:-60} -max_len=256 $(BUILD)/fuzz-corpus

clean:
	rm -rf $(BUILD) build-asan build-tsan
