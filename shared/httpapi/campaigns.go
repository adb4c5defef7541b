package httpapi

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/campaign"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/session"
)

// Campaigns serves /v1/campaigns.
type Campaigns struct {
	Service *campaign.Service
	// Woken is told when a campaign starts or resumes (the local runner's Wake); nil:
	// nobody.
	Woken func()
}

// campaignMaxBody fits 1,000 recipients with their variables and metadata;
// campaignUploadMaxBody, an upload of 100,000 numbers with a few variables each (under
// a Lambda request's 6 MB).
const (
	campaignMaxBody       = 4 << 20
	campaignUploadMaxBody = 5 << 20
)

// Routes are the campaign routes, one Lambda function each. Reads take test keys; the
// writes take a test key only for a campaign on a line that reaches no real network (a
// sim line), as POST /v1/sessions does.
func (h *Campaigns) Routes() []Route {
	return []Route{
		{Function: "campaigns-create", Method: http.MethodPost, Pattern: "/v1/campaigns", Keys: LiveForRealResource(), Handler: h.create, MaxBody: campaignMaxBody},
		{Function: "campaigns-list", Method: http.MethodGet, Pattern: "/v1/campaigns", Keys: TestKeys(), Handler: h.list},
		{Function: "campaigns-get", Method: http.MethodGet, Pattern: "/v1/campaigns/{id}", Keys: TestKeys(), Handler: h.get},
		{Function: "campaigns-recipients", Method: http.MethodGet, Pattern: "/v1/campaigns/{id}/recipients", Keys: TestKeys(), Handler: h.recipients},
		{Function: "campaigns-recipients-add", Method: http.MethodPost, Pattern: "/v1/campaigns/{id}/recipients", Keys: LiveForRealResource(),
			Handler: h.addRecipients, MaxBody: campaignUploadMaxBody, File: true},
		{Function: "campaigns-report", Method: http.MethodGet, Pattern: "/v1/campaigns/{id}/report", Keys: TestKeys(), Handler: h.report},
		{Function: "campaigns-start", Method: http.MethodPost, Pattern: "/v1/campaigns/{id}/start", Keys: LiveForRealResource(), Handler: h.step(h.Service.Start, true)},
		{Function: "campaigns-pause", Method: http.MethodPost, Pattern: "/v1/campaigns/{id}/pause", Keys: LiveForRealResource(), Handler: h.step(h.Service.Pause, false)},
		{Function: "campaigns-resume", Method: http.MethodPost, Pattern: "/v1/campaigns/{id}/resume", Keys: LiveForRealResource(), Handler: h.step(h.Service.Resume, true)},
		{Function: "campaigns-cancel", Method: http.MethodPost, Pattern: "/v1/campaigns/{id}/cancel", Keys: LiveForRealResource(), Handler: h.step(h.Service.Cancel, false)},
	}
}

// CampaignJSON is the campaign object.
type CampaignJSON struct {
	ID          string               `json:"id"`
	Object      string               `json:"object"`
	Name        string               `json:"name"`
	Status      string               `json:"status"`
	AssistantID string               `json:"assistant_id"`
	VersionID   *string              `json:"version_id"`
	LineID      string               `json:"line_id"`
	Settings    CampaignSettingsJSON `json:"settings"`
	Recipients  int                  `json:"recipients"`
	// Counts has every recipient status; only GET /v1/campaigns/{id} and the lifecycle
	// routes fill it (null in lists).
	Counts      map[string]int    `json:"counts"`
	Metadata    metadata.Metadata `json:"metadata"`
	CreatedAt   Time              `json:"created_at"`
	StartedAt   *Time             `json:"started_at"`
	CompletedAt *Time             `json:"completed_at"`
	CanceledAt  *Time             `json:"canceled_at"`
}

// CampaignSettingsJSON is a campaign's settings, every field present.
type CampaignSettingsJSON struct {
	Window             *campaign.Window `json:"window"`
	MaxConcurrentCalls int              `json:"max_concurrent_calls"`
	CallsPerSecond     float64          `json:"calls_per_second"`
	Retry              campaign.Retry   `json:"retry"`
	AMD                session.AMD      `json:"amd"`
}

