package campaign

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/session"
)

// Lines finds a campaign's line; Accounts its account's session limit.
type (
	Lines interface {
		GetLine(ctx context.Context, id string) (line.Line, error)
		FirstLine(ctx context.Context, accountID string) (line.Line, error)
	}
	Accounts interface {
		GetAccount(ctx context.Context, id string) (account.Account, error)
	}
	// Calls reads call records (call.Store).
	Calls interface {
		GetCall(ctx context.Context, id string) (call.Call, error)
	}
	// Dialer places one outbound assistant session (session.Service.Create).
	Dialer interface {
		Create(ctx context.Context, caller account.Caller, req session.CreateRequest) (session.Created, error)
	}
)

// Service applies the campaign rules (the API's routes) and settles recipients as their
// calls end (CallEnded).
type Service struct {
	Store      Store
	Lines      Lines
	Assistants assistant.Store
	Accounts   Accounts
	Calls      Calls
	Platforms  platform.Registry
	// MaxConcurrentSessions is the deployment's limit of an account's live sessions
	// (the account's own one wins): max_concurrent_calls may not exceed it.
	MaxConcurrentSessions int
	Log                   *slog.Logger
	Now                   func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC().Truncate(time.Millisecond)
	}
	return s.Now().UTC().Truncate(time.Millisecond)
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// KeyRule is the API's live-key check of a campaign's line (httpapi's requireLiveKey):
// kind is the line's platform, what names it for the refusal.
type KeyRule func(kind platform.Kind, what string) error

// sessionLimit is the account's limit of live sessions.
func (s *Service) sessionLimit(ctx context.Context, accountID string) (int, error) {
	a, err := s.Accounts.GetAccount(ctx, accountID)
	if err != nil {
		return 0, fmt.Errorf("get account %s: %w", accountID, err)
	}
	if a.MaxConcurrentSessions != nil {
		return *a.MaxConcurrentSessions, nil
	}
	if s.MaxConcurrentSessions > 0 {
		return s.MaxConcurrentSessions, nil
	}
	return session.DefaultMaxConcurrentSessions, nil
}

// Create records a draft campaign and its recipients.
//
// Errors: parameter errors; resource_not_found for an unknown line, assistant or
// version; no_line; assistant_archived, assistant_not_published; live_key_required
// (keyRule) for a test key on a line that reaches a real network.
func (s *Service) Create(ctx context.Context, caller account.Caller, in CreateInput, keyRule KeyRule) (Campaign, error) {
	if err := in.validate(); err != nil {
		return Campaign{}, err
	}
	accountID := caller.ID
	l, err := s.callingLine(ctx, accountID, in.LineID)
	if err != nil {
		return Campaign{}, err
	}
	plat, ok := s.Platforms.Lookup(l.Platform)
	if !ok {
		return Campaign{}, apierr.New(apierr.CodeUpstreamUnavailable, "the line's calling platform is not available")
	}
	if keyRule != nil {
		if err := keyRule(plat, "line "+l.ID); err != nil {
			return Campaign{}, err
		}
	} else if !plat.TestKeys() && !caller.Live {
		return Campaign{}, apierr.New(apierr.CodeLiveKeyRequired, fmt.Sprintf("sk_test_ keys run campaigns only on sim lines; line %s is on %q", l.ID, l.Platform))
	}
	if err := checkHandles(plat, in.Recipients, func(i int) string { return fmt.Sprintf("recipients[%d]", i) }); err != nil {
		return Campaign{}, err
	}
	// The assistant must be callable now; the version is checked, or the active one
	// pinned, again at start.
	if _, err := assistant.CallVersion(ctx, s.Assistants, accountID, in.AssistantID, in.VersionID); err != nil {
		return Campaign{}, err
	}
	limit, err := s.sessionLimit(ctx, accountID)
	if err != nil {
		return Campaign{}, err
	}
	st := in.Settings
	if !in.ConcurrencyGiven {
		st.MaxConcurrentCalls = min(DefaultConcurrency, limit)
	}
	if st.MaxConcurrentCalls > limit {
		return Campaign{}, apierr.Invalid("settings.max_concurrent_calls", fmt.Sprintf(
			"max_concurrent_calls must be at most the account's limit of concurrent sessions, %d", limit))
	}
	now := s.now()
	c := Campaign{ID: ident.New(IDPrefix), AccountID: accountID, Name: in.Name, AssistantID: in.AssistantID,
		VersionID: in.VersionID, VersionGiven: in.VersionID != "", LineID: l.ID, Platform: l.Platform,
		Status: StatusDraft, Settings: st, Live: caller.Live, Metadata: metadata.New(in.Metadata),
		Recipients: len(in.Recipients), Sequenced: true, CreatedAt: now}
	rs := c.newRecipients(0, in.Recipients)
	if err := s.Store.CreateCampaign(ctx, c, rs); err != nil {
		return Campaign{}, fmt.Errorf("create campaign: %w", err)
	}
	c.Revision = 1
	return c, nil
}

