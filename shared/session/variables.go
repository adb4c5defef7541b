package session

import (
	"context"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/variables"
)

// checkVariables: a session's variables are for mode assistant only, within the bounds
// of shared/variables.
func (r *CreateRequest) checkVariables() error {
	if r.Variables == nil {
		return nil
	}
	if r.Mode != ModeAssistant {
		return apierr.Invalid("variables", "variables are only for mode assistant")
	}
	return variables.CheckValues("variables", r.Variables)
}

// handToLineAssistant hands a ringing customer_decides call its customer answered with
// action assistant to the line's assistant (the line as it was when the call rang, as
// for on_decision_timeout): the active version, rendered with the answer's values over
// the line's defaults. An assistant that cannot take the call any more (archived since
// the call rang) declines it with no_assistant.
func (s *Service) handToLineAssistant(ctx context.Context, plat platform.Platform, sessionID string, l line.Line, values map[string]string) error {
	if l.AssistantID == "" {
		return s.declineSession(ctx, sessionID, call.ReasonNoAssistant, call.EndedBySystem)
	}
	v, err := s.lineVersion(ctx, l)
	if err != nil {
		if _, ok := apierr.As(err); ok {
			return s.declineSession(ctx, sessionID, call.ReasonNoAssistant, call.EndedBySystem)
		}
		return err
	}
	return s.handToAssistant(ctx, plat, sessionID, v, callVariables(v, values, l))
}

// callVariables are the values a call on line l running version v is rendered with: the
// call's own values over the line's defaults, for the names v uses.
func callVariables(v assistant.Version, values map[string]string, l line.Line) map[string]string {
	return variables.Resolve(v.VariableNames(), values, l.Variables)
}

// CheckAnswerVariables is the decision.VariablesCheck of this service: an answer's
// values over the line's defaults must render the line's assistant (its pinned or active
// version) within the field limits, or the answer is a 400 on variables. A line without
// an assistant that can take the call passes: the call is declined with no_assistant
// when the answer is acted on.
func (s *Service) CheckAnswerVariables(ctx context.Context, r decision.Record, values map[string]string) error {
	l, err := s.lines.GetLine(ctx, r.LineID)
	if err != nil {
		return err
	}
	v, err := s.lineVersion(ctx, l)
	if err != nil {
		if _, ok := apierr.As(err); ok {
			return nil
		}
		return err
	}
	_, _, err = v.Rendered(callVariables(v, values, l))
	return err
}