// PresentCampaign maps a campaign to its object.
func PresentCampaign(c campaign.Campaign, counts map[string]int) CampaignJSON {
	return CampaignJSON{ID: c.ID, Object: "campaign", Name: c.Name, Status: c.Status, AssistantID: c.AssistantID,
		VersionID: StringOrNull(c.VersionID), LineID: c.LineID, Recipients: c.Recipients, Counts: counts,
		Settings: CampaignSettingsJSON{Window: c.Settings.Window, MaxConcurrentCalls: c.Settings.MaxConcurrentCalls,
			CallsPerSecond: c.Settings.CallsPerSecond, Retry: c.Settings.Retry, AMD: c.Settings.AMD},
		Metadata: c.Metadata.OrEmpty(), CreatedAt: Time(c.CreatedAt), StartedAt: TimePtr(c.StartedAt),
		CompletedAt: TimePtr(c.CompletedAt), CanceledAt: TimePtr(c.CanceledAt)}
}

// RecipientJSON is the campaign_recipient object.
type RecipientJSON struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	CampaignID     string            `json:"campaign_id"`
	PlatformHandle string            `json:"platform_handle"`
	TimeZone       *string           `json:"time_zone"`
	Status         string            `json:"status"`
	Attempts       []CallAttemptJSON `json:"attempts"`
	NextAttemptAt  *Time             `json:"next_attempt_at"`
	Variables      map[string]string `json:"variables"`
	Metadata       metadata.Metadata `json:"metadata"`
}

// CallAttemptJSON is one call to a recipient.
type CallAttemptJSON struct {
	CallID    *string `json:"call_id"`
	StartedAt Time    `json:"started_at"`
	EndedAt   *Time   `json:"ended_at"`
	Outcome   *string `json:"outcome"`
	EndReason *string `json:"end_reason"`
	Error     *string `json:"error"`
}

// PresentRecipient maps a recipient to its object. An attempt that was never placed
// (not_placed, or refused by the platform) shows no call id: there is no such call.
func PresentRecipient(r campaign.Recipient) RecipientJSON {
	out := RecipientJSON{ID: r.ID, Object: "campaign_recipient", CampaignID: r.CampaignID, PlatformHandle: r.PlatformHandle,
		TimeZone: StringOrNull(r.TimeZone), Status: r.Status, Attempts: make([]CallAttemptJSON, 0, len(r.Attempts)), NextAttemptAt: TimePtr(r.NextAttemptAt),
		Variables: r.Variables, Metadata: r.Metadata.OrEmpty()}
	if out.Variables == nil {
		out.Variables = map[string]string{}
	}
	for _, a := range r.Attempts {
		id := a.CallID
		if a.Outcome == campaign.OutcomeNotPlaced || a.Error != "" {
			id = ""
		}
		out.Attempts = append(out.Attempts, CallAttemptJSON{CallID: StringOrNull(id), StartedAt: Time(a.ClaimedAt),
			EndedAt: TimePtr(a.EndedAt), Outcome: StringOrNull(a.Outcome), EndReason: StringOrNull(a.EndReason), Error: StringOrNull(a.Error)})
	}
	return out
}

type recipientBody struct {
	PlatformHandle string            `json:"platform_handle"`
	TimeZone       string            `json:"time_zone"`
	Variables      map[string]string `json:"variables"`
	Metadata       metadataParam     `json:"metadata"`
}

type settingsBody struct {
	Window             Nullable[campaign.Window]  `json:"window"`
	MaxConcurrentCalls Nullable[int]              `json:"max_concurrent_calls"`
	CallsPerSecond     Nullable[float64]          `json:"calls_per_second"`
	Retry              Nullable[campaign.Retry]   `json:"retry"`
	AMD                Nullable[settingsAMDParam] `json:"amd"`
}

