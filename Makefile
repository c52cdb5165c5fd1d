# agpol — make targets. `make test` is what CI runs (.ci/run).
GO        ?= go
export GOTOOLCHAIN ?= local
BIN       := bin

.PHONY: all build test test-short test-unit testenv ci-tools ci-check vet staticcheck fmt-check install clean release-check conformance-corpus

all: build

## build: the agpol binary and its kubectl plugin twin in ./bin, static and stripped as the release builds them
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(BIN)/agpol ./cmd/agpol
	cp $(BIN)/agpol $(BIN)/kubectl-agpol

## install: agpol and kubectl-agpol into $(GOBIN) (or GOPATH/bin)
install:
	$(GO) install ./cmd/agpol
	ln -sf agpol "$$($(GO) env GOPATH)/bin/kubectl-agpol"

## testenv: build kube-apiserver and etcd from their Go modules into ./bin (cached)
testenv:
	./hack/testenv/ensure.sh >/dev/null

## test: every test, including the live tests against a real kube-apiserver and etcd, and
## the tests of the GitHub Action, the pre-commit hook and docs/ci (hack/citest); then
## every fuzz target briefly (TEST_FUZZTIME each; a crasher fails the run)
TEST_FUZZTIME ?= 3s
test: testenv ci-tools vet staticcheck fmt-check kuadrant-oracle
	KUADRANT_ORACLE="$(CURDIR)/$(BIN)/kuadrant-oracle" KUBEBUILDER_ASSETS="$$(./hack/testenv/ensure.sh)" $(GO) test -timeout 30m ./...
	FUZZTIME=$(TEST_FUZZTIME) ./hack/fuzz.sh

## conformance-corpus: regenerate testdata/conformance from the Gateway API conformance suite
## of the gateway-api version in go.mod (hack/conformance; TestConformanceCorpus reads it)
conformance-corpus:
	$(GO) run ./hack/conformance -out testdata/conformance

## ci-tools: pre-commit and jq for hack/citest (installed with apt-get when missing, as root)
ci-tools:
	./hack/citest/install-tools.sh

## ci-check: only the tests of the CI integrations: action.yml (with actionlint), the
## pre-commit hook (with pre-commit try-repo) and the recipes of docs/ci
ci-check: ci-tools
	$(GO) test -count=1 ./hack/citest/

## release-check: `goreleaser check` on .goreleaser.yaml (goreleaser v2.15.1 built from the
## Go module proxy by hack/release-check.sh; building it takes minutes, so not in `make test`)
release-check:
	./hack/release-check.sh

## test-short: the inner loop: vet, then every test with -short (the live tests skip unless
## CI=true; the differential's and the slowest packages' long cases are trimmed)
test-short: vet
	$(GO) test -short ./...

## test-unit: the tests that need no API server (live tests skip unless CI=true)
test-unit:
	$(GO) test ./...

vet:
	$(GO) vet ./...

## staticcheck: staticcheck's default checks (honnef.co/go/tools, pinned in hack/tools/go.mod)
## on every package; a finding fails `make test`. Deliberate exceptions carry a
## //lint:ignore comment with the reason.
staticcheck:
	$(GO) -C hack/tools build -o $(CURDIR)/$(BIN)/staticcheck honnef.co/go/tools/cmd/staticcheck
	$(BIN)/staticcheck ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf $(BIN) dist

## fuzz: every fuzz target for FUZZTIME each (default 30s); crashers land in testdata/fuzz/
FUZZTIME ?= 30s
.PHONY: fuzz
fuzz:
	FUZZTIME=$(FUZZTIME) ./hack/fuzz.sh

## fuzz-long: every fuzz target for FUZZTIME_LONG each (default 30m), the inputs it finds
## kept between runs in FUZZ_CORPUS (default ~/.cache/agpol/fuzz, outside the repository);
## ends with executions, new inputs, corpus size and crashers per target
FUZZTIME_LONG ?= 30m
FUZZ_CORPUS   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/agpol/fuzz
.PHONY: fuzz-long
fuzz-long:
	FUZZTIME=$(FUZZTIME_LONG) FUZZCACHEDIR=$(FUZZ_CORPUS) FUZZSUMMARY=1 ./hack/fuzz.sh

## differential: N generated scenarios (20 requests each) against the upstream translator
## and an Envoy evaluator, beyond the fixed seed set of `make test`; prints scenarios/s.
## DIFFERENTIAL_VALIDATE=1 also runs the API server's validation on every object.
N ?= 100000
.PHONY: differential
differential:
	DIFFERENTIAL_N=$(N) $(GO) test ./internal/testsupport/differential -run '^TestLong$$' -v -timeout 0 | grep -v '^=== RUN'

## differential-kuadrant: N generated scenarios (10 requests each) against kuadrant-operator
## v1.5.2, policy-machinery v0.9.0 and Authorino v0.25.0 (hack/kuadrant-oracle, a Go module
## and process of its own); prints scenarios/s. The fixed seed set is `make test-kuadrant`.
.PHONY: differential-kuadrant test-kuadrant
differential-kuadrant: kuadrant-oracle
	KUADRANT_ORACLE="$(CURDIR)/$(BIN)/kuadrant-oracle" KUADRANT_DIFF_N=$(N) $(GO) test ./internal/testsupport/kuadrantdiff -run '^TestLong$$' -v -timeout 0 | grep -v '^=== RUN'

## test-kuadrant: only the Kuadrant harness's fixed seed set and regression cases
test-kuadrant: kuadrant-oracle
	KUADRANT_ORACLE="$(CURDIR)/$(BIN)/kuadrant-oracle" $(GO) test -count=1 ./internal/testsupport/kuadrantdiff

## kuadrant-oracle: the Kuadrant harness's oracle (hack/kuadrant-oracle, a Go module of its
## own: kuadrant-operator v1.5.2 and Authorino v0.25.0) into ./bin, vetted and tested; `make test` runs
## the harness's fixed seed set with it
.PHONY: kuadrant-oracle
kuadrant-oracle:
	cd hack/kuadrant-oracle && $(GO) vet . && $(GO) test -count=1 . && $(GO) build -o ../../$(BIN)/kuadrant-oracle .
