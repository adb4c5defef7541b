package functions_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/functions/functiontest"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/session"
)

// apiGatewayLimit is API Gateway's integration timeout: a function behind the HTTP API
// that runs longer has its caller answered 503 anyway.
const apiGatewayLimit = 30 * time.Second

// outbound is the worst sequence of bounded outbound calls one invocation of a function
// makes, read from the code paths it serves; every function not listed makes only AWS
// calls (DynamoDB, SQS, EventBridge), which wire.AWSAllowance covers.
type outbound struct {
	liveKit, platform int           // calls, each bounded by wire.LiveKitTimeout / wire.PlatformTimeout
	webhook           bool          // one webhook attempt per message, concurrently (delivery.Timeout)
	window            time.Duration // a scheduled function's working window, or a bounded wait of its own
	decision          bool          // waits for a customer's decision (customer_decides)
	tool              bool          // one request to a customer's tool, bounded by its timeout_ms
	why               string
}

var outboundCalls = map[string]outbound{
	// A SIP dial (the room's participants, CreateSIPParticipant with the trunk for the call)
	// is within session.DefaultCreateTimeout like every dial.
	"sessions-create":     {liveKit: 2, platform: 1, why: "CreateRoom, the platform's Dial, DeleteRoom when the dial fails"},
	"sessions-delete":     {liveKit: 1, platform: 1, why: "DeleteRoom, the platform's Hangup"},
	"sessions-tokens":     {why: "tokens are minted locally"},
	"persona-agent-token": {why: "the registration token is minted locally"},
	"join-info":           {why: "the participant token is verified locally, with LiveKit's key"},
	"livekit-webhook":     {liveKit: 2, why: "the room's participants and DeleteRoom when a customer client leaves, one permission change when one joins"},
	"persona-report":      {liveKit: 2, why: "a dispatch retry, DeleteRoom when the session ends"},
	"session-sweeper":     {liveKit: 1, window: 55 * time.Second, why: "sweeps for SWEEP_WINDOW_SECONDS; the last sweep's DeleteRoom"},
	"campaign-runner":     {liveKit: 2, platform: 1, window: 58 * time.Second, why: "ticks for CAMPAIGN_WINDOW_SECONDS less a tick; the last tick's dials (CreateRoom, Dial, DeleteRoom)"},
	"platform-sim": {liveKit: 1, decision: true,
		why: "CreateRoom, the customer's decision, then wire.DecisionReserve (bridge or end the call; a handover to the assistant adds session.WatchOnlyTimeout)"},
	"platform-sip": {liveKit: 1, decision: true,
		why: "as platform-sim: CreateRoom, the customer's decision, then wire.DecisionReserve; the call is answered in the reply, not by a platform call"},
	"webhook-deliver": {webhook: true, why: "one attempt per message, messages and endpoints concurrently"},
	// Each write to a SIP trunk or line brings LiveKit in step (siptrunk.Sync): its inbound
	// and outbound trunks and dispatch rules listed, then at most one write to each.
	"sip-trunks-create":        {liveKit: 6, why: "siptrunk.Sync: three lists and up to three writes"},
	"sip-trunks-update":        {liveKit: 6, why: "siptrunk.Sync: three lists and up to three writes"},
	"sip-trunks-delete":        {liveKit: 6, why: "siptrunk.Sync: three lists and up to three deletions"},
	"campaigns-create":         {why: "none: it reads the line's calling platform for its rules and dials nothing"},
	"campaigns-recipients-add": {why: "none: it reads the line's calling platform for its handle rules and dials nothing"},
	"lines-create":             {liveKit: 6, why: "siptrunk.Sync of the line's trunk"},
	"lines-delete":             {liveKit: 6, why: "siptrunk.Sync of the line's trunk"},
	"persona-transfer":         {why: "none: the transfer is queued (TransferQueue), as calls-transfer's"},
	"calls-transfer":           {liveKit: 2, why: "TransferSIPParticipant, then RemoveParticipant or DeleteRoom as the call ends (with the transfer queue: none, the job is queued)"},
	"call-transfers": {liveKit: 2, window: session.TransferTimeout + sip.TransferSettle,
		why: "TransferSIPParticipant, waiting up to session.TransferTimeout and sip.TransferSettle after a failed REFER, then RemoveParticipant or DeleteRoom as the call ends, or SendData to tell the assistant of the failure"},
	"persona-tool": {tool: true, why: "one request to the customer's tool, at most assistant.MaxToolTimeoutMS"},
}