func (h *Campaigns) create(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	var body struct {
		Name        Nullable[string]          `json:"name"`
		AssistantID Nullable[string]          `json:"assistant_id"`
		VersionID   Nullable[string]          `json:"version_id"`
		LineID      Nullable[string]          `json:"line_id"`
		Recipients  Nullable[[]recipientBody] `json:"recipients"`
		Settings    Nullable[settingsBody]    `json:"settings"`
		Metadata    Nullable[metadataParam]   `json:"metadata"`
	}
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	for _, err := range []error{body.Name.NotNull("name"), body.AssistantID.NotNull("assistant_id"), body.VersionID.NotNull("version_id"),
		body.LineID.NotNull("line_id"), body.Recipients.NotNull("recipients"), body.Settings.NotNull("settings"), body.Metadata.NotNull("metadata")} {
		if err != nil {
			return 0, nil, err
		}
	}
	in := campaign.CreateInput{Name: body.Name.Value, AssistantID: body.AssistantID.Value, VersionID: body.VersionID.Value,
		LineID: body.LineID.Value, Metadata: metadata.Metadata(body.Metadata.Value)}
	if in.AssistantID != "" && !ident.Valid("asst", in.AssistantID) {
		return 0, nil, invalidID("assistant_id", "asst")
	}
	if in.VersionID != "" && !ident.Valid("ver", in.VersionID) {
		return 0, nil, invalidID("version_id", "ver")
	}
	if in.LineID != "" && !ident.Valid("line", in.LineID) {
		return 0, nil, invalidID("line_id", "line")
	}
	for _, rb := range body.Recipients.Value {
		in.Recipients = append(in.Recipients, campaign.RecipientInput{PlatformHandle: rb.PlatformHandle, TimeZone: rb.TimeZone,
			Variables: rb.Variables, Metadata: metadata.Metadata(rb.Metadata)})
	}
	st := body.Settings.Value
	for _, err := range []error{st.MaxConcurrentCalls.NotNull("settings.max_concurrent_calls"),
		st.CallsPerSecond.NotNull("settings.calls_per_second"), st.Retry.NotNull("settings.retry"), st.AMD.NotNull("settings.amd")} {
		if err != nil {
			return 0, nil, err
		}
	}
	in.Settings = campaign.Settings{Window: st.Window.Ptr(), MaxConcurrentCalls: st.MaxConcurrentCalls.Value,
		CallsPerSecond: st.CallsPerSecond.Value, Retry: st.Retry.Value}
	in.ConcurrencyGiven, in.CPSGiven, in.RetryGiven = st.MaxConcurrentCalls.Set, st.CallsPerSecond.Set, st.Retry.Set
	if st.AMD.Set {
		in.Settings.AMD, in.AMDGiven = st.AMD.Value.settings(), true
	}
	c, err := h.Service.Create(r.Context(), AccountFrom(r.Context()), in, func(kind platform.Kind, what string) error {
		return requireLiveKey(r, func() (liveResource, error) { return onKind(what, kind), nil })
	})
	if err != nil {
		return 0, nil, err
	}
	counts := map[string]int{}
	for _, s := range campaign.RecipientStatuses {
		counts[s] = 0
	}
	counts[campaign.RecipientPending] = c.Recipients
	return http.StatusCreated, PresentCampaign(c, counts), nil
}

func (h *Campaigns) list(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := ListQuery(r, campaign.IDPrefix, "status")
	if err != nil {
		return 0, nil, err
	}
	cq := campaign.ListQuery{Query: q}
	if cq.Status, err = EnumParam(r, "status", campaign.Statuses); err != nil {
		return 0, nil, err
	}
	list, err := h.Service.List(r.Context(), AccountFrom(r.Context()).ID, cq)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, NewList(list, q, func(c campaign.Campaign) CampaignJSON { return PresentCampaign(c, nil) }), nil
}

func (h *Campaigns) withCounts(ctx context.Context, c campaign.Campaign) (CampaignJSON, error) {
	counts, err := h.Service.Counts(ctx, c)
	if err != nil {
		return CampaignJSON{}, err
	}
	return PresentCampaign(c, counts), nil
}

