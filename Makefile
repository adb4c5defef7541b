# Bridgeline. The two commands a newcomer needs are `make run` and `make test`; each
# installs what it needs first and skips what is already there: `make run` the SQLite
# stack's (deps-run: Debian packages, the pinned livekit-server and livekit-sip builds,
# speech models, the /sim/ page's livekit-client and the join page's bundle), `make
# run-dynamodb` that and DynamoDB Local, `make test` everything (deps: DynamoDB Local,
# Chromium and playwright-core, Firefox ESR, PulseAudio and puppeteer-core too).
SHELL := /bin/bash
GO ?= go
BIN := bin
# Fuzz budgets are counts of inputs, not durations: Go 1.26's fuzz coordinator can fail a
# duration-bound run with a bare "context deadline exceeded" at the deadline, having found
# nothing (a race between the deadline and its workers, fixed in Go 1.27). 10000 inputs
# take 8-15 s per target here.
FUZZTIME ?= 10000x

.PHONY: run run-dynamodb test bench build deps deps-run lint gofmt commits check unit fuzz clean image soak

include build.mk

## run: the whole local stack in the foreground (API :8080, LiveKit :7880, sim, a persona worker)
run: deps-run
	$(GO) build -o $(BIN)/bridgeline ./cmd/bridgeline
	$(GO) build -o $(BIN)/persona-worker ./cmd/persona-worker
	WEBHOOK_ALLOW_LOOPBACK=1 exec $(BIN)/bridgeline dev

## run-dynamodb: the same stack on DynamoDB Local (in memory: a fresh dev account each start)
run-dynamodb: deps-run
	bash scripts/dynamodb-local.sh install >/dev/null
	$(GO) build -o $(BIN)/bridgeline ./cmd/bridgeline
	ep="$$(bash scripts/dynamodb-local.sh start)"; trap 'bash scripts/dynamodb-local.sh stop' EXIT; \
	DYNAMODB_ENDPOINT="$$ep" WEBHOOK_ALLOW_LOOPBACK=1 $(BIN)/bridgeline dev --store dynamodb

## test: everything CI checks
test: deps lint unit fuzz

## deps-run: install and build what the local stack runs (idempotent)
deps-run:
	bash scripts/install-media-deps.sh
	bash scripts/build-livekit-server.sh >/dev/null
	bash scripts/build-livekit-sip.sh >/dev/null
	bash scripts/install-speech-models.sh >/dev/null
	bash scripts/install-browser.sh --page >/dev/null
	bash scripts/build-join-page.sh >/dev/null

## deps: install and build what run and test use (idempotent): deps-run, DynamoDB Local,
## and the Chromium and the Firefox the browser tests drive
deps: deps-run
	bash scripts/dynamodb-local.sh install >/dev/null
	bash scripts/install-browser.sh >/dev/null
	bash scripts/install-browser.sh --firefox >/dev/null

## lint: the contract (openapi.yaml, openapi-internal.yaml) validates, the clients generated
## from it match sdk/ and compile (scripts/check-sdk.sh), commit subjects, gofmt and go vet;
## it prints the count of exported names nobody outside their package uses (no threshold yet)
lint:
	bash scripts/check-openapi.sh
	bash scripts/check-sdk.sh
	$(MAKE) --no-print-directory commits
	$(MAKE) --no-print-directory gofmt
	$(GO) vet ./...
	bash scripts/unused-exports.sh

## gofmt: fails naming every Go file gofmt would change
gofmt:
	@bad="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi

## commits: every commit since the rule began has a subject of at most 72 characters,
## `area: what changed` (scripts/check-commits.sh; it is also a commit-msg hook)
commits:
	@bash scripts/check-commits.sh

## check: the quick loop while you work: commit subjects, gofmt, go vet, and every test that needs no
## server, with -short: each test that starts livekit-server, DynamoDB Local, moto, node,
## Chromium or cfn-lint skips itself, and CHECK_LEAVE's packages are left out
check: commits gofmt
	$(GO) vet ./...
	$(GO) test -short -count=1 $$($(GO) list ./... | grep -Ev '$(CHECK_LEAVE)')

# CHECK_LEAVE are the packages make check leaves to make unit: the whole-stack tests
# (e2e/), the speech engines' (stt, tts, sphinx: real recognition and synthesis, minutes
# of CPU on two cores) and the persona worker's (livekit-server from its TestMain).
CHECK_LEAVE := /e2e/|/mediafleet/(stt|tts|sphinx|worker)(/|$$)

## unit: every test, the stack tests too, with -race (CI); the phone-call packages
## (UNIT_ALONE) after the others, one at a time
unit:
	$(GO) test -race -count=1 -timeout 40m $$($(GO) list ./... | grep -Ev '$(UNIT_ALONE)')
	$(GO) test -race -count=1 -timeout 20m -p 1 $$($(GO) list ./... | grep -E '$(UNIT_ALONE)')

