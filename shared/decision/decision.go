// Package decision runs the customer_decides flow of an inbound call: it posts
// call.incoming, signed, to the account's endpoints subscribed to it, with the line's
// decision timeout as the deadline, and records the first answer, whether it comes in a
// webhook response body ({"action": "accept"|"decline"|"assistant"}, the last with the
// call's variables) or through POST /v1/calls/{id}/answer. With no answer by the
// deadline the decision is "timeout".
//
// The first answer wins because the store records a decision only while none is recorded
// (a conditional write), so the webhook path and the API path, even in different
// processes, cannot both win. What happens to the call afterwards (bridging, rejecting,
// handing to the assistant) is the caller's.
package decision

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/variables"
)

// OnCall lays the decision on a call record that does not show one yet, and reports
// whether it did. The ringing flow (shared/session) records it on the call once it sees
// the answer; POST /v1/calls/{id}/answer shows it on the call before that.
func (r Record) OnCall(c *call.Call) bool {
	if c.Decision != "" {
		return false
	}
	c.Decision, c.DecisionSource = r.Decision, r.Source
	if r.Decision == Assistant {
		// The answer's own values; handing the call to the assistant resolves them
		// against the line's defaults and the version's names.
		c.Variables = r.Variables
	}
	return true
}

// Decisions, as the call record's `decision` shows them.
const (
	Accept  = callevent.ActionAccept
	Decline = callevent.ActionDecline
	// Assistant: the customer handed the call to the line's assistant.
	Assistant = callevent.ActionAssistant
	Timeout   = "timeout"
)

// Sources, as the call record's `decision_source` shows them.
const (
	SourceWebhook = "webhook_response"
	SourceAPI     = "api"
)

// Record is one inbound call's decision: pending (Decision "") while the call rings.
// Session is the payload returned to an API accept.
type Record struct {
	CallID    string            `json:"call_id"`
	AccountID string            `json:"account_id"`
	LineID    string            `json:"line_id"`
	EventID   string            `json:"event_id"`
	AnswerBy  time.Time         `json:"answer_by"`
	Session   callevent.Session `json:"session"`
	Decision  string            `json:"decision"`
	Source    string            `json:"source"`
	DecidedAt time.Time         `json:"decided_at"`
	CreatedAt time.Time         `json:"created_at"`

	// AssistantID is the line's assistant when the call rang ("" for none): an answer
	// with action assistant needs one.
	AssistantID string `json:"assistant_id,omitempty"`
	// Variables are an assistant answer's values for the assistant's placeholders.
	Variables map[string]string `json:"variables,omitempty"`
}

// Store keeps decisions.
//
// Errors: CreateDecision returns apierr.ErrConflict when the call has one; GetDecision
// returns apierr.ErrNotFound. Decide records decision, source and vars (an assistant
// answer's variables) only while the call's decision is "" and returns the record as it
// stands afterwards with won=true when this call recorded it; apierr.ErrNotFound when
// there is no record.
type Store interface {
	CreateDecision(ctx context.Context, r Record) error
	GetDecision(ctx context.Context, callID string) (Record, error)
	Decide(ctx context.Context, callID, decision, source string, vars map[string]string, at time.Time) (r Record, won bool, err error)
}

// EventLog is where call.incoming and its attempts are logged, so GET /v1/events shows
// them like every other event.
type EventLog interface {
	RecordEvent(ctx context.Context, evt callevent.Event) error
	RecordDeliveryAttempt(ctx context.Context, a delivery.Attempt) error
}

// Subscribers finds the endpoints call.incoming goes to: *webhookendpoint.Service.
type Subscribers interface {
	Subscribed(ctx context.Context, accountID, typ string) ([]delivery.Endpoint, error)
}

// Incoming is a ringing call on a customer_decides line.
type Incoming struct {
	AccountID string
	CallID    string
	LineID    string
	From      string
	To        string
	Media     string
	// Timeout is the line's decision_timeout_seconds.
	Timeout time.Duration
	// AnswerBy, when set, is the deadline itself (Timeout is then not used): the
	// ringing flow records it on the session before it asks, so the sweeper knows when
	// to apply the line's no-answer default even if the asking process stops.
	AnswerBy time.Time
	Session  callevent.Session
	// AssistantID is the line's assistant, "" for none: whether an assistant answer is
	// possible.
	AssistantID string
	// Metadata is the call's metadata and LineMetadata the line's, echoed in the event.
	Metadata     map[string]string
	LineMetadata map[string]string
}

// RedactedToken stands for the participant token in the logged copy of call.incoming.
const RedactedToken = "redacted"

// Asker posts call.incoming and waits for the decision. Its Deliverer's client should
// have no Timeout of its own: the line's decision timeout bounds each request.
type Asker struct {
	Store       Store
	Events      EventLog
	Subscribers Subscribers
	Deliverer   *delivery.Deliverer
	Logger      *slog.Logger
	// CheckVariables checks an assistant answer's variables against the call's line and
	// assistant (nil: not checked); an answer it refuses is not recorded.
	CheckVariables VariablesCheck
	Now            func() time.Time
}