func (h *Campaigns) get(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	c, err := h.Service.Get(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := h.withCounts(r.Context(), c)
	return http.StatusOK, out, err
}

func (h *Campaigns) recipients(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r, "limit", "starting_after", "ending_before", "status"); err != nil {
		return 0, nil, err
	}
	q := campaign.RecipientQuery{Limit: listing.DefaultLimit, After: r.URL.Query().Get("starting_after"),
		Before: r.URL.Query().Get("ending_before")}
	if q.After != "" && q.Before != "" {
		return 0, nil, apierr.Invalid("ending_before", "give starting_after or ending_before, not both")
	}
	if q.Before != "" && !ident.Valid(campaign.RecipientIDPrefix, q.Before) {
		return 0, nil, invalidID("ending_before", campaign.RecipientIDPrefix)
	}
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > listing.MaxLimit {
			return 0, nil, apierr.Invalid("limit", "limit must be an integer from 1 to 100")
		}
		q.Limit = n
	}
	if q.After != "" && !ident.Valid(campaign.RecipientIDPrefix, q.After) {
		return 0, nil, invalidID("starting_after", campaign.RecipientIDPrefix)
	}
	var err error
	if q.Status, err = EnumParam(r, "status", campaign.RecipientStatuses); err != nil {
		return 0, nil, err
	}
	list, err := h.Service.Recipients(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"), q)
	if err != nil {
		return 0, nil, err
	}
	page, more := listing.Page(list, q.Limit)
	if q.Before != "" && len(list) > q.Limit {
		page = list[len(list)-q.Limit:] // the one too many is the farthest from the cursor
	}
	out := ListJSON[RecipientJSON]{Object: "list", Data: make([]RecipientJSON, 0, len(page)), HasMore: more}
	for _, rc := range page {
		out.Data = append(out.Data, PresentRecipient(rc))
	}
	return http.StatusOK, out, nil
}

// CampaignReportJSON is the campaign_report object: what the campaign's calls came to.
type CampaignReportJSON struct {
	Object            string             `json:"object"`
	CampaignID        string             `json:"campaign_id"`
	Status            string             `json:"status"`
	Recipients        int                `json:"recipients"`
	Counts            map[string]int     `json:"counts"`
	Calls             int                `json:"calls"`
	InProgress        int                `json:"in_progress"`
	Outcomes          map[string]int     `json:"outcomes"`
	Answered          int                `json:"answered"`
	ConnectRate       *float64           `json:"connect_rate"`
	AverageDurationMS *int64             `json:"average_duration_ms"`
	VoicemailsLeft    int                `json:"voicemails_left"`
	DurationMS        int64              `json:"duration_ms"`
	Hours             []CampaignHourJSON `json:"hours"`
}

// CampaignHourJSON is the calls dialled in one hour (UTC) and what they came to.
type CampaignHourJSON struct {
	Hour       Time           `json:"hour"`
	Calls      int            `json:"calls"`
	InProgress int            `json:"in_progress"`
	Outcomes   map[string]int `json:"outcomes"`
}

// PresentReport maps a campaign's report to its object.
func PresentReport(r campaign.Report) CampaignReportJSON {
	out := CampaignReportJSON{Object: "campaign_report", CampaignID: r.Campaign.ID, Status: r.Campaign.Status,
		Recipients: len(r.Recipients), Counts: r.Statuses, Calls: r.Calls, InProgress: r.InProgress, Outcomes: r.Outcomes,
		Answered: r.Answered, ConnectRate: r.ConnectRate, AverageDurationMS: r.AverageDurationMS,
		VoicemailsLeft: r.VoicemailsLeft, DurationMS: r.DurationMS, Hours: make([]CampaignHourJSON, 0, len(r.Hours))}
	for _, h := range r.Hours {
		out.Hours = append(out.Hours, CampaignHourJSON{Hour: Time(h.Hour), Calls: h.Calls, InProgress: h.InProgress, Outcomes: h.Outcomes})
	}
	return out
}

