// Package campaign holds outbound campaigns: an assistant calling a list of recipients
// from one line, within a calling window, at most so many calls at once and so many a
// second, retrying busy, unanswered and failed calls after a delay. Each call is an
// ordinary outbound assistant session (shared/session): its record and call.ended carry
// the campaign's and the recipient's ids.
//
// The runner (runner.go) keeps every piece of its state in the store: a recipient is
// claimed for an attempt by one conditional write that also names the attempt's call id
// before the dial, so a crash between the claim and the dial is repaired once (the call
// record is there or it is not) and no recipient is ever dialled twice for one attempt.
package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/variables"
)

// IDPrefix and RecipientIDPrefix start campaign and recipient ids.
const (
	IDPrefix          = "cmp"
	RecipientIDPrefix = "rcp"
)

// Campaign statuses: draft -> running -> paused / completed / canceled.
const (
	StatusDraft     = "draft"
	StatusRunning   = "running"
	StatusPaused    = "paused"
	StatusCompleted = "completed"
	StatusCanceled  = "canceled"
)

// Statuses are every campaign status.
var Statuses = []string{StatusDraft, StatusRunning, StatusPaused, StatusCompleted, StatusCanceled}

// Recipient statuses. pending waits for its first attempt or a retry; calling has an
// attempt under way; the rest are final: answered (a call connected), or the last
// attempt's outcome once no retry is left (busy, no_answer, failed), or canceled (the
// campaign was canceled before the recipient's call was placed).
const (
	RecipientPending  = "pending"
	RecipientCalling  = "calling"
	RecipientAnswered = "answered"
	RecipientBusy     = "busy"
	RecipientNoAnswer = "no_answer"
	RecipientFailed   = "failed"
	RecipientCanceled = "canceled"
	// RecipientVoicemail: the last call reached a voicemail box (answering-machine
	// detection), and no retry is left.
	RecipientVoicemail = "voicemail"
)

// RecipientStatuses are every recipient status, in the order a recipient moves.
var RecipientStatuses = []string{RecipientPending, RecipientCalling, RecipientAnswered, RecipientBusy,
	RecipientNoAnswer, RecipientFailed, RecipientVoicemail, RecipientCanceled}

// Attempt outcomes. answered, busy, no_answer and failed are a placed call's; not_placed
// is an attempt whose call was never recorded (a crash between the claim and the dial,
// repaired by the runner), which does not count against the recipient's attempts.
const (
	OutcomeAnswered  = "answered"
	OutcomeBusy      = "busy"
	OutcomeNoAnswer  = "no_answer"
	OutcomeFailed    = "failed"
	OutcomeNotPlaced = "not_placed"
	// OutcomeVoicemail: the call was answered by a voicemail box, as the
	// answering-machine detection decided (the voicemail message, if any, was left).
	OutcomeVoicemail = "voicemail"
)

// RetryOutcomes are the outcomes retry.on may name.
var RetryOutcomes = []string{OutcomeBusy, OutcomeNoAnswer, OutcomeFailed, OutcomeVoicemail}

// DefaultRetryOn are the outcomes retried when retry is not given.
var DefaultRetryOn = []string{OutcomeBusy, OutcomeNoAnswer, OutcomeFailed}

// Bounds.
const (
	MaxRecipients = 1000
	// MaxListRecipients bounds a campaign's whole list: inline recipients and uploads
	// (AddRecipients) together.
	MaxListRecipients = 100_000
	// uploadLease is how long an upload may hold a draft campaign's list: longer than
	// any upload runs (the API bounds its write phase at half of it), so an upload
	// whose lease ran out has stopped writing.
	uploadLease        = 2 * time.Minute
	MaxCallsPerSecond  = 10.0
	MaxAttempts        = 10
	MaxRetryDelay      = 7 * 24 * time.Hour
	MaxNameLength      = 200
	DefaultMaxAttempts = 2
	DefaultRetryDelay  = 5 * time.Minute
	DefaultCPS         = 1.0
	DefaultConcurrency = 5
)

