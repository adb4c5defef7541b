package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/decision"
)

var (
	_ decision.Store    = (*Store)(nil)
	_ decision.EventLog = (*Store)(nil)
)

// decisionRetention is how long a customer_decides decision is kept after its call rang.
const decisionRetention = 7 * 24 * time.Hour

func decisionItem(r decision.Record) item {
	return docItem(r, item{
		"call_id":  str(r.CallID),
		"decision": str(r.Decision),
		"ttl":      num(r.CreatedAt.Add(decisionRetention).Unix()),
	})
}

// CreateDecision inserts a pending decision; a call that has one is ErrConflict.
func (s *Store) CreateDecision(ctx context.Context, r decision.Record) error {
	name, err := s.table(CallDecisions)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: name, Item: decisionItem(r),
		ConditionExpression: aws.String("attribute_not_exists(call_id)"),
	})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("create decision %s: %w", r.CallID, err)
	}
	return err
}

// GetDecision reads a call's decision.
func (s *Store) GetDecision(ctx context.Context, callID string) (decision.Record, error) {
	return getDoc[decision.Record](ctx, s, CallDecisions, item{"call_id": str(callID)})
}

// Decide records the decision with a write conditional on none being recorded: of
// concurrent answers exactly one wins, and the others get the record it wrote.
func (s *Store) Decide(ctx context.Context, callID, d, source string, vars map[string]string, at time.Time) (decision.Record, bool, error) {
	name, err := s.table(CallDecisions)
	if err != nil {
		return decision.Record{}, false, err
	}
	r, err := s.GetDecision(ctx, callID)
	if err != nil || r.Decision != "" {
		return r, false, err
	}
	r.Decision, r.Source, r.DecidedAt, r.Variables = d, source, at.UTC(), vars
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: name, Item: decisionItem(r),
		ConditionExpression:       aws.String("#d = :none"),
		ExpressionAttributeNames:  map[string]string{"#d": "decision"},
		ExpressionAttributeValues: item{":none": str("")},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		// Another answer got there first: return what it recorded.
		r, err = s.GetDecision(ctx, callID)
		return r, false, err
	}
	if err != nil {
		return decision.Record{}, false, fmt.Errorf("decide %s: %w", callID, err)
	}
	return r, true, nil
}

// RecordEvent writes an event that is not part of another state change (call.incoming,
// posted synchronously) into the event log. The stream relays every new event, and the
// relay's publisher leaves call.incoming off the bus.
func (s *Store) RecordEvent(ctx context.Context, evt callevent.Event) error {
	// Posted already, synchronously: never queued for the delivery worker.
	put, err := s.eventPut(evt, false)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, putItem(put.Put))
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("record event %s: %w", evt.ID, err)
	}
	return err
}
