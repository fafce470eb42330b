# mediaspec — contract kit for the media generation API.
# `make test` is what CI runs; `make lint` adds format, tidiness and the independent spec linter.

GO      ?= go
# The release (cmd/mediaspec/run.go's const release, bumped per release) stamped into the binary and
# the image; it does not depend on a git tag.
VERSION ?= $(shell sed -n 's/^const release = "\(.*\)"$$/\1/p' cmd/mediaspec/run.go)
LDFLAGS := -s -w -X main.version=$(VERSION)
PKGS    := ./...

.PHONY: test-tools install-check contract-check contract-baseline check-modes weights weights-embedded all test vet race build image run mock check lint fmt-check tidy-check staticcheck lint-spec docs-check bench clean report-shot

all: lint test

## test: go vet, then every test with the race detector (the conformance suite runs against the
## in-process mock as part of it).
test: vet test-tools
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

## test-tools: one line per tool the tests use that this machine lacks, naming the tests that skip
## without it (.ci/run installs them all, so in CI they run).
test-tools:
	@command -v ffmpeg >/dev/null 2>&1 || echo "make test: ffmpeg is not installed: the media tests that encode with it skip (mock/render, fixtures/media/gen; .ci/run installs it)"
	@command -v ffprobe >/dev/null 2>&1 || echo "make test: ffprobe is not installed: the media tests that decode with it skip (mock/media, mock/render; .ci/run installs it)"
	@command -v chromium >/dev/null 2>&1 || echo "make test: chromium is not installed: the HTML report picture test skips (.ci/run installs it)"
	@timeout 10 docker info >/dev/null 2>&1 || echo "make test: no Docker engine answers: the check --image tests skip (.ci/run starts one)"

vet:
	$(GO) vet $(PKGS)

## install-check: go install github.com/mediaspec/mediaspec/cmd/mediaspec@$(VERSION) from a clean
## GOPATH, offline, against this checkout's committed tree served as that release by a file-based
## module proxy (.ci/install-check); the installed binary must say $(VERSION).
install-check:
	GO=$(GO) .ci/install-check

## contract-check: spec/openapi.yaml against the released contract (the newest
## spec/baseline/openapi-<version>.yaml) by the interface's versioning rules, with mediaspec diff:
## fails on a breaking change, or one whose info.version bump is missing, unless
## spec/baseline/exceptions.yaml records it with a reason. Annotations and descriptions are not
## contract changes.
CONTRACT_BASELINE ?= $(shell ls spec/baseline/openapi-*.yaml 2>/dev/null | sort -V | tail -n 1)
## It runs the built binary: `go run` would turn diff's exit 2 (could not compare) into 1.
contract-check: build
	@test -n "$(CONTRACT_BASELINE)" || { echo "contract-check: no spec/baseline/openapi-<version>.yaml"; exit 2; }
	bin/mediaspec diff --exceptions spec/baseline/exceptions.yaml $(CONTRACT_BASELINE) spec/openapi.yaml

## contract-baseline: at a release, keep spec/openapi.yaml as the released contract
## (spec/baseline/openapi-<info.version>.yaml) and empty the exceptions.
contract-baseline:
	@v=$$(sed -n 's/^  version: *//p' spec/openapi.yaml | head -n 1); \
	cp spec/openapi.yaml spec/baseline/openapi-$$v.yaml && \
	sed -i 's/^exceptions:.*/exceptions: []/; /^exceptions:/q' spec/baseline/exceptions.yaml && \
	echo "spec/baseline/openapi-$$v.yaml is the released contract"

## soak: the built mock on 127.0.0.1 under a bad-input corpus over every operation, slow and idle
## clients, a ledger storm with faults and a filled pending-upload limit (internal/soak, about a
## minute, bounded at 3): fails on a hang, an answer outside the envelope, an undocumented 5xx, a
## ledger that is not exact, or a resident set over docs/mock-limits.md's ceiling.
soak: build
	$(GO) run ./internal/soak --bin bin/mediaspec

## check-modes: the built binary checked out of process, the way implementers run it: the control
## API on a running clock (x100) and keys only, split over PROCS processes with check --procs
## (.ci/check-modes), and keys plus the mock's own profile (mock --profile-out, check --config,
## with a judged floor), and the same with test inputs (mock --test-inputs). MODES picks some (b, c, p, t).
MODES ?= b c p
PROCS ?= 8
check-modes: build
	PROCS=$(PROCS) .ci/check-modes bin/mediaspec $(MODES)

## weights: conformance/weights.json (how check --procs balances its processes) from the JSON
## reports of keys-only runs, each spec's mean over them, e.g. make weights REPORT='c1.json c2.json c3.json'
## after that many runs of make check-modes MODES=c (copy reports/modes/c.json after each): a spec's
## bucket waits move with the specs its process ran before it, so one run's figure is noisy.
REPORT ?= reports/modes/c.json
weights:
	MEDIASPEC_WEIGHTS_FROM="$(abspath $(REPORT))" $(GO) test -count=1 -run '^TestWriteWeights$$' ./conformance/