# UNIT_ALONE are the packages whose tests judge what a SIP phone hears through LiveKit's
# bridge: livekit-sip v1.8.0 mixes towards the phone every 20 ms with a 5-frame buffer and
# no jitter buffer, so with another stack package beside it on two cores its late wake-ups
# cut 60 ms holes into the greeting the test recognises (docs/performance.md, the test loop).
UNIT_ALONE := /e2e/(sip|sipengine)$$

## fuzz: request decoding and validation, briefly (FUZZTIME inputs each)
fuzz:
	$(GO) test ./shared/httpapi -run '^$$' -fuzz '^FuzzAssistantCreate$$' -fuzztime $(FUZZTIME)
	$(GO) test ./shared/httpapi -run '^$$' -fuzz '^FuzzLineUpdate$$' -fuzztime $(FUZZTIME)
	$(GO) test ./shared/httpapi -run '^$$' -fuzz '^FuzzRequestBody$$' -fuzztime $(FUZZTIME)

## bench: the benchmarks, each beside its baseline in the same run
bench: deps
	@echo "== POST /v1/sessions through the HTTP stack beside bare LiveKit CreateRoom + token mint"
	$(GO) test -run '^$$' -bench BenchmarkSessionCreate -benchtime 1000x ./e2e/sessions/
	$(GO) test -run '^$$' -bench BenchmarkAPIRoundTrip -benchtime 1000x ./e2e/sessions/
	@echo "== each Lambda: binary size and cold start beside the local stack serving the same request"
	$(MAKE) bench-functions
	@echo "== a customer client's join to a session's room (connected, first remote track) on livekit-server with ICE lite beside its default full ICE"
	$(GO) test -run '^$$' -bench BenchmarkJoin -benchtime 40x ./mediafleet/livekitserver/
	@echo "== persona worker: answer to connecting screen and greeting, beside LiveKit's bare dispatch; sim audio calls' greeting with ICE lite beside full ICE"
	$(GO) test -run '^$$' -bench Answer -benchtime 40x ./mediafleet/worker
	$(GO) test -run '^$$' -bench AvatarFrame -benchtime 300x ./mediafleet/vp8
	@echo "== the offline recogniser's word errors on the flite question set, clean and with babble or street noise at 10 dB SNR, noise suppression off beside on"
	$(GO) test -run '^$$' -bench NoiseSuppression -benchtime 1x -timeout 30m ./mediafleet/stt/
	@echo "== persona worker alone (its own process, CPU from /proc): CPU per call-second while silent, caller speaking, caller listening, and memory per call, beside the idle worker; audio (pocketsphinx, Deepgram), video, video drawing every frame"
	$(GO) test -run '^$$' -bench WorkerCPU -benchtime 1x -timeout 20m ./mediafleet/worker
	@echo "== a core's worth of conversations (10, staggered, Deepgram's protocol) on one worker pinned to one CPU, the callers and livekit-server on the others: response p50/p95 and the worker's CPU, beside one conversation alone"
	if [ "$$(nproc)" -ge 2 ]; then BENCH_WORKER_CPU=1 taskset -c 0 $(GO) test -run '^$$' -bench WorkerConversations -benchtime 1x -timeout 30m ./mediafleet/worker; \
	else $(GO) test -run '^$$' -bench WorkerConversations -benchtime 1x -timeout 30m ./mediafleet/worker; fi
	@echo "== the same with pocketsphinx on the worker's CPU, the offline default, at its default of 2 calls per CPU: 2 audio conversations beside one alone"
	if [ "$$(nproc)" -ge 2 ]; then BENCH_STT=pocketsphinx BENCH_CALLS=2 BENCH_WORKER_CPU=1 taskset -c 0 $(GO) test -run '^$$' -bench 'WorkerConversations/audio' -benchtime 1x -timeout 30m ./mediafleet/worker; \
	else BENCH_STT=pocketsphinx BENCH_CALLS=2 $(GO) test -run '^$$' -bench 'WorkerConversations/audio' -benchtime 1x -timeout 30m ./mediafleet/worker; fi
	@echo "== a caller on the sim's /sim/ page (headless Chromium): answer to greeting beside the sim's bot caller, call for call"
	$(GO) test -run '^$$' -bench BenchmarkSimPageGreeting -benchtime 10x ./examples/simcaller/
	@echo "== conversation on the whole stack (real VAD, STT, TTS; fake model at 0 and 300 ms first token): caller's end of speech to the reply heard beside its floor, barge-in, greeting; then concurrent calls per worker"
	$(GO) test -run '^$$' -bench 'BenchmarkConversation$$' -benchtime 20x -timeout 30m ./e2e/sessions/
	$(GO) test -run '^$$' -bench BenchmarkConversationCapacity -benchtime 1x -timeout 30m ./e2e/sessions/
	@echo "== web calls beside sim calls to the same assistant: caller in the room to the greeting heard, end of the question to the reply heard (audio and video)"
	$(GO) test -run '^$$' -bench BenchmarkWebCall -benchtime 10x -timeout 30m ./e2e/sessions/
	@echo "== speech engines: VAD per 32 ms window beside its float conversion, pocketsphinx end of turn streamed beside decoding the turn at its end, flite first audio beside the flite command"
	$(GO) test -run '^$$' -bench Window -benchtime 2000x ./mediafleet/vad
	$(GO) test -run '^$$' -bench Sphinx -benchtime 10x ./mediafleet/stt
	$(GO) test -run '^$$' -bench FirstAudio -benchtime 30x ./mediafleet/tts/flite
	@echo "== answering-machine detection on the labelled flite and espeak-ng clips (persons, voicemail boxes with and without beeps, silence): accuracy, decision p50/p95 from the answer"
	$(GO) test -run '^$$' -bench BenchmarkAMD -benchtime 3x ./mediafleet/amd
	@echo "== campaigns: 1,000 recipients at 20 at once, 300 at 5 at once, to parties that answer and hang up after 1 s: calls/s, CPU per call, slot freed to next dial, beside the runner's ticks alone"
	$(GO) test -run '^$$' -bench BenchmarkCampaign -benchtime 1x ./shared/campaign/
	@echo "== turn-taking: scripted calls by words beside the fixed end-of-turn silence and barge-in by sound (end-of-turn silence, mid-sentence pauses cut, backchannels cancelling, false interruptions recovered)"
	$(GO) test -run '^$$' -bench TurnTaking -benchtime 1x ./mediafleet/conversation
	@echo "== SIP bridge: INVITE to SIP participant joined, livekit-sip CPU and memory per call beside idle"
	$(GO) test -run '^$$' -bench SIPInboundCall -benchtime 5x ./e2e/sipengine/
	@echo "== session sweeper: one tick with 100, 1,000 and 10,000 live sessions on SQLite and DynamoDB Local (idle, ending 10) beside reading every live session (the sweep before its due index)"
	$(GO) test -run '^$$' -bench BenchmarkSweep -benchtime 10x -timeout 30m ./e2e/stores/
	@echo "== DynamoDB requests and capacity units of one inbound assistant call (DynamoDB Local), and of a minute of the idle sweeper"
	$(GO) test -run '^$$' -bench BenchmarkCallCapacity -benchtime 20x ./e2e/stores/
	@echo "== local delivery worker: one claim with 100 and 10,000 webhook endpoints, nothing due"
	$(GO) test -run '^$$' -bench BenchmarkClaimDueDeliveries -benchtime 200x ./shared/store/sqlite/
	@echo "== a phone call through the whole stack: INVITE to greeting, end of the question to the reply at a baresip phone, beside a sim (WebRTC) caller; livekit-sip CPU per call"
	$(GO) test -run '^$$' -bench BenchmarkSIPCall -benchtime 12x -timeout 30m ./e2e/sip/
	@echo "== a video phone through the SIP video bridge to an assistant line: INVITE to the first frame, the avatar and the greeting, beside a sim (WebRTC) video call"
	$(GO) test -run '^$$' -bench BenchmarkSIPVideoCall -benchtime 11x -timeout 30m ./e2e/sip/
	@echo "== events: event to receipt beside a bare signed POST, deliveries/s, ring to call.incoming"
	$(GO) test -run '^$$' -bench . -benchtime 300x ./events/delivery ./shared/decision
	$(GO) test -run '^$$' -bench BenchmarkStackEvents -benchtime 50x ./cmd/bridgeline

## soak: the local stack under mixed API traffic with calls for SOAK_DURATION (default 2m;
## SOAK_DURATION=10m for the long run), loopback only, stops by itself: errors, p99 per
## route class, both processes' memory at start, end and once idle, rooms left; with
## SOAK_WARMUP and SOAK_SETTLE=8m, livekit-server's growth after warm-up (docs/reliability.md)
SOAK_DURATION ?= 2m
soak:
	bash scripts/build-livekit-server.sh >/dev/null
	set -o pipefail; SOAK=1 SOAK_DURATION=$(SOAK_DURATION) $(GO) test -count=1 -run '^TestSoak$$' -v -timeout 3h ./soak/ 2>&1 | grep -v '^        {'

## image: the persona worker's container image (where Docker runs); IMAGE names it
IMAGE ?= bridgeline/persona-worker:dev
image:
	@command -v docker >/dev/null 2>&1 || { echo "make image: docker is not installed here"; exit 1; }
	docker build -f cmd/persona-worker/Dockerfile -t $(IMAGE) .

clean:
	rm -rf $(BIN) .cache/build