// newRecipients makes the stored recipients of in, numbered from first on, and notes
// on c whether any has its own time zone.
func (c *Campaign) newRecipients(first int, in []RecipientInput) []Recipient {
	rs := make([]Recipient, len(in))
	for i, r := range in {
		rs[i] = Recipient{ID: RecipientID(c.ID, first+i), CampaignID: c.ID, AccountID: c.AccountID,
			PlatformHandle: r.PlatformHandle, TimeZone: r.TimeZone, Variables: maps.Clone(r.Variables),
			Metadata: metadata.New(r.Metadata), Status: RecipientPending}
		c.RecipientZones = c.RecipientZones || r.TimeZone != ""
	}
	return rs
}

// AddRecipients appends recipients to a draft campaign's list (an upload): validated
// before anything is written (where names recipient i in an error), then written past
// the list's end under the campaign's upload lease, then taken in by one conditional
// write of the count. An upload that fails half way leaves recipients past the end,
// which no read sees and the next upload overwrites (Start and Cancel delete them).
//
// Errors: resource_not_found; campaign_state_invalid unless draft, while another upload
// holds the list, or for a campaign created before uploads; parameter errors
// (recipients, handles the line's platform cannot dial, the list's bound).
func (s *Service) AddRecipients(ctx context.Context, accountID, id string, in []RecipientInput, where func(i int) string) (Campaign, error) {
	if len(in) == 0 {
		return Campaign{}, apierr.Param(apierr.CodeParameterMissing, "recipients", "the upload lists no recipient")
	}
	if err := validateRecipients(in, where); err != nil {
		return Campaign{}, err
	}
	c, err := s.Get(ctx, accountID, id)
	if err != nil {
		return Campaign{}, err
	}
	plat, ok := s.Platforms.Lookup(c.Platform)
	if !ok {
		return Campaign{}, apierr.New(apierr.CodeUpstreamUnavailable, "the line's calling platform is not available")
	}
	if err := checkHandles(plat, in, where); err != nil {
		return Campaign{}, err
	}
	// Take the lease: from here no other upload writes past the end, and neither start
	// nor cancel moves the draft on.
	until := s.now().Add(uploadLease)
	c, err = s.change(ctx, accountID, id, func(c *Campaign) error {
		if err := c.uploadable(s.now()); err != nil {
			return err
		}
		if c.Recipients+len(in) > MaxListRecipients {
			return apierr.Invalid("recipients", fmt.Sprintf("a campaign lists at most %d recipients: it has %d, and the upload adds %d",
				MaxListRecipients, c.Recipients, len(in)))
		}
		c.UploadUntil = &until
		return nil
	})
	if err != nil {
		return Campaign{}, err
	}
	first := c.Recipients
	rs := c.newRecipients(first, in)
	wctx, cancel := context.WithDeadline(ctx, until.Add(-uploadLease/2))
	err = s.Store.PutRecipients(wctx, rs)
	cancel()
	if err != nil {
		s.release(ctx, c)
		return Campaign{}, fmt.Errorf("write uploaded recipients of %s: %w", id, err)
	}
	c.Recipients, c.UploadUntil = first+len(in), nil
	err = s.Store.UpdateCampaign(ctx, c, nil)
	if errors.Is(err, apierr.ErrConflict) {
		return Campaign{}, apierr.New(apierr.CodeCampaignState, fmt.Sprintf(
			"campaign %s changed while the upload was written (its lease ran out); upload again", id))
	}
	if err != nil {
		return Campaign{}, fmt.Errorf("take in uploaded recipients of %s: %w", id, err)
	}
	c.Revision++
	return c, nil
}