// report answers the campaign's report: JSON, or with format=csv its per-recipient
// results as a CSV download.
func (h *Campaigns) report(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r, "format"); err != nil {
		return 0, nil, err
	}
	format, err := EnumParam(r, "format", []string{"json", "csv"})
	if err != nil {
		return 0, nil, err
	}
	rep, err := h.Service.Report(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	if format != "csv" {
		return http.StatusOK, PresentReport(rep), nil
	}
	var buf bytes.Buffer // whole before the status goes out, so a failure is still an error
	if err := writeResultsCSV(&buf, rep.Recipients); err != nil {
		return 0, nil, err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+rep.Campaign.ID+`-results.csv"`)
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
	return 0, nil, nil
}

// resultsCSVHeader names the columns of writeResultsCSV.
var resultsCSVHeader = []string{"recipient_id", "platform_handle", "status", "calls", "last_call_id", "last_outcome",
	"last_end_reason", "last_started_at", "last_ended_at", "duration_ms", "voicemail_left"}

// writeResultsCSV writes one row per recipient, in list order, after resultsCSVHeader:
// its status, the calls placed to it, its last attempt, its calls' length summed and
// whether a voicemail message was left. Only values Bridgeline chose go in (ids, E.164
// numbers, statuses, times, counts), never the customer's variables or metadata, so no
// cell can start a spreadsheet formula.
func writeResultsCSV(w io.Writer, rs []campaign.Recipient) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(resultsCSVHeader); err != nil {
		return err
	}
	for _, rc := range rs {
		var calls int
		var ms int64
		left := false
		for _, a := range rc.Attempts {
			if a.Placed() {
				calls++
			}
			ms += a.DurationMS
			left = left || a.VoicemailLeft
		}
		row := []string{rc.ID, rc.PlatformHandle, rc.Status, strconv.Itoa(calls), "", "", "", "", "",
			strconv.FormatInt(ms, 10), strconv.FormatBool(left)}
		if n := len(rc.Attempts); n > 0 {
			a := rc.Attempts[n-1]
			if a.Placed() {
				row[4] = a.CallID
			}
			row[5], row[6], row[7] = a.Outcome, a.EndReason, Time(a.ClaimedAt).String()
			if a.EndedAt != nil {
				row[8] = Time(*a.EndedAt).String()
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// addRecipients appends an uploaded file of recipients to a draft campaign.
func (h *Campaigns) addRecipients(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	accountID, id := AccountFrom(r.Context()).ID, r.PathValue("id")
	if err := h.keyRule(r, accountID, id); err != nil {
		return 0, nil, err
	}
	// Another account's campaign is 404 whatever the body holds.
	if _, err := h.Service.Get(r.Context(), accountID, id); err != nil {
		return 0, nil, err
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, nil, err
	}
	in, where, err := campaign.ParseRecipientFile(mt, body)
	if err != nil {
		return 0, nil, err
	}
	c, err := h.Service.AddRecipients(r.Context(), accountID, id, in, where)
	if err != nil {
		return 0, nil, err
	}
	out, err := h.withCounts(r.Context(), c)
	return http.StatusOK, out, err
}

// keyRule is the live-key rule on campaign id's line; an unknown campaign passes, for
// the route's own 404.
func (h *Campaigns) keyRule(r *http.Request, accountID, id string) error {
	return requireLiveKey(r, func() (liveResource, error) {
		c, err := h.Service.Get(r.Context(), accountID, id)
		if errors.Is(err, apierr.ErrNotFound) || apierr.Is(err, apierr.CodeResourceNotFound) {
			return notLive, nil
		}
		if err != nil {
			return notLive, err
		}
		return onPlatform("campaign "+c.ID+"'s line "+c.LineID, c.Platform), nil
	})
}

// step is a lifecycle route: the key rule on the campaign's line, then fn.
func (h *Campaigns) step(fn func(ctx context.Context, accountID, id string) (campaign.Campaign, error), wake bool) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if err := Query(r); err != nil {
			return 0, nil, err
		}
		accountID, id := AccountFrom(r.Context()).ID, r.PathValue("id")
		if err := h.keyRule(r, accountID, id); err != nil {
			return 0, nil, err
		}
		c, err := fn(r.Context(), accountID, id)
		if err != nil {
			return 0, nil, err
		}
		if wake && h.Woken != nil {
			h.Woken()
		}
		out, err := h.withCounts(r.Context(), c)
		return http.StatusOK, out, err
	}
}
