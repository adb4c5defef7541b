package webhook_test

import (
	"fmt"
	"log"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
	"github.com/bridgeline/bridgeline/sdk/go/webhook"
)

// Parse answers a pointer to the event's type: switch on it.
func ExampleParse() {
	// Two deliveries' bodies, once webhook.Verify accepted them.
	deliveries := [][]byte{
		[]byte(`{"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3t","type":"call.ended","created_at":"2026-11-22T07:01:00.000Z",
		  "data":{"call_id":"call_01jd3f4g5h6j7k8m9n0p1q2r3t","session_id":"ses_01jd3f4g5h6j7k8m9n0p1q2r3t",
		   "line_id":"line_01jd3f4g5h6j7k8m9n0p1q2r3t","direction":"inbound","from":"+15550100009","to":"+15550100001",
		   "media":"video","handled_by":"assistant","started_at":"2026-11-22T07:00:00.000Z",
		   "answered_at":"2026-11-22T07:00:01.000Z","ended_at":"2026-11-22T07:01:00.000Z","duration_ms":59000,
		   "end_reason":"remote_hangup","ended_by":"remote","metadata":{},"session_metadata":{}}}`),
		[]byte(`{"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3v","type":"call.transferred","created_at":"2026-11-22T07:02:00.000Z","data":{}}`),
	}
	for _, body := range deliveries {
		ev, err := webhook.Parse(body)
		if err != nil {
			log.Fatal(err)
		}
		switch ev := ev.(type) {
		case *bridgeline.CallIncomingEvent:
			fmt.Println("ringing:", ev.Data.From, "on", ev.Data.To)
		case *bridgeline.CallAnsweredEvent:
			fmt.Println("answered:", ev.Data.CallId)
		case *bridgeline.CallEndedEvent:
			fmt.Println("ended:", ev.Data.CallId, ev.Data.EndReason, ev.Data.DurationMs, "ms")
		case *bridgeline.UnknownEvent:
			fmt.Println("newer than this SDK, acknowledged:", ev.Type)
		}
	}
	// Output:
	// ended: call_01jd3f4g5h6j7k8m9n0p1q2r3t remote_hangup 59000 ms
	// newer than this SDK, acknowledged: call.transferred
}
