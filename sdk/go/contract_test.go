package bridgeline

import (
	"encoding/json"
	"testing"
)

// The generated client keeps what a customer reads: an event list's items resolve to
// their variant by `type`, with typed data, and an error keeps its message, param and
// request id. scripts/check-sdk.sh runs this after regenerating the client.

func TestEventListDecodesEachVariant(t *testing.T) {
	body := []byte(`{"object":"list","has_more":false,"data":[
	 {"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3t","object":"event","type":"call.ended","created_at":"2026-11-22T07:01:00.000Z",
	  "data":{"call_id":"call_01jd3f4g5h6j7k8m9n0p1q2r3t","direction":"outbound","from":"+15550100001","to":"+15550100002",
	   "media":"video","handled_by":"customer","started_at":"2026-11-22T07:00:00.000Z","answered_at":"2026-11-22T07:00:01.000Z",
	   "ended_at":"2026-11-22T07:01:00.000Z","duration_ms":59000,"end_reason":"deleted","ended_by":"customer","new_field":1}},
	 {"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3v","object":"event","type":"call.answered","created_at":"2026-11-22T07:00:01.000Z",
	  "data":{"call_id":"call_01jd3f4g5h6j7k8m9n0p1q2r3t","direction":"inbound","handled_by":"customer","answered_at":"2026-11-22T07:00:01.000Z"}}]}`)
	var list EventList
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 2 {
		t.Fatalf("got %d events, want 2", len(list.Data))
	}
	v, err := list.Data[0].ValueByDiscriminator()
	if err != nil {
		t.Fatal(err)
	}
	ended, ok := v.(CallEndedEvent)
	if !ok {
		t.Fatalf("event 0 is %T, want CallEndedEvent", v)
	}
	if ended.Data.DurationMs != 59000 || ended.Data.CallId != "call_01jd3f4g5h6j7k8m9n0p1q2r3t" {
		t.Errorf("call.ended data = %+v", ended.Data)
	}
	answered, err := list.Data[1].AsCallAnsweredEvent()
	if err != nil {
		t.Fatal(err)
	}
	if answered.Data.AnsweredAt.IsZero() {
		t.Errorf("call.answered data = %+v", answered.Data)
	}
}

func TestErrorKeepsEveryField(t *testing.T) {
	var e Error409
	body := `{"error":{"type":"invalid_request_error","code":"assistant_archived","message":"archived","param":"id","request_id":"req_01jd0000000000000000000000"}}`
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err)
	}
	if e.Error.Message != "archived" || e.Error.Param == nil || *e.Error.Param != "id" || e.Error.RequestId != "req_01jd0000000000000000000000" || e.Error.Code != "assistant_archived" {
		t.Errorf("error = %+v", e.Error)
	}
}