## weights-embedded: conformance/weights-embedded.json (how the embedded check balances its two
## processes) from an embedded run in one process.
weights-embedded: build
	mkdir -p reports && bin/mediaspec check --procs 1 --json-report reports/embedded-one.json >/dev/null
	MEDIASPEC_OWN_WEIGHTS_FROM=$(abspath reports/embedded-one.json) $(GO) test -count=1 -run '^TestWriteWeights$$' ./conformance/

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/mediaspec ./cmd/mediaspec

## image: the Docker image mediaspec:dev, FROM scratch with the static binary and this machine's CA
## bundle (no registry needed). IMAGE overrides the name.
IMAGE   ?= mediaspec:dev
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt

image: build
	cp $(CA_CERTS) bin/ca-certificates.crt
	rm -rf bin/rootfs && mkdir -p bin/rootfs/tmp && chmod 1777 bin/rootfs/tmp
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

## wrong-servers: the suite measured against wrong servers (conformance/wrongservers): the mock
## behind a proxy that changes one behaviour, one plausible mistake each, checked on its rules. It
## prints a table and the kill rate, and writes the survivors to bin/survivors.txt. ONLY=REGEXP
## picks servers by name; MIN_KILL_RATE=95 fails under that rate (default 0: report only).
ONLY          ?=
MIN_KILL_RATE ?= 0
.PHONY: wrong-servers
wrong-servers: build
	$(GO) run ./conformance/wrongservers/cmd/wrongservers --bin bin/mediaspec --only '$(ONLY)' \
	  --min-kill-rate $(MIN_KILL_RATE) --survivors bin/survivors.txt

## legal-variants: the mirror of wrong-servers: the mock behind proxies that rewrite its answers
## into other forms the interface text allows (conformance/wrongservers/legal.go). Each variant runs
## on the specs that can see its change, and all of them combined on the whole suite; every run
## must fail no spec. ONLY=REGEXP picks variants; LEGAL_FLAGS=--whole runs each on the whole suite.
## LEGAL_SKIP=REGEXP leaves variants out (CI runs scrambled apart, with legal-scrambled).
LEGAL_FLAGS ?=
LEGAL_SKIP ?=
.PHONY: legal-variants
legal-variants: build
	$(GO) run ./conformance/wrongservers/cmd/wrongservers --legal --bin bin/mediaspec --only '$(ONLY)' \
	  --skip '$(LEGAL_SKIP)' --failures bin/legal-failures.txt $(LEGAL_FLAGS)

## legal-scrambled: the generated variant `scrambled` (legal_scrambled.go: every reference choice
## renamed, nested, moved) on the whole suite in each target mode of SCRAMBLED_MODES: b (control
## API, manual clock) and c (keys only, the mock with --no-control, SCRAMBLED_PROCS check
## processes), each beside the unchanged mock in the same mode, so the table gives the rules it
## judged as a share of the mock's. Every run must fail no spec (each mode runs even when an earlier
## one failed), and judge at least SCRAMBLED_MIN_SHARE percent of the rules the mock judges in that
## mode. Failures in bin/scrambled-<mode>-failures.txt.
SCRAMBLED_MODES ?= b c
SCRAMBLED_PROCS ?= 4
## SCRAMBLED_MIN_SHARE: the least share (percent) of the plain mock's judged rules each mode must
## judge (issue 35's floor: a pass made of skips does not count).
SCRAMBLED_MIN_SHARE ?= 90
.PHONY: legal-scrambled
legal-scrambled: build
	@rc=0; for m in $(SCRAMBLED_MODES); do \
	  echo "-- scrambled, mode $$m"; \
	  $(GO) run ./conformance/wrongservers/cmd/wrongservers --legal --bin bin/mediaspec --only '^scrambled$$' \
	    --combined=false --plain --min-judged-share $(SCRAMBLED_MIN_SHARE) --mode $$m --procs $(SCRAMBLED_PROCS) --timeout 15m \
	    --failures bin/scrambled-$$m-failures.txt $(LEGAL_FLAGS) || rc=1; \
	done; exit $$rc

## proxy-proof: the whole suite through the built binary's proxy in front of the mock
## (.ci/proxy-proof): the suite must pass, and the proxy must record no MUST or SHOULD finding on
## the service's side. Reports in reports/proxy-proof.
.PHONY: proxy-proof
proxy-proof: build
	.ci/proxy-proof bin/mediaspec

## run: the main job — check the embedded mock against the rule catalogue.
run:
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/mediaspec check

## report-shot: render a failing run's HTML report in headless Chromium (Debian's chromium) and keep
## the picture as reports/report.png, for a person to look at; the test also runs in make test.
report-shot:
	mkdir -p reports
	MEDIASPEC_REPORT_SHOT=$(CURDIR)/reports/report.png $(GO) test -count=1 -run TestHTMLReportAsAPicture -v ./conformance/internal/framework/

## lint: formatting, module tidiness, vet, staticcheck, and the independent OpenAPI linter (Redocly,
## from npm).
lint: fmt-check tidy-check vet staticcheck lint-spec

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

