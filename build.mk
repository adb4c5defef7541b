# Lambda builds, included by the Makefile.
#
#   make build      a bootstrap per function in .cache/build/<name>/bootstrap
#                   (provided.al2023 on arm64, static: CGO_ENABLED=0)
#   make build-<LogicalId>
#                   what `sam build` runs for each function of template.yaml
#                   (BuildMethod: makefile); it sets ARTIFACTS_DIR
#   make bench-functions
#                   binary size and cold start of each function beside the same
#                   request served by the local stack's handler, and beside the
#                   functions of BENCH_BASELINE (a commit) in the same run
#
# The function list is every functions/<name>/main.go; template.yaml names each one
# <Name>Function, and a test checks that this file has a target for each.

LAMBDA_GOOS ?= linux
LAMBDA_GOARCH ?= arm64
LAMBDA_BUILD := CGO_ENABLED=0 GOOS=$(LAMBDA_GOOS) GOARCH=$(LAMBDA_GOARCH) $(GO) build -trimpath -tags lambda.norpc -ldflags='-s -w'
LAMBDA_OUT := .cache/build
FUNCTIONS := $(sort $(patsubst functions/%/main.go,%,$(wildcard functions/*/main.go)))

.PHONY: build bench-functions join-page-bundle

## join-page-bundle: the hosted join page's livekit-client bundle, which join-page embeds
## (npm only: no browser is installed for it)
join-page-bundle:
	bash scripts/build-join-page.sh >/dev/null

## build: a bootstrap per function for provided.al2023 on arm64
build: join-page-bundle
	@mkdir -p $(LAMBDA_OUT)/bin
	$(LAMBDA_BUILD) -o $(LAMBDA_OUT)/bin/ $(addprefix ./functions/,$(FUNCTIONS))
	@for f in $(FUNCTIONS); do mkdir -p $(LAMBDA_OUT)/$$f && mv $(LAMBDA_OUT)/bin/$$f $(LAMBDA_OUT)/$$f/bootstrap; done
	@rmdir $(LAMBDA_OUT)/bin
	@echo "built $(words $(FUNCTIONS)) functions into $(LAMBDA_OUT)/<name>/bootstrap ($(LAMBDA_GOOS)/$(LAMBDA_GOARCH))"

# sam-build builds one function into SAM's artifacts folder.
define sam-build
$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(1)
endef

build-ApiKeysCreateFunction: ; $(call sam-build,api-keys-create)
build-ApiKeysDeleteFunction: ; $(call sam-build,api-keys-delete)
build-ApiKeysListFunction: ; $(call sam-build,api-keys-list)
build-AssistantsActivateFunction: ; $(call sam-build,assistants-activate)
build-AssistantsDraftRestoreFunction: ; $(call sam-build,assistants-draft-restore)
build-AssistantsArchiveFunction: ; $(call sam-build,assistants-archive)
build-AssistantsRotateToolSecretFunction: ; $(call sam-build,assistants-rotate-tool-secret)
build-AssistantsCreateFunction: ; $(call sam-build,assistants-create)
build-AssistantsDuplicateFunction: ; $(call sam-build,assistants-duplicate)
build-AssistantsGetFunction: ; $(call sam-build,assistants-get)
build-AssistantsListFunction: ; $(call sam-build,assistants-list)
build-AssistantsPublishFunction: ; $(call sam-build,assistants-publish)
build-AssistantsUpdateFunction: ; $(call sam-build,assistants-update)
build-AssistantsVersionsListFunction: ; $(call sam-build,assistants-versions-list)
build-AssistantsQualityFunction: ; $(call sam-build,assistants-quality)
build-AuthorizerFunction: ; $(call sam-build,authorizer)
build-AvatarsListFunction: ; $(call sam-build,avatars-list)
build-AvatarsCreateFunction: ; $(call sam-build,avatars-create)
build-AvatarsGetFunction: ; $(call sam-build,avatars-get)
build-AvatarsDeleteFunction: ; $(call sam-build,avatars-delete)
build-CallsAnswerFunction: ; $(call sam-build,calls-answer)
build-CallsGetFunction: ; $(call sam-build,calls-get)
build-UsageGetFunction: ; $(call sam-build,usage-get)
build-AccountGetFunction: ; $(call sam-build,account-get)
build-AccountUpdateFunction: ; $(call sam-build,account-update)
build-JoinInfoFunction: ; $(call sam-build,join-info)
build-CallsListFunction: ; $(call sam-build,calls-list)
build-CallsRecordingGetFunction: ; $(call sam-build,calls-recording-get)
build-CallsRecordingDeleteFunction: ; $(call sam-build,calls-recording-delete)
build-CallsDeleteFunction: ; $(call sam-build,calls-delete)
build-CallsUpdateFunction: ; $(call sam-build,calls-update)
build-EventRelayFunction: ; $(call sam-build,event-relay)
build-EventsGetFunction: ; $(call sam-build,events-get)
build-EventsListFunction: ; $(call sam-build,events-list)
build-EventsRedeliverFunction: ; $(call sam-build,events-redeliver)
build-LinesAssignFunction: ; $(call sam-build,lines-assign)
build-LinesGetFunction: ; $(call sam-build,lines-get)
build-LinesListFunction: ; $(call sam-build,lines-list)
build-LinesUpdateFunction: ; $(call sam-build,lines-update)
build-SipTrunksListFunction: ; $(call sam-build,sip-trunks-list)
build-SipTrunksCreateFunction: ; $(call sam-build,sip-trunks-create)
build-SipTrunksGetFunction: ; $(call sam-build,sip-trunks-get)
build-SipTrunksUpdateFunction: ; $(call sam-build,sip-trunks-update)
build-SipTrunksDeleteFunction: ; $(call sam-build,sip-trunks-delete)
build-LinesCreateFunction: ; $(call sam-build,lines-create)
build-LinesDeleteFunction: ; $(call sam-build,lines-delete)
build-CallTransfersFunction: ; $(call sam-build,call-transfers)
build-CallsTransferFunction: ; $(call sam-build,calls-transfer)
build-JoinPageFunction: ; $(call sam-build,join-page)
build-LivekitWebhookFunction: ; $(call sam-build,livekit-webhook)
build-ModelsListFunction: ; $(call sam-build,models-list)
build-PersonaAgentTokenFunction: ; $(call sam-build,persona-agent-token)
build-PersonaAvatarFunction: ; $(call sam-build,persona-avatar)
build-PersonaReportFunction: ; $(call sam-build,persona-report)
build-PersonaTransferFunction: ; $(call sam-build,persona-transfer)
build-PersonaToolFunction: ; $(call sam-build,persona-tool)
build-PlatformSimFunction: ; $(call sam-build,platform-sim)
build-PlatformSipFunction: ; $(call sam-build,platform-sip)
build-CampaignsCreateFunction: ; $(call sam-build,campaigns-create)
build-CampaignsListFunction: ; $(call sam-build,campaigns-list)
build-CampaignsGetFunction: ; $(call sam-build,campaigns-get)
build-CampaignsRecipientsFunction: ; $(call sam-build,campaigns-recipients)
build-CampaignsReportFunction: ; $(call sam-build,campaigns-report)
build-CampaignsRecipientsAddFunction: ; $(call sam-build,campaigns-recipients-add)
build-CampaignsStartFunction: ; $(call sam-build,campaigns-start)
build-CampaignsPauseFunction: ; $(call sam-build,campaigns-pause)
build-CampaignsResumeFunction: ; $(call sam-build,campaigns-resume)
build-CampaignsCancelFunction: ; $(call sam-build,campaigns-cancel)
build-CampaignRunnerFunction: ; $(call sam-build,campaign-runner)
build-SessionSweeperFunction: ; $(call sam-build,session-sweeper)
build-SessionsCreateFunction: ; $(call sam-build,sessions-create)
build-SessionsDeleteFunction: ; $(call sam-build,sessions-delete)
build-SessionsGetFunction: ; $(call sam-build,sessions-get)
build-SessionsListFunction: ; $(call sam-build,sessions-list)
build-SessionsTokensFunction: ; $(call sam-build,sessions-tokens)
build-SessionsUpdateFunction: ; $(call sam-build,sessions-update)
build-VoicesListFunction: ; $(call sam-build,voices-list)
build-WebhookDeliverFunction: ; $(call sam-build,webhook-deliver)
build-WebhookEndpointsCreateFunction: ; $(call sam-build,webhook-endpoints-create)
build-WebhookEndpointsDeleteFunction: ; $(call sam-build,webhook-endpoints-delete)
build-WebhookEndpointsGetFunction: ; $(call sam-build,webhook-endpoints-get)
build-WebhookEndpointsListFunction: ; $(call sam-build,webhook-endpoints-list)
build-WebhookEndpointsRotateSecretFunction: ; $(call sam-build,webhook-endpoints-rotate-secret)
build-WebhookEndpointsUpdateFunction: ; $(call sam-build,webhook-endpoints-update)

# The join page embeds its bundle: built first.
build-JoinPageFunction: join-page-bundle

# BENCH_BASELINE is the commit whose functions are measured beside the current ones: the
# last before the control plane was assembled once and the functions stopped linking
# LiveKit's protocol package. Its tree is unpacked with git archive (a clone has it).
BENCH_BASELINE ?= 3f19d26

## bench-functions: size and cold start of each function next to the local handler and the baseline commit's
bench-functions:
	@base="$$(mktemp -d)"; trap 'rm -rf "$$base"' EXIT; \
	git archive --format=tar $(BENCH_BASELINE) | tar -x -C "$$base" && \
	BENCH_BASELINE_SRC="$$base" $(GO) test -run '^$$' -bench . -benchtime 5x -timeout 60m ./e2e/lambda/
