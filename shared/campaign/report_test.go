package campaign_test

import (
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/campaign"
)

// TestBuildReport: a campaign's report counts what its recipients' attempts came to:
// calls placed (not a refused dial, not a not_placed claim), outcomes, the connect rate
// over ended calls, the answered calls' mean length, voicemails left, the usage, and
// the calls per hour of their dial.
func TestBuildReport(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 11, 22, h, m, 0, 0, time.UTC) }
	ended := func(t time.Time) *time.Time { return &t }
	rs := []campaign.Recipient{
		{ID: "rcp_1", Status: campaign.RecipientAnswered, Attempts: []campaign.Attempt{
			{CallID: "call_1", ClaimedAt: at(7, 5), EndedAt: ended(at(7, 6)), Outcome: campaign.OutcomeBusy},
			{CallID: "call_2", ClaimedAt: at(8, 10), EndedAt: ended(at(8, 11)), Outcome: campaign.OutcomeAnswered, DurationMS: 40000},
		}},
		{ID: "rcp_2", Status: campaign.RecipientAnswered, Attempts: []campaign.Attempt{
			{CallID: "call_3", ClaimedAt: at(7, 20), EndedAt: ended(at(7, 21)), Outcome: campaign.OutcomeAnswered, DurationMS: 20000},
		}},
		{ID: "rcp_3", Status: campaign.RecipientVoicemail, Attempts: []campaign.Attempt{
			{CallID: "call_4", ClaimedAt: at(7, 30), EndedAt: ended(at(7, 31)), Outcome: campaign.OutcomeVoicemail, DurationMS: 9000, VoicemailLeft: true},
		}},
		{ID: "rcp_4", Status: campaign.RecipientFailed, Attempts: []campaign.Attempt{
			{CallID: "call_5", ClaimedAt: at(7, 40), EndedAt: ended(at(7, 40)), Outcome: campaign.OutcomeFailed, Error: "destination not allowed"},
		}},
		{ID: "rcp_5", Status: campaign.RecipientCalling, Attempts: []campaign.Attempt{
			{CallID: "call_6", ClaimedAt: at(7, 50), EndedAt: ended(at(7, 51)), Outcome: campaign.OutcomeNotPlaced},
			{CallID: "call_7", ClaimedAt: at(8, 20)},
		}},
		{ID: "rcp_6", Status: campaign.RecipientPending},
	}
	r := campaign.BuildReport(campaign.Campaign{ID: "cmp_1", Status: campaign.StatusRunning}, rs)

	if r.Calls != 5 || r.InProgress != 1 || r.Answered != 2 || r.VoicemailsLeft != 1 || r.DurationMS != 69000 {
		t.Errorf("calls %d, in progress %d, answered %d, voicemails left %d, duration %d ms; want 5, 1, 2, 1, 69000",
			r.Calls, r.InProgress, r.Answered, r.VoicemailsLeft, r.DurationMS)
	}
	want := map[string]int{"answered": 2, "voicemail": 1, "busy": 1, "no_answer": 0, "failed": 1, "not_placed": 1}
	for o, n := range want {
		if r.Outcomes[o] != n {
			t.Errorf("outcomes %v, want %v", r.Outcomes, want)
			break
		}
	}
	// Four placed calls ended (busy, two answered, voicemail): the refused dial never
	// reached the platform and the last call is under way.
	if r.ConnectRate == nil || *r.ConnectRate != 0.5 {
		t.Errorf("connect rate %v, want 0.5", r.ConnectRate)
	}
	if r.AverageDurationMS == nil || *r.AverageDurationMS != 30000 {
		t.Errorf("average duration %v, want 30000 ms", r.AverageDurationMS)
	}
	if r.Statuses[campaign.RecipientAnswered] != 2 || r.Statuses[campaign.RecipientPending] != 1 || r.Statuses[campaign.RecipientCanceled] != 0 {
		t.Errorf("statuses %v", r.Statuses)
	}
	if len(r.Hours) != 2 || !r.Hours[0].Hour.Equal(at(7, 0)) || r.Hours[0].Calls != 3 || r.Hours[1].Calls != 2 ||
		r.Hours[1].InProgress != 1 || r.Hours[1].Outcomes[campaign.OutcomeAnswered] != 1 || r.Hours[0].Outcomes[campaign.OutcomeVoicemail] != 1 {
		t.Errorf("hours %+v, want 07:00 with 3 calls (busy, answered, voicemail) and 08:00 with 2 (answered, one under way)", r.Hours)
	}

	empty := campaign.BuildReport(campaign.Campaign{ID: "cmp_2", Status: campaign.StatusDraft}, nil)
	if empty.ConnectRate != nil || empty.AverageDurationMS != nil || empty.Calls != 0 || len(empty.Outcomes) != len(campaign.ReportOutcomes) {
		t.Errorf("a draft's report %+v, want no rates and every outcome at 0", empty)
	}
}
