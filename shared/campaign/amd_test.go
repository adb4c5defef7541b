package campaign_test

import (
	"context"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/campaign"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/session"
)

// TestVoicemailOutcome: a campaign call the answering-machine detection found a
// voicemail box on settles as voicemail, not answered; voicemail is retried when
// retry.on names it, and is then the recipient's final status, counted as such; a call a
// person answered is answered. Every dial asks for the campaign's detection and
// voicemail message.
func TestVoicemailOutcome(t *testing.T) {
	ctx := context.Background()
	st, acct := storeWithAccount(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	amd := session.AMD{Enabled: true, VoicemailMessage: "Hi {{first_name}}, please call us back."}
	c := campaign.Campaign{ID: ident.New(campaign.IDPrefix), AccountID: acct.ID, AssistantID: ident.New("asst"), VersionID: ident.New("ver"),
		LineID: ident.New("line"), Platform: "sim", Status: campaign.StatusRunning, Active: true, Recipients: 2, CreatedAt: now,
		Settings: campaign.Settings{MaxConcurrentCalls: 2, CallsPerSecond: 10, AMD: amd,
			Retry: campaign.Retry{MaxAttempts: 2, On: []string{campaign.OutcomeVoicemail}}}}
	box := campaign.Recipient{ID: ident.New(campaign.RecipientIDPrefix), CampaignID: c.ID, AccountID: acct.ID,
		PlatformHandle: "sim:box", Status: campaign.RecipientCalling, Variables: map[string]string{"first_name": "Ada"},
		Attempts: []campaign.Attempt{{CallID: ident.New("call"), ClaimedAt: now}}}
	person := campaign.Recipient{ID: ident.New(campaign.RecipientIDPrefix), CampaignID: c.ID, AccountID: acct.ID,
		PlatformHandle: "sim:person", Status: campaign.RecipientCalling,
		Attempts: []campaign.Attempt{{CallID: ident.New("call"), ClaimedAt: now}}}
	if err := st.CreateCampaign(ctx, c, []campaign.Recipient{box, person}); err != nil {
		t.Fatal(err)
	}
	svc := &campaign.Service{Store: st, Lines: st, Assistants: st, Accounts: st, Calls: st}
	end := func(r campaign.Recipient, callID, result string) {
		t.Helper()
		at := time.Now().UTC()
		cl := call.Call{ID: callID, AccountID: acct.ID, Direction: call.Outbound, LineID: c.LineID, To: r.PlatformHandle,
			Media: "audio", Status: call.StatusEnded, EndReason: call.ReasonAssistantHangup, AnsweredAt: &now, EndedAt: &at,
			StartedAt: now, Platform: "sim", HandledBy: call.HandledByAssistant, CampaignID: c.ID, RecipientID: r.ID,
			AMD: &persona.AMDResult{Result: result, DecidedAt: at, DecisionMS: 2500}}
		if err := st.SaveCall(ctx, cl, nil); err != nil {
			t.Fatal(err)
		}
		svc.CallEnded(ctx, cl)
	}
	end(box, box.Attempts[0].CallID, persona.AnsweredVoicemail)
	end(person, person.Attempts[0].CallID, persona.AnsweredHuman)

	got, _ := st.GetRecipient(ctx, c.ID, box.ID)
	if got.Status != campaign.RecipientPending || got.Attempts[0].Outcome != campaign.OutcomeVoicemail {
		t.Fatalf("voicemail box after its first call = %+v; want pending (retry on voicemail), outcome voicemail", got)
	}
	got, _ = st.GetRecipient(ctx, c.ID, person.ID)
	if got.Status != campaign.RecipientAnswered || got.Attempts[0].Outcome != campaign.OutcomeAnswered {
		t.Fatalf("person = %+v; want answered", got)
	}

	d := &dials{}
	r := &campaign.Runner{Service: svc, Dialer: d}
	if err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if d.count() != 1 || d.got[0].AMD == nil || *d.got[0].AMD != amd || d.got[0].Variables["first_name"] != "Ada" {
		t.Fatalf("dials %+v; want the box again, with the campaign's amd", d.got)
	}
	got, _ = st.GetRecipient(ctx, c.ID, box.ID)
	end(got, got.Attempts[1].CallID, persona.AnsweredVoicemail)
	got, _ = st.GetRecipient(ctx, c.ID, box.ID)
	if got.Status != campaign.RecipientVoicemail || len(got.Attempts) != 2 || got.Attempts[1].Outcome != campaign.OutcomeVoicemail {
		t.Fatalf("voicemail box after its last call = %+v; want voicemail", got)
	}
	counts, err := svc.Counts(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if counts[campaign.RecipientVoicemail] != 1 || counts[campaign.RecipientAnswered] != 1 {
		t.Fatalf("counts %v; want voicemail 1, answered 1", counts)
	}
}