// Each function's Timeout covers the outbound calls it makes with the clients wire
// builds, plus the AWS calls and the margin to answer (a 502 when a dependency is down);
// functions behind the HTTP API fit in API Gateway's 30 s.
func TestFunctionTimeoutsCoverOutboundCalls(t *testing.T) {
	tpl := functiontest.Template(t)
	global, _ := tpl.Globals["Function"].(map[string]any)["Timeout"].(float64)
	for _, name := range functiontest.Names(t) {
		t.Run(name, func(t *testing.T) {
			r := functiontest.Resource(t, name)
			secs, ok := r.Properties["Timeout"].(float64)
			if !ok {
				secs = global
			}
			timeout := time.Duration(secs) * time.Second
			env := map[string]bool{}
			functiontest.EachIn(r.Properties, "Environment", "Variables", func(k string, _ any) { env[k] = true })
			calls, listed := outboundCalls[name]
			if !listed && (env["LIVEKIT_CREDENTIALS_ARN"] || env["PLATFORM_GATEWAY_URL"]) {
				t.Fatalf("%s can call LiveKit or the platform gateway but outboundCalls does not say which calls it makes", name)
			}
			need := time.Duration(calls.liveKit)*wire.LiveKitTimeout + time.Duration(calls.platform)*wire.PlatformTimeout +
				calls.window + wire.AWSAllowance + wire.AnswerMargin
			if calls.webhook {
				need += delivery.Timeout
			}
			if calls.tool {
				need += assistant.MaxToolTimeoutMS * time.Millisecond
			}
			if calls.decision {
				// The wait is cut to leave DecisionReserve before the deadline; the
				// default decision timeout must still fit whole.
				need += line.DefaultDecisionTimeout*time.Second + wire.DecisionReserve - wire.AWSAllowance - wire.AnswerMargin
				if post := 2*wire.LiveKitTimeout + 2*wire.PlatformTimeout + wire.AWSAllowance + wire.AnswerMargin; wire.DecisionReserve < post {
					t.Errorf("DecisionReserve %v is under what follows a decision (%v)", wire.DecisionReserve, post)
				}
			}
			if timeout < need {
				t.Errorf("Timeout %v is under the %v its outbound calls may take (%s)", timeout, need, describe(calls))
			}
			if len(apiEvents(t, name)) > 0 && timeout >= apiGatewayLimit {
				t.Errorf("Timeout %v behind the HTTP API: API Gateway answers 503 at %v", timeout, apiGatewayLimit)
			}
		})
	}
}

func describe(o outbound) string {
	if o.why == "" {
		return "AWS calls only"
	}
	return fmt.Sprintf("%d LiveKit, %d platform: %s", o.liveKit, o.platform, o.why)
}

// TestHandoverFitsDecisionReserve: after a customer_decides call's decision timeout, a
// handover to the assistant makes one dispatch, the platform's answer and the bounded
// watch-only change; wire.DecisionReserve must hold them.
func TestHandoverFitsDecisionReserve(t *testing.T) {
	need := wire.LiveKitTimeout + wire.PlatformTimeout + session.WatchOnlyTimeout + wire.AWSAllowance + wire.AnswerMargin
	if wire.DecisionReserve < need {
		t.Errorf("DecisionReserve %v is under a handover's %v", wire.DecisionReserve, need)
	}
}