// checkHandles refuses the first recipient whose handle plat cannot dial; where names
// recipient i in the error.
func checkHandles(plat platform.Kind, in []RecipientInput, where func(i int) string) error {
	for i, r := range in {
		if err := plat.CheckHandle(r.PlatformHandle); err != nil {
			return apierr.Invalid(where(i)+".platform_handle",
				fmt.Sprintf("platform_handle on the %s platform must be %v", plat.Name(), err))
		}
	}
	return nil
}

// uploadable refuses an upload to c at now.
func (c Campaign) uploadable(now time.Time) error {
	switch {
	case c.Status != StatusDraft:
		return apierr.New(apierr.CodeCampaignState, fmt.Sprintf("campaign %s is %s: recipients are added only to a draft", c.ID, c.Status))
	case !c.Sequenced:
		return apierr.New(apierr.CodeCampaignState, fmt.Sprintf("campaign %s was created before uploads existed: create a new campaign to upload recipients", c.ID))
	case c.uploading(now):
		return apierr.New(apierr.CodeCampaignState, fmt.Sprintf("campaign %s has an upload in progress: retry once it ends", c.ID))
	}
	return nil
}

func (c Campaign) uploading(now time.Time) bool {
	return c.UploadUntil != nil && c.UploadUntil.After(now)
}

// release gives up an upload's lease after its writes failed.
func (s *Service) release(ctx context.Context, c Campaign) {
	c.UploadUntil = nil
	if err := s.Store.UpdateCampaign(context.WithoutCancel(ctx), c, nil); err != nil {
		s.log().Warn("release upload lease", "campaign_id", c.ID, "err", err)
	}
}

// dropUnlisted deletes what failed uploads left past c's list, once c is no draft.
func (s *Service) dropUnlisted(ctx context.Context, c Campaign) {
	if !c.Sequenced {
		return
	}
	if err := s.Store.DropRecipients(ctx, c.ID, c.listEnd()); err != nil {
		s.log().Warn("drop unlisted recipients", "campaign_id", c.ID, "err", err)
	}
}

// callingLine is the given line, or the account's oldest.
func (s *Service) callingLine(ctx context.Context, accountID, lineID string) (line.Line, error) {
	if lineID != "" {
		l, err := s.Lines.GetLine(ctx, lineID)
		return apierr.Owned(l, l.AccountID, err, accountID,
			apierr.Param(apierr.CodeResourceNotFound, "line_id", fmt.Sprintf("no such line: %q", lineID)))
	}
	l, err := s.Lines.FirstLine(ctx, accountID)
	if errors.Is(err, apierr.ErrNotFound) {
		return line.Line{}, apierr.New(apierr.CodeNoLine, "the account has no line to call from; ask the operator to provision one")
	}
	if err != nil {
		return line.Line{}, fmt.Errorf("first line: %w", err)
	}
	return l, nil
}

// Get reads an account's campaign.
func (s *Service) Get(ctx context.Context, accountID, id string) (Campaign, error) {
	if !ident.Valid(IDPrefix, id) {
		return Campaign{}, notFound(id)
	}
	c, err := s.Store.GetCampaign(ctx, id)
	return apierr.Owned(c, c.AccountID, err, accountID, notFound(id))
}

