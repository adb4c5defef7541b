package callevent

import (
	"encoding/json"
	"time"
)

// TimeLayout is how every timestamp of the API and its events is written: RFC 3339, in
// UTC, with exactly three fraction digits ("2026-11-22T07:00:00.120Z"), so receivers
// parse them all with one layout (FormatTime writes it).
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime writes t as TimeLayout in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// millis is a time written with TimeLayout.
type millis time.Time

func (t millis) MarshalJSON() ([]byte, error) {
	return []byte(`"` + FormatTime(time.Time(t)) + `"`), nil
}

func ms(t time.Time) millis { return millis(t) }

func msPtr(t *time.Time) *millis {
	if t == nil {
		return nil
	}
	m := millis(*t)
	return &m
}

// The MarshalJSON methods below list every field in declaration order, so the JSON
// reads like the type; a field added to a type must be added to its method too (the
// golden payloads in testdata catch a missing one).

// MarshalJSON writes the envelope with its timestamp in the API's format.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt millis          `json:"created_at"`
		Data      json.RawMessage `json:"data"`
	}{e.ID, e.Type, ms(e.CreatedAt), e.Data})
}

// MarshalJSON writes the data with its timestamps in the API's format.
func (c CallEnded) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		CallID          string             `json:"call_id"`
		SessionID       string             `json:"session_id,omitempty"`
		LineID          string             `json:"line_id,omitempty"`
		Direction       string             `json:"direction"`
		From            string             `json:"from"`
		To              string             `json:"to"`
		Media           string             `json:"media"`
		HandledBy       string             `json:"handled_by"`
		StartedAt       millis             `json:"started_at"`
		AnsweredAt      *millis            `json:"answered_at"`
		EndedAt         millis             `json:"ended_at"`
		DurationMS      int64              `json:"duration_ms"`
		EndReason       string             `json:"end_reason"`
		EndedBy         string             `json:"ended_by"`
		Decision        string             `json:"decision,omitempty"`
		DecisionSource  string             `json:"decision_source,omitempty"`
		Metadata        map[string]string  `json:"metadata"`
		SessionMetadata *map[string]string `json:"session_metadata,omitempty"`
		CampaignID      string             `json:"campaign_id,omitempty"`
		RecipientID     string             `json:"recipient_id,omitempty"`
		AMD             *amdJSON           `json:"amd,omitempty"`
	}{c.CallID, c.SessionID, c.LineID, c.Direction, c.From, c.To, c.Media, c.HandledBy, ms(c.StartedAt),
		msPtr(c.AnsweredAt), ms(c.EndedAt), c.DurationMS, c.EndReason, c.EndedBy, c.Decision, c.DecisionSource,
		orEmpty(c.Metadata), sessionMetadata(c.SessionID, c.SessionMetadata), c.CampaignID, c.RecipientID, amdOf(c.AMD)})
}

type amdJSON struct {
	Result      string `json:"result"`
	DecidedAt   millis `json:"decided_at"`
	DecisionMS  int64  `json:"decision_ms"`
	MessageLeft bool   `json:"message_left"`
}

func amdOf(a *AMD) *amdJSON {
	if a == nil {
		return nil
	}
	return &amdJSON{a.Result, ms(a.DecidedAt), a.DecisionMS, a.MessageLeft}
}

// MarshalJSON writes the data with its timestamps in the API's format.
func (c CampaignCompleted) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		CampaignID  string            `json:"campaign_id"`
		Name        string            `json:"name"`
		AssistantID string            `json:"assistant_id"`
		VersionID   string            `json:"version_id"`
		LineID      string            `json:"line_id"`
		Recipients  int               `json:"recipients"`
		Counts      map[string]int    `json:"counts"`
		StartedAt   millis            `json:"started_at"`
		CompletedAt millis            `json:"completed_at"`
		Metadata    map[string]string `json:"metadata"`
	}{c.CampaignID, c.Name, c.AssistantID, c.VersionID, c.LineID, c.Recipients, c.Counts, ms(c.StartedAt), ms(c.CompletedAt),
		orEmpty(c.Metadata)})
}

// MarshalJSON writes the data with its timestamps in the API's format.
func (c CallAnswered) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		CallID         string            `json:"call_id"`
		SessionID      string            `json:"session_id,omitempty"`
		LineID         string            `json:"line_id,omitempty"`
		Direction      string            `json:"direction"`
		HandledBy      string            `json:"handled_by"`
		AnsweredAt     millis            `json:"answered_at"`
		Decision       string            `json:"decision,omitempty"`
		DecisionSource string            `json:"decision_source,omitempty"`
		Metadata       map[string]string `json:"metadata"`
	}{c.CallID, c.SessionID, c.LineID, c.Direction, c.HandledBy, ms(c.AnsweredAt), c.Decision, c.DecisionSource,
		orEmpty(c.Metadata)})
}