tidy-check:
	@cp go.mod /tmp/mediaspec-go.mod.bak && cp go.sum /tmp/mediaspec-go.sum.bak; \
	$(GO) mod tidy; \
	if ! git diff --quiet -- go.mod go.sum; then echo "go mod tidy changes go.mod/go.sum:"; git --no-pager diff -- go.mod go.sum; \
	  cp /tmp/mediaspec-go.mod.bak go.mod; cp /tmp/mediaspec-go.sum.bak go.sum; exit 1; fi

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

staticcheck:
	$(GO) run $(STATICCHECK) $(PKGS)

## lint-spec: lint spec/openapi.yaml and spec/control.yaml with @redocly/cli (pinned in spec/lint).
lint-spec:
	cd spec/lint && npm ci --no-audit --no-fund --loglevel=error && \
	  npx --no-install redocly lint ../openapi.yaml ../control.yaml --config redocly.yaml

## docs-check: render spec/openapi.yaml with Redoc (pinned in spec/docs, from npm), look at it in
## headless Chromium (a screenshot in bin/docs/reference.png) and check that it lists the seven
## webhook events. Skips with the reason when Chromium is not installed; CI installs it.
docs-check:
	spec/docs/check.sh bin/docs

## bench: every benchmark of the module (speed is measured here, never asserted in tests), each
## figure side by side with its baseline in the same run, and the results written to BENCH_OUT
## (docs/bench.md): a table per package with every figure each benchmark reported, built by
## internal/benchtable from go test's output (a new benchmark shows up without touching it). The
## wrk benchmarks (BenchmarkHTTP*: the proxy and the mock over HTTP) run HTTP_ROUNDS alternating
## rounds and skip without wrk, naming it. One package at a time (-p 1): go test otherwise runs
## packages' benchmarks at once, each loading the other's figures; a package may take an hour (the
## check benchmarks run whole checks; go test's default cap is 10 minutes). BENCH_PKGS narrows the
## packages (the page then holds only theirs).
BENCH_PKGS ?= $(PKGS)
BENCH_OUT  ?= docs/bench.md
bench:
	$(GO) run ./internal/benchtable -o $(BENCH_OUT) \
	  -cmd '$(GO) test -p 1 -timeout 60m -run ^$$ -bench . -skip ^BenchmarkHTTP -benchmem $(BENCH_PKGS)' \
	  -cmd '$(GO) test -p 1 -timeout 60m -run ^$$ -bench ^BenchmarkHTTP -benchtime $(HTTP_ROUNDS)x $(BENCH_PKGS)'

## bench-http: GET /api/v1/generations/{id} as a user sees it: wrk (apt-get install -y wrk; it
## skips without) in its own process, 64 connections, against the built `mediaspec mock` (default
## options, request log to a file) and a bare net/http server in its own process serving the same
## bytes with a bearer check; HTTP_ROUNDS (default 3) alternating rounds of 5 s after a warm-up
## (more rounds: steadier on a busy machine). Prints each side's rate, pooled p50/p99, CPU per
## answer, the mock/bare rate and p99 ratios and the load average; fails on any answer but a 200.
## PRISM=path/to/prism (an npm install of @stoplight/prism-cli outside the repository) adds Prism
## mocking the same document as a third side and the mock/Prism ratio.
## BenchmarkHTTPProxy (./proxy/) is the same harness at 32 connections: straight to the mock and
## through `mediaspec proxy` in front of it (rates, the ratio, what the proxy adds at p50 and p99,
## its CPU per answer and the share it left unjudged).
HTTP_ROUNDS ?= 3
bench-http:
	$(GO) test -v -run '^$$' -bench '^BenchmarkHTTP' -benchtime $(HTTP_ROUNDS)x ./mock/ ./proxy/

## fuzz: each fuzz target for FUZZTIME (default 1m), one after the other; a failing input is
## written to the package's testdata/fuzz/<target>/ (commit it as a regression seed). Go 1.26's
## bare "context deadline exceeded" at the end of -fuzztime (go.dev/issue/75804) is not a failure.
FUZZTIME ?= 1m
FUZZ_TARGETS := \
	./internal/mock/wire:FuzzDecodeStrictBytes \
	./internal/mock/wire:FuzzCheckJSONText \
	./internal/mock/api:FuzzRequestBodies \
	./internal/mock/paging:FuzzDecode \
	./internal/mock/netguard:FuzzRefusal \
	./internal/mock/media:FuzzSniffInspect \
	./internal/mock/workspace:FuzzWellFormedKey \
	./receiver:FuzzCheck

fuzz:
	@GO=$(GO) .ci/fuzz $(FUZZTIME) $(FUZZ_TARGETS)

## fuzz-ci: what CI runs, about 10 s per target.
fuzz-ci:
	$(MAKE) fuzz FUZZTIME=10s

clean:
	rm -rf bin spec/lint/node_modules spec/clients/node_modules spec/docs/node_modules
