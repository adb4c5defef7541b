package webhook_test

import (
	"testing"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
	"github.com/bridgeline/bridgeline/sdk/go/webhook"
)

// TestParseTranscript: a call.transcript delivery (the service's golden payload) parses
// into its typed event, speaker and times included.
func TestParseTranscript(t *testing.T) {
	body := `{"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3w","type":"call.transcript","created_at":"2026-11-22T07:00:09.412Z","data":{"call_id":"call_01jd3f4g5h6j7k8m9n0p1q2r3t","session_id":"ses_01jd3f4g5h6j7k8m9n0p1q2r3t","line_id":"line_01jd3f4g5h6j7k8m9n0p1q2r3s","direction":"inbound","sequence":2,"speaker":"caller","text":"where is my order","start_ms":7202,"end_ms":9414,"interrupted":false,"metadata":{"order_id":"6735"}}}`
	ev, err := webhook.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := ev.(*bridgeline.CallTranscriptEvent)
	if !ok {
		t.Fatalf("Parse = %T, want *bridgeline.CallTranscriptEvent", ev)
	}
	d := tr.Data
	if d.Sequence != 2 || d.Speaker != "caller" || d.Text != "where is my order" || d.StartMs != 7202 || d.EndMs != 9414 || d.Metadata["order_id"] != "6735" {
		t.Errorf("data = %+v", d)
	}
	if ev.EventID() != "evt_01jd3f4g5h6j7k8m9n0p1q2r3w" || ev.EventType() != "call.transcript" {
		t.Errorf("id %q type %q", ev.EventID(), ev.EventType())
	}
}

// TestParseAnalyzed: a call.analyzed delivery (the service's golden payload) parses into
// its typed event, the structured data as the customer's schema shaped it.
func TestParseAnalyzed(t *testing.T) {
	body := `{"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3y","type":"call.analyzed","created_at":"2026-11-22T07:02:41.187Z","data":{"call_id":"call_01jd3f4g5h6j7k8m9n0p1q2r3t","session_id":"ses_01jd3f4g5h6j7k8m9n0p1q2r3t","line_id":"line_01jd3f4g5h6j7k8m9n0p1q2r3s","direction":"inbound","assistant_id":"asst_01jd3f4g5h6j7k8m9n0p1q2r3q","version_id":"ver_01jd3f4g5h6j7k8m9n0p1q2r3r","status":"completed","summary":"The caller asked where order 6735 is; the assistant looked it up and told them it was delivered yesterday.","structured_data":{"order_id":"6735","delivered":true},"success":true,"error":null,"metadata":{"order_id":"6735"}}}`
	ev, err := webhook.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	an, ok := ev.(*bridgeline.CallAnalyzedEvent)
	if !ok {
		t.Fatalf("Parse = %T, want *bridgeline.CallAnalyzedEvent", ev)
	}
	d := an.Data
	if d.Status != "completed" || d.Summary == nil || d.Success == nil || !*d.Success || d.Error != nil ||
		d.StructuredData == nil || (*d.StructuredData)["order_id"] != "6735" {
		t.Errorf("data = %+v", d)
	}
	if ev.EventType() != "call.analyzed" {
		t.Errorf("type %q", ev.EventType())
	}
}

// TestParseRecordingReady: a recording.ready delivery (the service's golden payload)
// parses into its typed event; it carries what the file holds, and no URL.
func TestParseRecordingReady(t *testing.T) {
	body := `{"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3z","type":"recording.ready","created_at":"2026-11-22T07:02:40.412Z","data":{"call_id":"call_01jd3f4g5h6j7k8m9n0p1q2r3t","session_id":"ses_01jd3f4g5h6j7k8m9n0p1q2r3t","line_id":"line_01jd3f4g5h6j7k8m9n0p1q2r3s","direction":"inbound","duration_ms":61234,"size_bytes":498112,"format":"ogg_opus","metadata":{"order_id":"6735"}}}`
	ev, err := webhook.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	rr, ok := ev.(*bridgeline.RecordingReadyEvent)
	if !ok {
		t.Fatalf("Parse = %T, want *bridgeline.RecordingReadyEvent", ev)
	}
	if d := rr.Data; d.CallId != "call_01jd3f4g5h6j7k8m9n0p1q2r3t" || d.DurationMs != 61234 || d.SizeBytes != 498112 || d.Format != "ogg_opus" {
		t.Errorf("data = %+v", d)
	}
	if ev.EventType() != "recording.ready" {
		t.Errorf("type %q", ev.EventType())
	}
}