// MarshalJSON writes the data with its timestamps in the API's format.
func (c CallIncoming) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		CallID       string            `json:"call_id"`
		LineID       string            `json:"line_id"`
		From         string            `json:"from"`
		To           string            `json:"to"`
		Media        string            `json:"media"`
		AnswerBy     millis            `json:"answer_by"`
		Session      Session           `json:"session"`
		Metadata     map[string]string `json:"metadata"`
		LineMetadata map[string]string `json:"line_metadata"`
	}{c.CallID, c.LineID, c.From, c.To, c.Media, ms(c.AnswerBy), c.Session, orEmpty(c.Metadata), orEmpty(c.LineMetadata)})
}

// MarshalJSON writes the data with its metadata as an object ({} for none).
func (c CallTranscript) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		CallID      string            `json:"call_id"`
		SessionID   string            `json:"session_id,omitempty"`
		LineID      string            `json:"line_id,omitempty"`
		Direction   string            `json:"direction"`
		Sequence    int               `json:"sequence"`
		Speaker     string            `json:"speaker"`
		Text        string            `json:"text"`
		StartMS     int64             `json:"start_ms"`
		EndMS       int64             `json:"end_ms"`
		Interrupted bool              `json:"interrupted"`
		Backchannel bool              `json:"backchannel,omitempty"`
		Metadata    map[string]string `json:"metadata"`
	}{c.CallID, c.SessionID, c.LineID, c.Direction, c.Sequence, c.Speaker, c.Text, c.StartMS, c.EndMS, c.Interrupted,
		c.Backchannel, orEmpty(c.Metadata)})
}

// MarshalJSON writes the payload with its expiry in the API's format.
func (s Session) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		SessionID           string `json:"session_id"`
		CallID              string `json:"call_id"`
		RTCURL              string `json:"rtc_url"`
		ParticipantToken    string `json:"participant_token"`
		ParticipantIdentity string `json:"participant_identity,omitempty"`
		ExpiresAt           millis `json:"expires_at"`
	}{s.SessionID, s.CallID, s.RTCURL, s.ParticipantToken, s.ParticipantIdentity, ms(s.ExpiresAt)})
}

// orEmpty writes no metadata as {}, never null: receivers index it without a check.
func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// sessionMetadata is call.ended's session_metadata: {} for a session without any, and
// absent (nil, omitted) for a call that never had a session. A pointer, as omitempty
// would drop an empty map too.
func sessionMetadata(sessionID string, m map[string]string) *map[string]string {
	if sessionID == "" {
		return nil
	}
	m = orEmpty(m)
	return &m
}

// MarshalJSON writes the data with its metadata as an object ({} for none) and every
// part of the result present (null when absent).
func (c CallAnalyzed) MarshalJSON() ([]byte, error) {
	data := c.StructuredData
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return json.Marshal(struct {
		CallID         string            `json:"call_id"`
		SessionID      string            `json:"session_id,omitempty"`
		LineID         string            `json:"line_id,omitempty"`
		Direction      string            `json:"direction"`
		AssistantID    string            `json:"assistant_id"`
		VersionID      string            `json:"version_id"`
		Status         string            `json:"status"`
		Summary        *string           `json:"summary"`
		StructuredData json.RawMessage   `json:"structured_data"`
		Success        *bool             `json:"success"`
		Error          *string           `json:"error"`
		Metadata       map[string]string `json:"metadata"`
	}{c.CallID, c.SessionID, c.LineID, c.Direction, c.AssistantID, c.VersionID, c.Status, c.Summary, data, c.Success,
		c.Error, orEmpty(c.Metadata)})
}

// MarshalJSON writes the data with its metadata as an object ({} for none).
func (r RecordingReady) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		CallID     string            `json:"call_id"`
		SessionID  string            `json:"session_id,omitempty"`
		LineID     string            `json:"line_id,omitempty"`
		Direction  string            `json:"direction"`
		DurationMS int64             `json:"duration_ms"`
		SizeBytes  int64             `json:"size_bytes"`
		Format     string            `json:"format"`
		Metadata   map[string]string `json:"metadata"`
	}{r.CallID, r.SessionID, r.LineID, r.Direction, r.DurationMS, r.SizeBytes, r.Format, orEmpty(r.Metadata)})
}