// VariablesCheck checks the variables of an answer with action assistant for the call r
// rings: the session service renders the line's assistant with them over the line's
// defaults, and a text past its field limit is a 400 apierr (assistant.Version.Rendered).
type VariablesCheck func(ctx context.Context, r Record, values map[string]string) error

// Post posts call.incoming and waits for the POSTs only, each for at most wait and never
// past answer_by, then returns the record as it stands: decided when a response body
// answered (or an API answer came meanwhile), else pending (Decision ""), and nothing
// waits for the decision any longer. Whoever carries the decision out reads it from the
// Store later (session.Service's sweeper on a ringing session due). With no endpoint
// subscribed, the decision is Timeout at once. A wait of 0 or less waits until answer_by.
func (a *Asker) Post(ctx context.Context, in Incoming, wait time.Duration) (Record, error) {
	now := a.now()
	answerBy := in.AnswerBy
	if answerBy.IsZero() {
		answerBy = now.Add(in.Timeout)
	}
	r := Record{CallID: in.CallID, AccountID: in.AccountID, LineID: in.LineID, EventID: ident.New("evt"),
		AnswerBy: answerBy.UTC().Truncate(time.Millisecond), Session: in.Session, CreatedAt: now,
		AssistantID: in.AssistantID}
	incoming := callevent.CallIncoming{CallID: in.CallID, LineID: in.LineID, From: in.From, To: in.To,
		Media: in.Media, AnswerBy: r.AnswerBy, Session: in.Session, Metadata: in.Metadata, LineMetadata: in.LineMetadata}
	data, err := json.Marshal(incoming)
	if err != nil {
		return Record{}, err
	}
	evt := callevent.Event{ID: r.EventID, AccountID: in.AccountID, Type: callevent.TypeCallIncoming, CreatedAt: now, Data: data}
	// The event log keeps call.incoming without the participant token: anyone who can
	// read the account's events (GET /v1/events) could otherwise join the room while the
	// call rings. Only the delivered body carries it, and call.incoming is never
	// redelivered from the log.
	logged := evt
	incoming.Session.ParticipantToken = RedactedToken
	if logged.Data, err = json.Marshal(incoming); err != nil {
		return Record{}, err
	}
	if err := a.Store.CreateDecision(ctx, r); err != nil {
		return Record{}, fmt.Errorf("create decision for %s: %w", in.CallID, err)
	}
	if err := a.Events.RecordEvent(ctx, logged); err != nil {
		return Record{}, fmt.Errorf("log call.incoming for %s: %w", in.CallID, err)
	}
	eps, err := a.Subscribers.Subscribed(ctx, in.AccountID, callevent.TypeCallIncoming)
	if err != nil {
		return Record{}, err
	}
	if len(eps) == 0 {
		return a.decide(ctx, in.CallID, Timeout, "")
	}
	body, err := delivery.Body(evt)
	if err != nil {
		return Record{}, err
	}
	postBy := r.AnswerBy
	if wait > 0 && now.Add(wait).Before(postBy) {
		postBy = now.Add(wait)
	}
	askCtx, cancel := context.WithDeadline(ctx, postBy)
	defer cancel()
	var wg sync.WaitGroup
	for _, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.post(askCtx, r, ep, evt, body)
		}()
	}
	wg.Wait()
	got, err := a.Store.GetDecision(ctx, in.CallID)
	if err != nil {
		return Record{}, fmt.Errorf("read decision for %s: %w", in.CallID, err)
	}
	return got, nil
}

// post sends call.incoming to one endpoint, logs the attempt and records an answer found
// in the response body.
func (a *Asker) post(ctx context.Context, r Record, ep delivery.Endpoint, evt callevent.Event, body []byte) {
	callID := r.CallID
	att, _, respBody := a.Deliverer.Post(ctx, ep, evt.ID, body)
	att.EventID, att.AccountID, att.Number = evt.ID, evt.AccountID, 1
	if att.Outcome == delivery.OutcomeSucceeded {
		var ans callevent.Answer
		switch err := json.Unmarshal(respBody, &ans); {
		case len(respBody) == 0:
			// Acknowledged without an answer: the customer answers through the API.
		case err != nil || (ans.Action != Accept && ans.Action != Decline && ans.Action != Assistant):
			att.Error = `response body is not {"action": "accept"}, {"action": "decline"} or {"action": "assistant"}; waiting for an API answer`
		default:
			if err := checkAnswer(ctx, ans, r, a.CheckVariables); err != nil {
				att.Error = answerProblem(err) + "; waiting for an API answer"
				break
			}
			r, w, err := a.Store.Decide(context.WithoutCancel(ctx), callID, ans.Action, SourceWebhook, ans.Variables, a.now())
			if err != nil {
				a.logger().Error("record webhook answer", "event_id", evt.ID, "err", err)
			}
			if !w && err == nil && r.Decision != ans.Action {
				att.Error = fmt.Sprintf("answer %q came after the call was decided (%s)", ans.Action, r.Decision)
			}
		}
	}
	if att.Outcome == delivery.OutcomeGone {
		if err := a.Deliverer.Endpoints.Gone(context.WithoutCancel(ctx), ep.AccountID, ep.ID); err != nil {
			a.logger().Error("disable endpoint after 410", "endpoint_id", ep.ID, "err", err)
		}
	}
	if err := a.Events.RecordDeliveryAttempt(context.WithoutCancel(ctx), att); err != nil {
		a.logger().Error("log call.incoming attempt", "event_id", evt.ID, "err", err)
	}
}

