package session

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestMergeMetrics: a later report's figures replace an earlier one's, field by field,
// for every field of persona.Metrics; figures a report does not carry are kept.
func TestMergeMetrics(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	n := func(v int) *int { return &v }
	pct := func(p50, p95 int64) *persona.Percentiles { return &persona.Percentiles{P50: p50, P95: p95} }
	// every sets each field of Metrics to a distinct value, so a field the merge forgets
	// shows up.
	every := persona.Metrics{ConnectingScreenMS: i64(310), FirstGreetingMS: i64(820), Turns: n(4),
		ResponseMS: pct(640, 910), BargeIns: n(1), BargeInStopMS: pct(120, 180), STTFinalMS: pct(60, 95),
		LLMFirstTokenMS: pct(300, 420), TTSFirstAudioMS: pct(40, 70), Errors: &persona.ErrorCount{Count: 2, LastKind: "llm_timeout"},
		ToolCalls: n(3), ToolErrors: n(1), ToolMS: pct(150, 1400), Backchannels: n(5), FalseInterruptions: n(2), MidSentenceWaits: n(6),
		MidSentenceCuts: n(1), CallerSpeechMS: i64(5200), AssistantSpeechMS: i64(9100)}
	if f := reflect.ValueOf(every); func() bool {
		for i := range f.NumField() {
			if f.Field(i).IsNil() {
				return true
			}
		}
		return false
	}() {
		t.Fatalf("the test's full metrics leave a field unset: %+v", every)
	}
	tests := []struct {
		name       string
		base, over persona.Metrics
		want       *persona.Metrics
	}{
		{"nothing on either side is nil", persona.Metrics{}, persona.Metrics{}, nil},
		{"over onto nothing", persona.Metrics{}, every, &every},
		{"nothing over keeps base", every, persona.Metrics{}, &every},
		{"greeting then the conversation's figures",
			persona.Metrics{ConnectingScreenMS: i64(310), FirstGreetingMS: i64(820)},
			persona.Metrics{Turns: n(4), ResponseMS: pct(640, 910), Errors: &persona.ErrorCount{Count: 1, LastKind: "stt_error"}},
			&persona.Metrics{ConnectingScreenMS: i64(310), FirstGreetingMS: i64(820), Turns: n(4), ResponseMS: pct(640, 910),
				Errors: &persona.ErrorCount{Count: 1, LastKind: "stt_error"}}},
		{"a later figure replaces an earlier one",
			persona.Metrics{Turns: n(2), ResponseMS: pct(500, 600), BargeIns: n(0)},
			persona.Metrics{Turns: n(3), ResponseMS: pct(510, 700)},
			&persona.Metrics{Turns: n(3), ResponseMS: pct(510, 700), BargeIns: n(0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeMetrics(tc.base, tc.over)
			if !reflect.DeepEqual(got, tc.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tc.want)
				t.Errorf("mergeMetrics = %s, want %s", g, w)
			}
		})
	}
}

// TestApplyReport: what a report does to the record, live and after the end.
func TestApplyReport(t *testing.T) {
	g1, g2 := int64(800), int64(900)
	said := []persona.Turn{{Speaker: persona.SpeakerAssistant, Text: "Hello.", EndMS: 900},
		{Speaker: persona.SpeakerCaller, Text: "hi", StartMS: 1500, EndMS: 1900},
		{Speaker: persona.SpeakerAssistant, Text: "How can", StartMS: 2300, EndMS: 2700, Interrupted: true}}
	tests := []struct {
		name        string
		status      string
		before      call.Call
		rep         persona.Report
		wantChanged bool
		wantReport  string
		wantTurns   int
		wantGreet   int64
	}{
		{"a live call takes the metrics", call.StatusActive, call.Call{},
			persona.Report{Kind: persona.ReportGreeting, Metrics: persona.Metrics{FirstGreetingMS: &g1}}, true, "", 0, g1},
		{"the ended report completes the record", call.StatusActive, call.Call{Metrics: &persona.Metrics{FirstGreetingMS: &g1}},
			persona.Report{Kind: persona.ReportEnded, Transcript: said}, true, call.ReportReceived, 3, g1},
		{"after the end, a report fills in only what is missing", call.StatusEnded,
			call.Call{Metrics: &persona.Metrics{FirstGreetingMS: &g1}},
			persona.Report{Kind: persona.ReportEnded, Metrics: persona.Metrics{FirstGreetingMS: &g2}, Transcript: said}, true, call.ReportReceived, 3, g1},
		{"a redelivered ended report changes nothing", call.StatusEnded,
			call.Call{Metrics: &persona.Metrics{FirstGreetingMS: &g1}, Transcript: said, AssistantReport: call.ReportReceived},
			persona.Report{Kind: persona.ReportEnded, Transcript: said}, false, call.ReportReceived, 3, g1},
		{"a late report after call.ended went without it", call.StatusEnded,
			call.Call{AssistantReport: call.ReportMissing},
			persona.Report{Kind: persona.ReportEnded, Transcript: said}, true, call.ReportReceived, 3, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.before
			c.Status = tc.status
			changed, _ := applyReport(&c, tc.rep, time.Time{})
			greet := int64(0)
			if c.Metrics != nil && c.Metrics.FirstGreetingMS != nil {
				greet = *c.Metrics.FirstGreetingMS
			}
			if changed != tc.wantChanged || c.AssistantReport != tc.wantReport || len(c.Transcript) != tc.wantTurns || greet != tc.wantGreet {
				t.Errorf("applyReport: changed %v, report %q, %d turns, greeting %d; want %v, %q, %d, %d",
					changed, c.AssistantReport, len(c.Transcript), greet, tc.wantChanged, tc.wantReport, tc.wantTurns, tc.wantGreet)
			}
			if tc.wantTurns == 3 && !c.Transcript[2].Interrupted {
				t.Errorf("the interrupted turn lost its mark: %+v", c.Transcript[2])
			}
		})
	}
}

