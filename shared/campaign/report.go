package campaign

import (
	"context"
	"slices"
	"time"
)

// Report is what a campaign's calls came to so far, from its recipients' attempts.
type Report struct {
	Campaign Campaign
	// Statuses counts recipients per status (every status present).
	Statuses map[string]int
	// Outcomes counts attempts per outcome (every outcome present), plus InProgress:
	// attempts whose call is under way.
	Outcomes   map[string]int
	InProgress int
	// Calls counts the calls placed: every attempt but those never placed (not_placed,
	// or a dial refused before it reached the platform), those under way included.
	Calls int
	// Answered is the calls a person (or a call screen) answered; ConnectRate is
	// Answered over the placed calls that ended (nil before any ended).
	Answered    int
	ConnectRate *float64
	// AverageDurationMS is the mean length of the answered calls (nil: none yet).
	AverageDurationMS *int64
	// VoicemailsLeft counts voicemail messages played to their end.
	VoicemailsLeft int
	// DurationMS is every call's length summed, voicemail boxes included: the
	// campaign's usage.
	DurationMS int64
	// Hours are the calls placed per hour (UTC) of their dial, oldest first.
	Hours []HourReport
	// Recipients are the campaign's recipients in list order (the CSV's rows).
	Recipients []Recipient
}

// HourReport is the calls dialled in one hour and what each came to.
type HourReport struct {
	Hour       time.Time
	Calls      int
	Outcomes   map[string]int
	InProgress int
}

// ReportOutcomes are the outcomes a report counts, in the order it lists them.
var ReportOutcomes = []string{OutcomeAnswered, OutcomeVoicemail, OutcomeBusy, OutcomeNoAnswer, OutcomeFailed, OutcomeNotPlaced}

// Placed reports whether the attempt's call was placed (or is being): not when it was
// not_placed, or refused before it reached the platform.
func (a Attempt) Placed() bool { return a.Outcome != OutcomeNotPlaced && a.Error == "" }

// Report reads the account's campaign id and all its recipients, and reports on them.
func (s *Service) Report(ctx context.Context, accountID, id string) (Report, error) {
	c, err := s.Get(ctx, accountID, id)
	if err != nil {
		return Report{}, err
	}
	var rs []Recipient
	// Pages of 1,000 (under a DynamoDB page's 1 MB): a list of 100,000 in 100 reads.
	err = s.eachRecipient(ctx, c, "", 1000, func(r Recipient) (bool, error) {
		rs = append(rs, r)
		return true, nil
	})
	if err != nil {
		return Report{}, err
	}
	return BuildReport(c, rs), nil
}

// BuildReport reports on campaign c from its recipients rs.
func BuildReport(c Campaign, rs []Recipient) Report {
	r := Report{Campaign: c, Statuses: zeroCounts(RecipientStatuses), Outcomes: zeroCounts(ReportOutcomes), Recipients: rs}
	hours := map[time.Time]*HourReport{}
	var ended, answeredMS int64
	for _, rc := range rs {
		r.Statuses[rc.Status]++
		for _, a := range rc.Attempts {
			if a.Outcome == "" {
				r.InProgress++
			} else {
				r.Outcomes[a.Outcome]++
			}
			if !a.Placed() {
				continue
			}
			r.Calls++
			hr := a.ClaimedAt.UTC().Truncate(time.Hour)
			h := hours[hr]
			if h == nil {
				h = &HourReport{Hour: hr, Outcomes: zeroCounts(ReportOutcomes)}
				hours[hr] = h
			}
			h.Calls++
			if a.Outcome == "" {
				h.InProgress++
				continue
			}
			h.Outcomes[a.Outcome]++
			ended++
			r.DurationMS += a.DurationMS
			if a.VoicemailLeft {
				r.VoicemailsLeft++
			}
			if a.Outcome == OutcomeAnswered {
				r.Answered++
				answeredMS += a.DurationMS
			}
		}
	}
	if ended > 0 {
		rate := float64(r.Answered) / float64(ended)
		r.ConnectRate = &rate
	}
	if r.Answered > 0 {
		avg := answeredMS / int64(r.Answered)
		r.AverageDurationMS = &avg
	}
	for _, h := range hours {
		r.Hours = append(r.Hours, *h)
	}
	slices.SortFunc(r.Hours, func(a, b HourReport) int { return a.Hour.Compare(b.Hour) })
	return r
}

// zeroCounts is a count of 0 for each key, so that every key is present.
func zeroCounts(keys []string) map[string]int {
	out := make(map[string]int, len(keys))
	for _, k := range keys {
		out[k] = 0
	}
	return out
}