// Get reads a call's decision record (apierr.ErrNotFound when it has none).
func (a *Asker) Get(ctx context.Context, callID string) (Record, error) {
	return a.Store.GetDecision(ctx, callID)
}

// Expire records Timeout on a call whose answer_by passed with no answer, unless an
// answer won first, and returns the record as it stands.
func (a *Asker) Expire(ctx context.Context, callID string) (Record, error) {
	return a.decide(ctx, callID, Timeout, "")
}

// decide records a decision and returns the record as it stands.
func (a *Asker) decide(ctx context.Context, callID, decision, source string) (Record, error) {
	r, _, err := a.Store.Decide(ctx, callID, decision, source, nil, a.now())
	if err != nil {
		return Record{}, fmt.Errorf("decide %s: %w", callID, err)
	}
	return r, nil
}

// checkAnswer checks an answer's action against the call and its variables: variables
// come only with action assistant, which needs the line to have had an assistant when
// the call rang. Errors are apierr 400s.
// check (nil: none) is the render check of VariablesCheck.
func checkAnswer(ctx context.Context, ans callevent.Answer, r Record, check VariablesCheck) error {
	if ans.Action != Assistant {
		if ans.Variables != nil {
			return apierr.Invalid("variables", "variables are only for action assistant")
		}
		return nil
	}
	if r.AssistantID == "" {
		return apierr.Invalid("action", "action assistant needs an assistant assigned to the call's line; assign one, or answer accept or decline")
	}
	if err := variables.CheckValues("variables", ans.Variables); err != nil || check == nil {
		return err
	}
	return check(ctx, r, ans.Variables)
}

// answerProblem is an answer error as the delivery attempt's log shows it.
func answerProblem(err error) string {
	if e, ok := apierr.As(err); ok {
		return e.Message
	}
	return err.Error()
}

// Answer is the API path: POST /v1/calls/{id}/answer. It returns the record after the
// answer; an answer that repeats the recorded one is accepted again (a retried request).
//
// Errors: apierr resource_not_found for a call that is not the account's customer_decides
// call; call_already_answered when a different answer was recorded first;
// call_not_answerable when the deadline passed unanswered.
//
// check (nil: none) checks an assistant answer's variables (VariablesCheck).
func Answer(ctx context.Context, s Store, accountID, callID string, ans callevent.Answer, now time.Time, check VariablesCheck) (Record, error) {
	action := ans.Action
	if action != Accept && action != Decline && action != Assistant {
		if action == "" {
			return Record{}, apierr.Missing("action")
		}
		return Record{}, apierr.Invalid("action", "action must be accept, decline or assistant")
	}
	found, err := s.GetDecision(ctx, callID)
	r, err := apierr.Owned(found, found.AccountID, err, accountID, apierr.NotFound("call", callID))
	if err != nil {
		return Record{}, err
	}
	if r.Decision == "" {
		// A recorded answer replays without the check (the line may have changed since).
		if err := checkAnswer(ctx, ans, r, check); err != nil {
			return Record{}, err
		}
	} else if err := checkAnswer(ctx, ans, r, nil); err != nil {
		return Record{}, err
	}
	if r.Decision == "" && now.After(r.AnswerBy) {
		return Record{}, apierr.New(apierr.CodeCallNotAnswerable, "the call's answer_by has passed")
	}
	if r.Decision == "" {
		r, _, err = s.Decide(ctx, callID, action, SourceAPI, ans.Variables, now)
		if err != nil {
			return Record{}, fmt.Errorf("decide %s: %w", callID, err)
		}
	}
	switch r.Decision {
	case action:
		return r, nil
	case Timeout:
		return r, apierr.New(apierr.CodeCallNotAnswerable, "the call was not answered by answer_by and is no longer ringing")
	default:
		return r, apierr.New(apierr.CodeCallAlreadyAnswered, fmt.Sprintf("the call was already answered: %s", r.Decision))
	}
}

func (a *Asker) now() time.Time {
	if a.Now != nil {
		return a.Now().UTC()
	}
	return time.Now().UTC()
}

func (a *Asker) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}
