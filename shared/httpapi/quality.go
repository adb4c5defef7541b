package httpapi

import (
	"context"
	"math"
	"net/http"

	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/quality"
)

// VersionLister pages through an assistant's versions (assistant.Service.ListVersions).
type VersionLister interface {
	ListVersions(ctx context.Context, accountID, id string, q listing.Query) ([]assistant.Version, error)
}

// Quality serves GET /v1/assistants/{id}/quality: how each published version's calls
// took turns, from the aggregate kept as their final reports come (shared/quality).
type Quality struct {
	Versions VersionLister
	Store    quality.Store
}

// Routes is the quality route.
func (h *Quality) Routes() []Route {
	return []Route{{Function: "assistants-quality", Method: http.MethodGet, Pattern: "/v1/assistants/{id}/quality", Keys: TestKeys(), Handler: h.list}}
}

// VersionQualityJSON is one version's turn-taking over its calls.
type VersionQualityJSON struct {
	Object      string `json:"object"`
	VersionID   string `json:"version_id"`
	Number      int    `json:"number"`
	PublishedAt Time   `json:"published_at"`
	// Calls, Turns ... AssistantSpeechMS are the counted calls' metrics summed.
	Calls              int64 `json:"calls"`
	Turns              int64 `json:"turns"`
	Replies            int64 `json:"replies"`
	BargeIns           int64 `json:"barge_ins"`
	FalseInterruptions int64 `json:"false_interruptions"`
	Backchannels       int64 `json:"backchannels"`
	MidSentenceWaits   int64 `json:"mid_sentence_waits"`
	MidSentenceCuts    int64 `json:"mid_sentence_cuts"`
	CallerSpeechMS     int64 `json:"caller_speech_ms"`
	AssistantSpeechMS  int64 `json:"assistant_speech_ms"`
	// ResponseMS is over every reply of every counted call (quality.Counts.
	// ResponsePercentiles); null without replies.
	ResponseMS *persona.Percentiles `json:"response_ms"`
	// CallerSpeechShare and AssistantSpeechShare are each side's share of the time
	// either spoke, to three decimals; null when neither did.
	CallerSpeechShare    *float64 `json:"caller_speech_share"`
	AssistantSpeechShare *float64 `json:"assistant_speech_share"`
}

// PresentVersionQuality is v's aggregate as the API shows it.
func PresentVersionQuality(v assistant.Version, c quality.Counts) VersionQualityJSON {
	out := VersionQualityJSON{Object: "version_quality", VersionID: v.ID, Number: v.Number, PublishedAt: Time(v.PublishedAt),
		Calls: c.Calls, Turns: c.Turns, Replies: c.Replies(), BargeIns: c.BargeIns, FalseInterruptions: c.FalseInterruptions,
		Backchannels: c.Backchannels, MidSentenceWaits: c.MidSentenceWaits, MidSentenceCuts: c.MidSentenceCuts,
		CallerSpeechMS: c.CallerSpeechMS, AssistantSpeechMS: c.AssistantSpeechMS, ResponseMS: c.ResponsePercentiles()}
	if spoke := c.CallerSpeechMS + c.AssistantSpeechMS; spoke > 0 {
		caller := math.Round(1000*float64(c.CallerSpeechMS)/float64(spoke)) / 1000
		asst := math.Round(1000*(1-caller)) / 1000
		out.CallerSpeechShare, out.AssistantSpeechShare = &caller, &asst
	}
	return out
}

func (h *Quality) list(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := ListQuery(r, "ver")
	if err != nil {
		return 0, nil, err
	}
	acct := AccountFrom(r.Context()).ID
	versions, err := h.Versions.ListVersions(r.Context(), acct, r.PathValue("id"), q)
	if err != nil {
		return 0, nil, err
	}
	page, _ := listing.PageOf(versions, q)
	ids := make([]string, len(page))
	for i, v := range page {
		ids[i] = v.ID
	}
	aggs, err := h.Store.VersionQuality(r.Context(), acct, ids)
	if err != nil {
		return 0, nil, err
	}
	byID := make(map[string]quality.Counts, len(aggs))
	for _, a := range aggs {
		byID[a.VersionID] = a.Counts
	}
	return http.StatusOK, NewList(versions, q, func(v assistant.Version) VersionQualityJSON {
		return PresentVersionQuality(v, byID[v.ID])
	}), nil
}
