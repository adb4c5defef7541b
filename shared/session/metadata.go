package session

import (
	"context"
	"maps"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/metadata"
)

// endedEvent is the call.ended event of c, the call of ses: it echoes the metadata of
// both.
func endedEvent(ses Session, c call.Call, id string, at time.Time) callevent.Event {
	return c.SessionEndedEvent(id, at, ses.Metadata)
}

// UpdateMetadata changes a session's metadata (PATCH /v1/sessions/{id}), live or ended.
// The write is conditional on the revisions read (mutate), so it loses no concurrent
// change of the session or its call, and a concurrent metadata update is applied on top
// of the other, not over it. A patch that changes nothing writes nothing.
//
// Errors: parameter errors (shared/metadata); resource_not_found.
func (s *Service) UpdateMetadata(ctx context.Context, accountID, id string, p metadata.Patch) (Session, error) {
	if err := p.Validate(); err != nil {
		return Session{}, err
	}
	if _, err := s.Get(ctx, accountID, id); err != nil {
		return Session{}, err
	}
	ses, _, err := s.mutate(ctx, id, func(ses *Session, _ *call.Call) ([]callevent.Event, bool, error) {
		m, err := p.Apply(ses.Metadata)
		if err != nil || maps.Equal(m, ses.Metadata) {
			return nil, false, err
		}
		ses.Metadata = m
		return nil, true, nil
	})
	return ses, err
}

// UpdateCallMetadata changes a call's metadata (PATCH /v1/calls/{id}), live or over, as
// UpdateMetadata does a session's: conditionally on the call's revision. A call's
// metadata is its own: an outbound call starts with a copy of its session's, and the two
// change apart afterwards.
//
// Errors: parameter errors (shared/metadata); resource_not_found.
func (s *Service) UpdateCallMetadata(ctx context.Context, accountID, id string, p metadata.Patch) (call.Call, error) {
	if err := p.Validate(); err != nil {
		return call.Call{}, err
	}
	c, err := s.records.GetCall(ctx, id)
	if _, err := apierr.Owned(c, c.AccountID, err, accountID, apierr.NotFound("call", id)); err != nil {
		return call.Call{}, err
	}
	return s.mutateCall(ctx, id, func(c *call.Call) ([]callevent.Event, bool, error) {
		m, err := p.Apply(c.Metadata)
		if err != nil || maps.Equal(m, c.Metadata) {
			return nil, false, err
		}
		c.Metadata = m
		return nil, true, nil
	})
}