// TestApplyReportUsage: the ended report's usage goes into the record beside the
// duration the end set; a redelivery changes nothing.
func TestApplyReportUsage(t *testing.T) {
	c := call.Call{Status: call.StatusEnded, Usage: &call.Usage{DurationMS: 4500, BillableSeconds: 5}}
	u := persona.Usage{STTAudioMS: 1200, TTSCharacters: 80, LLMPromptTokens: 300, LLMCompletionTokens: 20}
	if changed, _ := applyReport(&c, persona.Report{Kind: persona.ReportEnded, Usage: &u}, time.Time{}); !changed {
		t.Fatal("the ended report's usage changed nothing")
	}
	want := call.Usage{DurationMS: 4500, BillableSeconds: 5, Usage: u}
	if c.Usage == nil || *c.Usage != want {
		t.Fatalf("usage %+v, want %+v", c.Usage, want)
	}
	if changed, _ := applyReport(&c, persona.Report{Kind: persona.ReportEnded, Usage: &u}, time.Time{}); changed {
		t.Error("a redelivered ended report changed the record")
	}
}

// TestApplyReportQuality: the ended report's response samples go into the record of an
// assistant version's call until the write that counts it in the version's quality
// (TakeQualityDue, which drops them); a redelivery after that brings nothing back and
// changes nothing, and adds nothing.
func TestApplyReportQuality(t *testing.T) {
	turns := 2
	c := call.Call{Status: call.StatusEnded, AccountID: "acct_1", VersionID: "ver_1"}
	rep := persona.Report{Kind: persona.ReportEnded, Metrics: persona.Metrics{Turns: &turns}, ResponseSamplesMS: []int64{420, 610}}
	if changed, _ := applyReport(&c, rep, time.Time{}); !changed || !slices.Equal(c.ResponseSamplesMS, []int64{420, 610}) {
		t.Fatalf("changed %v, samples %v; want the report's", changed, c.ResponseSamplesMS)
	}
	due, ok := c.TakeQualityDue() // as the store's write does
	if !ok || due.VersionID != "ver_1" || due.Calls != 1 || due.Turns != 2 || due.Replies() != 2 || c.ResponseSamplesMS != nil {
		t.Fatalf("due %+v (%v), samples kept %v; want the call, its turns and two replies, samples dropped", due, ok, c.ResponseSamplesMS)
	}
	if changed, _ := applyReport(&c, rep, time.Time{}); changed || c.ResponseSamplesMS != nil {
		t.Errorf("a redelivered ended report: changed %v, samples %v; want nothing", changed, c.ResponseSamplesMS)
	}
	if _, ok := c.TakeQualityDue(); ok {
		t.Error("the call was due again")
	}
}