// Days are the window's day names, Sunday first (time.Weekday order).
var Days = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Window is when calls may start: on Days, from Start to End ("HH:MM", End after Start,
// "24:00" for midnight) in TimeZone (IANA; default UTC), or in the recipient's own time
// zone where it has one. Calls under way at the end are not cut off.
type Window struct {
	TimeZone string   `json:"time_zone"`
	Days     []string `json:"days"`
	Start    string   `json:"start"`
	End      string   `json:"end"`
}

// Retry is when a recipient's call is tried again: after an outcome in On, Delay later,
// up to MaxAttempts placed calls in all.
type Retry struct {
	MaxAttempts  int      `json:"max_attempts"`
	DelaySeconds int      `json:"delay_seconds"`
	On           []string `json:"on"`
}

// Settings are how a campaign calls.
type Settings struct {
	// Window is nil for any time.
	Window             *Window `json:"window,omitempty"`
	MaxConcurrentCalls int     `json:"max_concurrent_calls"`
	CallsPerSecond     float64 `json:"calls_per_second"`
	Retry              Retry   `json:"retry"`
	// AMD is answering-machine detection on every call: on by default (a campaign
	// created before it existed has it off). A voicemail box gets AMD.VoicemailMessage
	// after its beep, or is hung up on; its attempt's outcome is voicemail.
	AMD session.AMD `json:"amd"`
}

// Campaign is the stored campaign.
type Campaign struct {
	ID          string `json:"id"`
	AccountID   string `json:"account_id"`
	Name        string `json:"name"`
	AssistantID string `json:"assistant_id"`
	// VersionID is the version every call runs: the one given at create, else the
	// assistant's active version when the campaign starts.
	VersionID string `json:"version_id"`
	// VersionGiven: the create named VersionID (else it is pinned at start).
	VersionGiven bool     `json:"version_given,omitempty"`
	LineID       string   `json:"line_id"`
	Platform     string   `json:"platform"` // the line's calling platform, for the key rule
	Status       string   `json:"status"`
	Settings     Settings `json:"settings"`
	// Live: created with an sk_live_ key; its calls are placed as that key's would be
	// (test keys place calls only through the sim).
	Live       bool              `json:"live"`
	Metadata   metadata.Metadata `json:"metadata,omitempty"`
	Recipients int               `json:"recipients"`
	// Sequenced: recipient ids are RecipientID(ID, n), n counting from 0 in list order,
	// and only ids below RecipientID(ID, Recipients) are the list: an upload writes its
	// recipients past the count, then takes them in with the count (AddRecipients).
	// Campaigns created before uploads existed have random ids and take no upload.
	Sequenced bool `json:"sequenced,omitempty"`
	// UploadUntil: an upload holds the draft's list until then (nil: none).
	UploadUntil *time.Time `json:"upload_until,omitempty"`
	// RecipientZones: some recipient has its own time zone, so the window is weighed
	// recipient by recipient (else once for the campaign).
	RecipientZones bool `json:"recipient_zones,omitempty"`

	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	CanceledAt  *time.Time `json:"canceled_at,omitempty"`

	// Active: the runner still has work on the campaign (running, paused, or canceled
	// with calls under way). Only active campaigns are read by the runner.
	Active bool `json:"active,omitempty"`
	// LeaseOwner and LeaseUntil name the runner that dials for the campaign until then:
	// one runner at a time keeps the concurrency cap across many.
	LeaseOwner string     `json:"lease_owner,omitempty"`
	LeaseUntil *time.Time `json:"lease_until,omitempty"`

	Revision int64 `json:"revision"`
}

// Attempt is one call to a recipient.
type Attempt struct {
	// CallID is the call's id, chosen at the claim, before the dial.
	CallID    string     `json:"call_id"`
	ClaimedAt time.Time  `json:"claimed_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// Outcome is empty while the call is under way.
	Outcome   string `json:"outcome,omitempty"`
	EndReason string `json:"end_reason,omitempty"`
	// Error is why a dial was refused (the API error's message); the call was not placed.
	Error string `json:"error,omitempty"`
	// DurationMS is the call's length from answer to end; VoicemailLeft, the voicemail
	// message played to its end. Both are set when the attempt is settled from its call
	// record (absent on attempts settled before they existed).
	DurationMS    int64 `json:"duration_ms,omitempty"`
	VoicemailLeft bool  `json:"voicemail_left,omitempty"`
}

// Recipient is one number of a campaign's list.
type Recipient struct {
	ID             string `json:"id"`
	CampaignID     string `json:"campaign_id"`
	AccountID      string `json:"account_id"`
	PlatformHandle string `json:"platform_handle"`
	// TimeZone (IANA) is where the recipient is: the window's days and hours are its
	// local ones ("" for the window's own time zone).
	TimeZone  string            `json:"time_zone,omitempty"`
	Variables map[string]string `json:"variables,omitempty"`
	Metadata  metadata.Metadata `json:"metadata,omitempty"`
	Status    string            `json:"status"`
	Attempts  []Attempt         `json:"attempts,omitempty"`
	// NextAttemptAt is when a pending recipient may be called (nil: at once).
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
	Revision      int64      `json:"revision"`
}

// RecipientID is the id of recipient number n (from 0) of a sequenced campaign: the
// campaign's creation time, bits of its id and n (ident.Numbered), so ids sort in list
// order.
func RecipientID(campaignID string, n int) string {
	t, _ := ident.Time(IDPrefix, campaignID)
	return ident.Numbered(RecipientIDPrefix, t, campaignID, uint32(n))
}

// listEnd is the id every recipient of the list sorts before ("" for a campaign whose
// ids are not sequenced, all of whose stored recipients are its list).
func (c Campaign) listEnd() string {
	if !c.Sequenced {
		return ""
	}
	return RecipientID(c.ID, c.Recipients)
}

// Placed counts the attempts that count against retry.max_attempts: every one but
// not_placed (a dial the platform refused counts, so a recipient it always refuses ends).
func (r Recipient) Placed() int {
	n := 0
	for _, a := range r.Attempts {
		if a.Outcome != OutcomeNotPlaced {
			n++
		}
	}
	return n
}

// Current is the attempt under way (calling), or nil.
func (r *Recipient) Current() *Attempt {
	if r.Status != RecipientCalling || len(r.Attempts) == 0 {
		return nil
	}
	return &r.Attempts[len(r.Attempts)-1]
}

// Final reports whether the recipient needs nothing more.
func (r Recipient) Final() bool { return r.Status != RecipientPending && r.Status != RecipientCalling }

// ListQuery filters a list of campaigns.
type ListQuery struct {
	listing.Query
	Status string
}

// RecipientQuery pages a campaign's recipients in list order (ascending ids): Status
// filters ("" all), After is the cursor (the last id of the previous page); Before (not
// with After) asks for the recipients just before it, still in list order. End ("" for
// none) leaves out ids from it on: an upload's recipients not yet taken in.
type RecipientQuery struct {
	Status string
	After  string
	Before string
	End    string
	Limit  int
}

// Store keeps campaigns and their recipients.
//
// CreateCampaign inserts c and its recipients (apierr.ErrConflict on an existing id);
// the campaign is readable only once every recipient is written. UpdateCampaign writes c
// if its stored revision is still c.Revision (apierr.ErrConflict if not), with evts in
// the event outbox in the same write; the stored revision becomes c.Revision+1.
// ListCampaigns returns up to Limit+1 campaigns newest first. ListRecipients returns up
// to Limit+1 recipients in list order: the first ones after After, or with Before the
// ones nearest before it (the one too many is then the first). ActiveCampaigns returns
// up to limit campaigns with Active set, by id. UpdateRecipient writes r if its stored
// revision is still r.Revision; ClaimRecipient does too, and only while the campaign's
// status is running (apierr.ErrConflict otherwise): the claim of an attempt.
// RecipientCounts counts a campaign's recipients per status (ids before end; "" all).
// PutRecipients writes recipients whatever is stored under their ids (an upload's, past
// the list's end); DropRecipients deletes the campaign's recipients from id from on
// (what failed uploads left past the end).
type Store interface {
	CreateCampaign(ctx context.Context, c Campaign, rs []Recipient) error
	GetCampaign(ctx context.Context, id string) (Campaign, error)
	ListCampaigns(ctx context.Context, accountID string, q ListQuery) ([]Campaign, error)
	UpdateCampaign(ctx context.Context, c Campaign, evts []callevent.Event) error
	ActiveCampaigns(ctx context.Context, afterID string, limit int) ([]Campaign, error)
	GetRecipient(ctx context.Context, campaignID, id string) (Recipient, error)
	ListRecipients(ctx context.Context, campaignID string, q RecipientQuery) ([]Recipient, error)
	UpdateRecipient(ctx context.Context, r Recipient) error
	ClaimRecipient(ctx context.Context, r Recipient) error
	RecipientCounts(ctx context.Context, campaignID, end string) (map[string]int, error)
	PutRecipients(ctx context.Context, rs []Recipient) error
	DropRecipients(ctx context.Context, campaignID, from string) error
}

// RecipientInput is one recipient of a create.
type RecipientInput struct {
	PlatformHandle string
	TimeZone       string
	Variables      map[string]string
	Metadata       map[string]string
}

// CreateInput is POST /v1/campaigns.
type CreateInput struct {
	Name        string
	AssistantID string
	VersionID   string
	LineID      string
	Recipients  []RecipientInput
	Settings    Settings
	// ConcurrencyGiven: Settings.MaxConcurrentCalls was given (else the default).
	ConcurrencyGiven bool
	// CPSGiven, RetryGiven: calls_per_second and retry were given.
	CPSGiven, RetryGiven bool
	// AMDGiven: Settings.AMD was given (else it is on, with no voicemail message).
	AMDGiven bool
	Metadata map[string]string
}

// validate checks what needs no store, and fills the defaults (not the concurrency's,
// which depends on the account's limit).
func (in *CreateInput) validate() error {
	if utf8.RuneCountInString(in.Name) > MaxNameLength || strings.ContainsAny(in.Name, "\x00\r\n") {
		return apierr.Invalid("name", fmt.Sprintf("name must be at most %d characters on one line", MaxNameLength))
	}
	if in.AssistantID == "" {
		return apierr.Missing("assistant_id")
	}
	if err := metadata.Validate(in.Metadata); err != nil {
		return err
	}
	if len(in.Recipients) > MaxRecipients {
		return apierr.Invalid("recipients", fmt.Sprintf("recipients may list at most %d recipients; upload longer lists (POST /v1/campaigns/{id}/recipients)", MaxRecipients))
	}
	if err := validateRecipients(in.Recipients, func(i int) string { return fmt.Sprintf("recipients[%d]", i) }); err != nil {
		return err
	}
	s := &in.Settings
	if !in.CPSGiven {
		s.CallsPerSecond = DefaultCPS
	}
	if !(s.CallsPerSecond > 0 && s.CallsPerSecond <= MaxCallsPerSecond) {
		return apierr.Invalid("settings.calls_per_second", fmt.Sprintf("calls_per_second must be above 0 and at most %g", MaxCallsPerSecond))
	}
	if !in.RetryGiven {
		s.Retry = Retry{MaxAttempts: DefaultMaxAttempts, DelaySeconds: int(DefaultRetryDelay / time.Second), On: slices.Clone(DefaultRetryOn)}
	}
	if s.Retry.MaxAttempts < 1 || s.Retry.MaxAttempts > MaxAttempts {
		return apierr.Invalid("settings.retry.max_attempts", fmt.Sprintf("max_attempts must be 1 to %d (calls placed per recipient, the first included)", MaxAttempts))
	}
	if s.Retry.DelaySeconds < 0 || time.Duration(s.Retry.DelaySeconds)*time.Second > MaxRetryDelay {
		return apierr.Invalid("settings.retry.delay_seconds", fmt.Sprintf("delay_seconds must be 0 to %d", int(MaxRetryDelay/time.Second)))
	}
	if s.Retry.On == nil {
		s.Retry.On = []string{}
	}
	for _, o := range s.Retry.On {
		if !slices.Contains(RetryOutcomes, o) {
			return apierr.Invalid("settings.retry.on", "retry.on may name busy, no_answer, failed and voicemail")
		}
	}
	slices.Sort(s.Retry.On)
	s.Retry.On = slices.Compact(s.Retry.On)
	if s.Window != nil {
		if err := s.Window.validate(); err != nil {
			return err
		}
	}
	if !in.AMDGiven {
		s.AMD = session.AMD{Enabled: true}
	}
	if err := s.AMD.Validate("settings.amd"); err != nil {
		return err
	}
	if in.ConcurrencyGiven && s.MaxConcurrentCalls < 1 {
		return apierr.Invalid("settings.max_concurrent_calls", "max_concurrent_calls must be at least 1")
	}
	return nil
}

// validateRecipients checks recipients' fields; where names recipient i in an error's
// param ("recipients[3]", "line 5").
func validateRecipients(rs []RecipientInput, where func(i int) string) error {
	for i, r := range rs {
		p := where(i)
		h := r.PlatformHandle
		if strings.TrimSpace(h) == "" {
			return apierr.Missing(p + ".platform_handle")
		}
		if len(h) > 255 || !utf8.ValidString(h) || strings.ContainsAny(h, "\x00\r\n") {
			return apierr.Invalid(p+".platform_handle", "platform_handle must be at most 255 characters on one line")
		}
		if r.TimeZone != "" && !validZone(r.TimeZone) {
			return apierr.Invalid(p+".time_zone", "time_zone must be an IANA time zone such as Europe/Berlin or America/New_York")
		}
		if err := variables.CheckValues(p+".variables", r.Variables); err != nil {
			return err
		}
		if err := metadata.Validate(r.Metadata); err != nil {
			if e, ok := apierr.As(err); ok {
				return apierr.Param(e.Code, p+"."+e.Param, e.Message)
			}
			return err
		}
	}
	return nil
}

// validate checks and normalizes a window.
func (w *Window) validate() error {
	if w.TimeZone == "" {
		w.TimeZone = "UTC"
	}
	if !validZone(w.TimeZone) {
		return apierr.Invalid("settings.window.time_zone", "time_zone must be an IANA time zone such as Europe/Berlin or America/New_York")
	}
	if len(w.Days) == 0 {
		w.Days = slices.Clone(Days)
	}
	for i, d := range w.Days {
		d = strings.ToLower(d)
		if !slices.Contains(Days, d) {
			return apierr.Invalid("settings.window.days", "days may name sun, mon, tue, wed, thu, fri and sat")
		}
		w.Days[i] = d
	}
	slices.SortFunc(w.Days, func(a, b string) int { return slices.Index(Days, a) - slices.Index(Days, b) })
	w.Days = slices.Compact(w.Days)
	if w.Start == "" {
		w.Start = "00:00"
	}
	if w.End == "" {
		w.End = "24:00"
	}
	start, ok1 := minuteOfDay(w.Start)
	end, ok2 := minuteOfDay(w.End)
	if !ok1 {
		return apierr.Invalid("settings.window.start", "start must be HH:MM (00:00 to 23:59)")
	}
	if !ok2 {
		return apierr.Invalid("settings.window.end", "end must be HH:MM (00:01 to 24:00)")
	}
	if end <= start {
		return apierr.Invalid("settings.window.end", "end must be after start on the same day")
	}
	return nil
}

// minuteOfDay parses "HH:MM" (00:00 to 24:00).
func minuteOfDay(s string) (int, bool) {
	var h, m int
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	if _, err := fmt.Sscanf(s, "%02d:%02d", &h, &m); err != nil || h < 0 || m < 0 || m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, false
	}
	return h*60 + m, true
}

// validZone reports an IANA time zone name this machine knows.
func validZone(name string) bool {
	_, err := time.LoadLocation(name)
	return err == nil && len(name) <= 64 && name != "Local"
}

// Open reports whether calls may start at t, in the window's time zone.
func (w *Window) Open(t time.Time) bool { return w.OpenIn(t, "") }

// OpenIn reports whether calls may start at t for a recipient in time zone zone ("":
// the window's own).
func (w *Window) OpenIn(t time.Time, zone string) bool {
	if w == nil {
		return true
	}
	if zone == "" {
		zone = w.TimeZone
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return false
	}
	lt := t.In(loc)
	if !slices.Contains(w.Days, Days[lt.Weekday()]) {
		return false
	}
	start, _ := minuteOfDay(w.Start)
	end, _ := minuteOfDay(w.End)
	m := lt.Hour()*60 + lt.Minute()
	return m >= start && m < end
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
