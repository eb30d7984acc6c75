# Strait: make build release image fmt lint test test-integration test-faults soak fuzz bench ci
GO          ?= go
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZEXECS   ?= 30000
BENCHFLAGS  ?=

# The version and commit `strait version` prints, linked into every build below.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
VERSION := $(VERSION)
COMMIT  := $(COMMIT)
LDFLAGS := -X strait/internal/cli.buildVersion=$(VERSION) -X strait/internal/cli.buildCommit=$(COMMIT)
# Static (no libc: it runs on scratch and any distribution) and trimpath (no build paths).
GOBUILD := CGO_ENABLED=0 $(GO) build -trimpath
RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

.PHONY: all build release image fmt lint test test-integration test-faults soak fuzz bench ci demo

all: build

build:
	$(GOBUILD) -ldflags '$(LDFLAGS)' -o bin/strait ./cmd/strait

# dist/strait-VERSION-OS-ARCH for every release platform, stripped of debug info, and
# dist/SHA256SUMS over exactly those four (check with: cd dist && sha256sum -c SHA256SUMS).
release:
	@set -e; mkdir -p dist; rm -f dist/SHA256SUMS; files=; \
	for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; out=strait-$(VERSION)-$$os-$$arch; \
		rm -f dist/strait-*-$$os-$$arch; \
		echo "build dist/$$out"; \
		GOOS=$$os GOARCH=$$arch $(GOBUILD) -ldflags '-s -w $(LDFLAGS)' -o dist/$$out ./cmd/strait; \
		files="$$files $$out"; \
	done; \
	cd dist && sha256sum $$files > SHA256SUMS && cat SHA256SUMS

# The container image (Dockerfile, FROM scratch), built with buildah from Debian's packages
# into dist/ as an archive for docker/podman load, then checked against bin/strait.
image: build
	VERSION='$(VERSION)' COMMIT='$(COMMIT)' scripts/image.sh build
	VERSION='$(VERSION)' COMMIT='$(COMMIT)' scripts/image.sh check

fmt:
	gofmt -w $$(git ls-files '*.go')

# lint fails on unformatted code, vet findings and staticcheck findings,
# for the unit and the integration build alike.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags integration ./...
	$(GO) vet -tags faults ./internal/faults/...
	$(STATICCHECK) -tags faults ./internal/faults/...
	@$(GO) mod tidy -diff >/dev/null || (echo "go mod tidy would change go.mod/go.sum"; exit 1)

# Unit tests: pure packages and kfake, with the race detector.
test:
	$(GO) test -race -count=1 ./...

# Integration tests: real Apache Kafka brokers, started once per package by
# scripts/kafka.sh (which fetches the jars with Maven on first use). Only the tests of
# the files built with the integration tag run: the unit tests of the same packages ran
# in `make test`, with -race, and would otherwise run again (about 2.5 minutes). Two
# packages at a time: most of their time is spent waiting on brokers and timeouts, and
# cmd/strait alone takes about 8 minutes (the whole stage: 532 s, against 879 s one
# package at a time, on 2 cores).
INTEGRATION_TESTS = $(shell grep -l '^//go:build integration' $$(git ls-files '*_test.go') | xargs grep -ho '^func Test[A-Za-z0-9_]*' | sed 's/^func //' | grep -vx TestMain | sort -u | paste -sd'|' -)
test-integration:
	scripts/kafka.sh fetch
	scripts/kdc.sh install
	scripts/chromium.sh install
	@test -n '$(INTEGRATION_TESTS)' || { echo "no integration tests found"; exit 1; }
	$(GO) test -tags integration -count=1 -p 2 -timeout 30m -run '^($(INTEGRATION_TESTS))$$' ./...

# Fault tests (internal/faults, build tag faults): the strait binary against real brokers
# (two single-broker clusters and one of three brokers), each behind a TCP fault proxy,
# under broker bounces, outages, latency, resets, leader changes, truncation, recreation,
# corruption and a million-key compacted topic, and a short randomized soak (TestSoak, 40 s
# of faults per mode); about 12 minutes on 2 cores.
test-faults:
	scripts/kafka.sh fetch
	$(GO) test -tags faults -count=1 -timeout 20m -v ./internal/faults

# The randomized fault schedule alone (TestSoak): three nodes in each of three modes under
# load while a nemesis draws faults from SEED (from the clock when empty; the test logs it),
# for MINUTES per mode (fractions allowed; 40 s when empty), e.g. make soak SEED=123
# MINUTES=30. The timeout allows each mode 5 minutes beyond MINUTES, and 10 for the set-up.
SEED    ?=
MINUTES ?=
SOAK_TIMEOUT = $(shell awk 'BEGIN { m = "$(MINUTES)" + 0; if (m <= 0) m = 0.5; printf "%dm", 3 * (m + 5) + 10 + 0.999 }')
soak:
	scripts/kafka.sh fetch
	STRAIT_SOAK_SEED='$(SEED)' STRAIT_SOAK_MINUTES='$(MINUTES)' \
		$(GO) test -tags faults -count=1 -timeout $(SOAK_TIMEOUT) -v -run '^TestSoak$$' ./internal/faults

# Fuzz targets, each for a bounded number of executions. A count, not a -fuzztime duration:
# Go 1.26's coordinator can report "context deadline exceeded" as a failure when a duration
# runs out under load (golang/go#75804, fixed in 1.27); a count sets no deadline to race.
fuzz:
	@set -e; for spec in \
		internal/wire:FuzzDecodeHeartbeat internal/wire:FuzzDecodeCheckpoint \
		internal/wire:FuzzDecodeOffsetSync internal/wire:FuzzDecodeConnectOffsetKey \
		internal/wire:FuzzDecodeConnectOffsetValue internal/wire:FuzzDecodeIndexSegment \
		internal/config:FuzzParse internal/batch:FuzzRecompress internal/saslconf:FuzzParseJAAS \
		internal/policy:FuzzParseRules; do \
		pkg=$${spec%%:*}; fn=$${spec##*:}; \
		echo "fuzz $$pkg $$fn ($(FUZZEXECS) runs)"; \
		$(GO) test -run='^$$' -fuzz="^$$fn$$" -fuzztime=$(FUZZEXECS)x ./$$pkg; \
	done

# Strait versus Apache MM2 on two local Kafka clusters (see bench/README.md); results go to
# bench/results. Pass flags with BENCHFLAGS, e.g. make bench BENCHFLAGS="-codec lz4".
bench:
	$(GO) run ./bench $(BENCHFLAGS)

demo:
	$(GO) run ./cmd/strait demo

# Everything CI runs.
# The stages one after the other, each with its time, so a slow CI run says where.
CI_STAGES = lint test test-integration test-faults fuzz image
ci:
	@for stage in $(CI_STAGES); do \
		start=$$(date +%s); \
		$(MAKE) --no-print-directory $$stage || { echo "make ci: $$stage failed after $$(( $$(date +%s) - start )) s"; exit 1; }; \
		echo "make ci: $$stage took $$(( $$(date +%s) - start )) s"; \
	done