// TestApplyReportAMD: the detection's decision is kept from the first report that brings
// it (the amd report, as it is made); the ended report's copy adds only whether the
// voicemail message was left, and a redelivery changes nothing. A result the record
// cannot name is dropped.
func TestApplyReportAMD(t *testing.T) {
	at := time.Date(2026, 12, 7, 8, 0, 2, 0, time.UTC)
	c := call.Call{Status: call.StatusActive}
	first := persona.AMDResult{Result: persona.AnsweredVoicemail, Reason: "beep", DecidedAt: at, DecisionMS: 2400}
	if changed, _ := applyReport(&c, persona.Report{Kind: persona.ReportAMD, AMD: &first}, at); !changed || c.AMD == nil || *c.AMD != first {
		t.Fatalf("amd report: changed %v, amd %+v", changed, c.AMD)
	}
	if changed, _ := applyReport(&c, persona.Report{Kind: persona.ReportAMD, AMD: &first}, at); changed {
		t.Fatal("a redelivered amd report changed the record")
	}
	ended := first
	ended.Result, ended.MessageLeft = persona.AnsweredHuman, true
	applyReport(&c, persona.Report{Kind: persona.ReportEnded, AMD: &ended}, at)
	if c.AMD.Result != persona.AnsweredVoicemail || !c.AMD.MessageLeft {
		t.Fatalf("after the ended report: %+v; want the first result with message_left", c.AMD)
	}
	// A voicemail decided by the greeting's length, revised by words to a screening
	// assistant: the revision replaces it; the first report redelivered changes nothing
	// back; words never turn a screening or a beep's voicemail into anything else.
	byLength := call.Call{Status: call.StatusActive}
	long := persona.AMDResult{Result: persona.AnsweredVoicemail, Reason: "long_greeting", DecidedAt: at, DecisionMS: 2700}
	revised := persona.AMDResult{Result: persona.AnsweredScreening, Reason: "words", DecidedAt: at.Add(400 * time.Millisecond), DecisionMS: 3100}
	applyReport(&byLength, persona.Report{Kind: persona.ReportAMD, AMD: &long}, at)
	if changed, _ := applyReport(&byLength, persona.Report{Kind: persona.ReportAMD, AMD: &revised}, at); !changed || *byLength.AMD != revised {
		t.Fatalf("the revision: changed %v, amd %+v; want %+v", changed, byLength.AMD, revised)
	}
	if changed, _ := applyReport(&byLength, persona.Report{Kind: persona.ReportAMD, AMD: &long}, at); changed {
		t.Fatalf("the first report redelivered changed the revised record: %+v", byLength.AMD)
	}
	applyReport(&c, persona.Report{Kind: persona.ReportAMD, AMD: &revised}, at)
	if c.AMD.Result != persona.AnsweredVoicemail {
		t.Fatalf("a beep's voicemail revised by words: %+v", c.AMD)
	}
	other := call.Call{Status: call.StatusActive}
	if applyReport(&other, persona.Report{Kind: persona.ReportAMD, AMD: &persona.AMDResult{Result: "robot"}}, at); other.AMD != nil {
		t.Fatalf("an unknown result was kept: %+v", other.AMD)
	}
	if ev := c.EndedEvent("evt_1", at); !strings.Contains(string(ev.Data), `"amd":{"result":"voicemail"`) {
		t.Fatalf("call.ended data %s; want the amd decision", ev.Data)
	}
}

// TestValidateAMD: amd is for an outbound assistant call; its voicemail message is
// bounded and its placeholders checked; false is accepted anywhere.
func TestValidateAMD(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   CreateRequest
		param string
	}{
		{"outbound assistant", CreateRequest{PlatformHandle: "sim:a", Mode: ModeAssistant, AssistantID: "asst_1", AMD: &AMD{Enabled: true, VoicemailMessage: "Hi {{name}}."}}, ""},
		{"off on a human session", CreateRequest{PlatformHandle: "sim:a", AMD: &AMD{}}, ""},
		{"human session", CreateRequest{PlatformHandle: "sim:a", AMD: &AMD{Enabled: true}}, "amd"},
		{"web call", CreateRequest{Mode: ModeAssistant, AssistantID: "asst_1", AMD: &AMD{Enabled: true}}, "amd"},
		{"blank message", CreateRequest{PlatformHandle: "sim:a", Mode: ModeAssistant, AssistantID: "asst_1", AMD: &AMD{Enabled: true, VoicemailMessage: "  "}}, "amd.voicemail_message"},
		{"long message", CreateRequest{PlatformHandle: "sim:a", Mode: ModeAssistant, AssistantID: "asst_1", AMD: &AMD{Enabled: true, VoicemailMessage: strings.Repeat("a", MaxVoicemailMessageLen+1)}}, "amd.voicemail_message"},
		{"bad placeholder", CreateRequest{PlatformHandle: "sim:a", Mode: ModeAssistant, AssistantID: "asst_1", AMD: &AMD{Enabled: true, VoicemailMessage: "Hi {{na me}}"}}, "amd.voicemail_message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.Validate()
			e, _ := apierr.As(err)
			if tc.param == "" && err != nil || tc.param != "" && (e == nil || e.Param != tc.param) {
				t.Fatalf("Validate = %v; want an error on %q", err, tc.param)
			}
		})
	}
	a := &AMD{Enabled: true, VoicemailMessage: "Hi {{first_name|there}}, this is {{company}}."}
	if got := a.job(map[string]string{"first_name": "Ada"}, map[string]string{"company": "Acme", "first_name": "Bob"}); got.VoicemailMessage != "Hi Ada, this is Acme." {
		t.Fatalf("rendered %q", got.VoicemailMessage)
	}
	if (&AMD{}).job(nil, nil) != nil {
		t.Fatal("a disabled amd reached the job")
	}
}
