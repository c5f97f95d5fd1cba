# canrun — the two commands a newcomer needs are `make demo` and `make test`.
# Each runs scripts/setup.sh first, which installs only what is missing.

BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup configure build test test-unit test-integration test-e2e test-browser \
        demo census bench format lock clean space-check

all: build

setup:
	@scripts/setup.sh

# A unity build: CMake compiles each target's sources in batches of 8, so the headers are read
# and their templates compiled once per batch; a fresh build takes half the time (2 cores: 492 →
# 250 s). For file-by-file rebuilds while editing: CMAKE_FLAGS=-DCMAKE_UNITY_BUILD=OFF.
$(BUILD_DIR)/build.ninja: CMakeLists.txt $(wildcard */CMakeLists.txt */*/CMakeLists.txt)
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=ON $(CMAKE_FLAGS)

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Every tier; each tier alone through test-<label>.
test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) --no-tests=error

test-unit test-integration test-e2e test-browser: test-%: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -L '^$*$$'

# The demo needs the canrun binary alone, not the tests and benchmarks.
demo: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target canrun
	scripts/demo.sh $(BUILD_DIR)

# The architecture census of both stacks on cpu, published in demo/census: hours of CPU, resumable
# (run it again to continue). Not part of `make demo` or `make test`.
census: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target canrun
	scripts/census.sh $(BUILD_DIR)

bench: build
	scripts/bench.sh $(BUILD_DIR)

# The Hugging Face Space (space/): packages it, builds canrun as its image does into a temporary
# prefix (build folder build-space/), serves a small dataset on loopback and asks it. Not part
# of `make test`; needs no Docker.
space-check:
	CANRUN_JOBS=$(JOBS) scripts/space-check.sh

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

# Re-pin every Python package after changing requirements.txt.
lock:
	python3 -m venv .venv-lock && .venv-lock/bin/pip install -q -r requirements.txt
	{ head -2 requirements.lock; .venv-lock/bin/pip freeze --exclude pip | sed 's/+cpu$$//'; } > requirements.lock.new
	mv requirements.lock.new requirements.lock && rm -rf .venv-lock

clean:
	rm -rf $(BUILD_DIR)