func notFound(id string) *apierr.Error {
	return apierr.Param(apierr.CodeResourceNotFound, "id", fmt.Sprintf("no such campaign: %q", id))
}

// Counts counts the campaign's recipients per status, every status present.
func (s *Service) Counts(ctx context.Context, c Campaign) (map[string]int, error) {
	got, err := s.Store.RecipientCounts(ctx, c.ID, c.listEnd())
	if err != nil {
		return nil, fmt.Errorf("count recipients of %s: %w", c.ID, err)
	}
	out := make(map[string]int, len(RecipientStatuses))
	for _, st := range RecipientStatuses {
		out[st] = got[st]
	}
	return out, nil
}

// List lists an account's campaigns, newest first (up to Limit+1).
func (s *Service) List(ctx context.Context, accountID string, q ListQuery) ([]Campaign, error) {
	return s.Store.ListCampaigns(ctx, accountID, q)
}

// Recipients pages a campaign's recipients in list order (up to Limit+1).
func (s *Service) Recipients(ctx context.Context, accountID, id string, q RecipientQuery) ([]Recipient, error) {
	c, err := s.Get(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	q.End = c.listEnd()
	return s.Store.ListRecipients(ctx, id, q)
}

// invalidState is the refusal of a lifecycle step the campaign's status does not allow.
func invalidState(c Campaign, step string) error {
	return apierr.New(apierr.CodeCampaignState, fmt.Sprintf("campaign %s is %s: it cannot be %s", c.ID, c.Status, step))
}

// change applies fn to the stored campaign and writes it, again on a conflict.
func (s *Service) change(ctx context.Context, accountID, id string, fn func(*Campaign) error) (Campaign, error) {
	for range 20 {
		c, err := s.Get(ctx, accountID, id)
		if err != nil {
			return Campaign{}, err
		}
		if err := fn(&c); err != nil {
			return Campaign{}, err
		}
		err = s.Store.UpdateCampaign(ctx, c, nil)
		if errors.Is(err, apierr.ErrConflict) {
			continue
		}
		if err != nil {
			return Campaign{}, fmt.Errorf("update campaign %s: %w", id, err)
		}
		c.Revision++
		return c, nil
	}
	return Campaign{}, fmt.Errorf("update campaign %s: %w", id, apierr.ErrConflict)
}

// Start runs a draft campaign: the version given at create, or the assistant's active
// one now, is pinned for every call.
//
// Errors: resource_not_found; campaign_state_invalid unless draft; assistant_archived,
// assistant_not_published.
func (s *Service) Start(ctx context.Context, accountID, id string) (Campaign, error) {
	c, err := s.change(ctx, accountID, id, func(c *Campaign) error {
		if c.Status != StatusDraft {
			return invalidState(*c, "started")
		}
		if c.uploading(s.now()) {
			return apierr.New(apierr.CodeCampaignState, fmt.Sprintf("campaign %s has an upload in progress: start it once the upload ends", c.ID))
		}
		if c.Recipients == 0 {
			return apierr.New(apierr.CodeCampaignState, fmt.Sprintf("campaign %s has no recipients: add them (POST /v1/campaigns/%s/recipients) before starting it", c.ID, c.ID))
		}
		pinned := ""
		if c.VersionGiven {
			pinned = c.VersionID
		}
		v, err := assistant.CallVersion(ctx, s.Assistants, accountID, c.AssistantID, pinned)
		if err != nil {
			return err
		}
		now := s.now()
		c.VersionID, c.Status, c.Active, c.StartedAt, c.UploadUntil = v.ID, StatusRunning, true, &now, nil
		return nil
	})
	if err == nil {
		s.dropUnlisted(ctx, c)
	}
	return c, err
}

// Pause stops new dials of a running campaign at once; calls under way finish.
func (s *Service) Pause(ctx context.Context, accountID, id string) (Campaign, error) {
	return s.change(ctx, accountID, id, func(c *Campaign) error {
		if c.Status != StatusRunning {
			return invalidState(*c, "paused")
		}
		c.Status = StatusPaused
		return nil
	})
}

// Resume runs a paused campaign again.
func (s *Service) Resume(ctx context.Context, accountID, id string) (Campaign, error) {
	return s.change(ctx, accountID, id, func(c *Campaign) error {
		if c.Status != StatusPaused {
			return invalidState(*c, "resumed")
		}
		c.Status = StatusRunning
		return nil
	})
}

// Cancel ends a draft, running or paused campaign: no call is placed from now on, calls
// under way finish, and recipients not called are canceled.
func (s *Service) Cancel(ctx context.Context, accountID, id string) (Campaign, error) {
	c, err := s.change(ctx, accountID, id, func(c *Campaign) error {
		switch c.Status {
		case StatusDraft, StatusRunning, StatusPaused:
		default:
			return invalidState(*c, "canceled")
		}
		if c.uploading(s.now()) {
			return apierr.New(apierr.CodeCampaignState, fmt.Sprintf("campaign %s has an upload in progress: cancel it once the upload ends", c.ID))
		}
		now := s.now()
		c.Status, c.CanceledAt, c.UploadUntil = StatusCanceled, &now, nil
		// The runner marks what is left pending canceled, then clears Active once no
		// call is under way (a draft's too: its list may be long).
		c.Active = true
		return nil
	})
	if err != nil {
		return c, err
	}
	// No claim succeeds once the status is canceled (ClaimRecipient), so the pending
	// recipients stay pending until marked: here for up to cancelWithin, then by the
	// runner's next ticks (a list of 100,000 takes longer than a request may).
	s.dropUnlisted(ctx, c)
	mctx, cancel := context.WithTimeout(ctx, cancelWithin)
	defer cancel()
	if err := s.cancelPending(mctx, c); err != nil && mctx.Err() == nil {
		s.log().Error("cancel pending recipients", "campaign_id", c.ID, "err", err)
	}
	return c, nil
}

// cancelWithin bounds the marking of a canceled campaign's pending recipients in the
// request that cancels it; the runner marks the rest.
const cancelWithin = 2 * time.Second

// cancelPending marks a canceled campaign's pending recipients canceled.
func (s *Service) cancelPending(ctx context.Context, c Campaign) error {
	return s.eachRecipient(ctx, c, RecipientPending, 100, func(r Recipient) (bool, error) {
		r.Status, r.NextAttemptAt = RecipientCanceled, nil
		if err := s.Store.UpdateRecipient(ctx, r); err != nil && !errors.Is(err, apierr.ErrConflict) {
			return false, err
		}
		return true, nil
	})
}

// eachRecipient calls fn on c's recipients with status ("": all) in list order,
// reading them page recipients at a time, until fn says stop or fails.
func (s *Service) eachRecipient(ctx context.Context, c Campaign, status string, page int, fn func(Recipient) (bool, error)) error {
	q := RecipientQuery{Status: status, End: c.listEnd(), Limit: page}
	for {
		page, err := s.Store.ListRecipients(ctx, c.ID, q)
		if err != nil {
			return err
		}
		for _, r := range page[:min(len(page), q.Limit)] {
			if more, err := fn(r); err != nil || !more {
				return err
			}
		}
		if len(page) <= q.Limit {
			return nil
		}
		q.After = page[q.Limit-1].ID
	}
}

// CallEnded settles the recipient whose call c ended (session.WithCallEnded): its
// attempt's outcome, and a retry or its final status. A call of no campaign, or one
// already settled, changes nothing.
func (s *Service) CallEnded(ctx context.Context, c call.Call) {
	if c.CampaignID == "" || c.RecipientID == "" || !c.Over() {
		return
	}
	if err := s.settleCall(ctx, c); err != nil {
		s.log().Error("settle campaign recipient", "campaign_id", c.CampaignID, "recipient_id", c.RecipientID, "call_id", c.ID, "err", err)
	}
}

func (s *Service) settleCall(ctx context.Context, c call.Call) error {
	for range 10 {
		cmp, err := s.Store.GetCampaign(ctx, c.CampaignID)
		if err != nil {
			return err
		}
		r, err := s.Store.GetRecipient(ctx, c.CampaignID, c.RecipientID)
		if err != nil {
			return err
		}
		a := r.Current()
		if a == nil || a.CallID != c.ID || a.Outcome != "" {
			return nil // settled already
		}
		settleCall(cmp, &r, c, s.now())
		err = s.Store.UpdateRecipient(ctx, r)
		if !errors.Is(err, apierr.ErrConflict) {
			return err
		}
	}
	return apierr.ErrConflict
}

func endedAt(c call.Call, now time.Time) time.Time {
	if c.EndedAt != nil {
		return *c.EndedAt
	}
	return now
}

// callOutcome is what an ended call's attempt came to.
func callOutcome(c call.Call) string {
	switch {
	case c.AnsweredAt != nil && c.Voicemail():
		return OutcomeVoicemail
	case c.AnsweredAt != nil:
		return OutcomeAnswered
	case c.EndReason == call.ReasonBusy:
		return OutcomeBusy
	case c.EndReason == call.ReasonNoAnswer:
		return OutcomeNoAnswer
	}
	return OutcomeFailed
}

// settleCall settles r's current attempt from its ended call's record: the outcome, and
// the call's length and whether a voicemail message was left, for the report.
func settleCall(cmp Campaign, r *Recipient, c call.Call, now time.Time) {
	settle(cmp, r, callOutcome(c), c.EndReason, "", endedAt(c, now))
	a := &r.Attempts[len(r.Attempts)-1]
	if c.DurationMS != nil {
		a.DurationMS = *c.DurationMS
	}
	a.VoicemailLeft = c.Voicemail() && c.AMD.MessageLeft
}

// settle records the current attempt's outcome and moves r on: answered; back to
// pending for a retry (after the delay; at once after not_placed); or the outcome as its
// final status. A canceled campaign retries nothing.
func settle(cmp Campaign, r *Recipient, outcome, reason, errMsg string, at time.Time) {
	a := &r.Attempts[len(r.Attempts)-1]
	a.Outcome, a.EndReason, a.Error, a.EndedAt = outcome, reason, errMsg, &at
	canceled := cmp.Status == StatusCanceled
	switch {
	case outcome == OutcomeAnswered:
		r.Status, r.NextAttemptAt = RecipientAnswered, nil
	case outcome == OutcomeNotPlaced && !canceled:
		r.Status, r.NextAttemptAt = RecipientPending, nil
	case outcome == OutcomeNotPlaced:
		r.Status = RecipientCanceled
	case !canceled && retries(cmp.Settings.Retry, outcome) && r.Placed() < cmp.Settings.Retry.MaxAttempts:
		next := at.Add(time.Duration(cmp.Settings.Retry.DelaySeconds) * time.Second)
		r.Status, r.NextAttemptAt = RecipientPending, &next
	default:
		r.Status, r.NextAttemptAt = outcome, nil
	}
}

func retries(rt Retry, outcome string) bool {
	for _, o := range rt.On {
		if o == outcome {
			return true
		}
	}
	return false
}

// completedEvent is campaign.completed of c with its final counts.
func completedEvent(c Campaign, counts map[string]int) callevent.Event {
	data := callevent.CampaignCompleted{CampaignID: c.ID, Name: c.Name, AssistantID: c.AssistantID, VersionID: c.VersionID,
		LineID: c.LineID, Recipients: c.Recipients, Counts: counts, Metadata: c.Metadata.OrEmpty()}
	if c.StartedAt != nil {
		data.StartedAt = *c.StartedAt
	}
	if c.CompletedAt != nil {
		data.CompletedAt = *c.CompletedAt
	}
	return callevent.Event{ID: ident.New("evt"), AccountID: c.AccountID, Type: callevent.TypeCampaignCompleted,
		CreatedAt: data.CompletedAt, Data: mustJSON(data)}
}
