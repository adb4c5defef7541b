package dynamo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

var (
	_ session.Store      = (*Store)(nil)
	_ session.SweepIndex = (*Store)(nil)
	_ call.Store         = (*Store)(nil)
)

// liveShards spreads the sweep index (session.SweepIndex, the "due" index) over this
// many index partitions, so session writes do not all land on one.
const liveShards = 8

func liveShard(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return "live#" + strconv.Itoa(int(h.Sum32()%liveShards))
}

// revisionPut writes it as revision rev+1: an insert when rev is 0 (the key must be
// free), else only over revision rev.
func revisionPut(table *string, it item, rev int64) *types.Put {
	it["revision"] = num(rev + 1)
	p := &types.Put{TableName: table, Item: it}
	if rev == 0 {
		p.ConditionExpression = aws.String("attribute_not_exists(id)")
	} else {
		p.ConditionExpression = aws.String("revision = :rev")
		p.ExpressionAttributeValues = item{":rev": num(rev)}
	}
	return p
}

func sessionItem(s session.Session) item {
	s.Revision++
	s.Slot = s.HoldsSlot() // the write that ends a session gives its slot back (slotRelease)
	it := docItem(s, item{"id": str(s.ID), "account_id": str(s.AccountID)})
	addSweepKeys(it, s)
	if s.Slot {
		it["slot"] = &types.AttributeValueMemberBOOL{Value: true}
	}
	addSessionFilterKeys(it, s)
	return it
}

// addSweepKeys gives a Live session its keys in the sweep index: its shard, and
// sweep_due, its Due key as text ("<due time>#<id>", timeLayout), which sorts in key
// order. Sparse: a session that is not Live has neither, and leaves the index in the
// write that ends it.
func addSweepKeys(it item, s session.Session) {
	k, ok := s.Due()
	if !ok {
		return
	}
	it["live_shard"] = str(liveShard(s.ID))
	it["sweep_due"] = str(dueText(k))
}

func dueText(k session.DueKey) string { return k.At.UTC().Format(timeLayout) + "#" + k.ID }

func callItem(c call.Call) item {
	c.Revision++
	it := docItem(c, item{"id": str(c.ID), "account_id": str(c.AccountID)})
	// Index keys only when there is something to index: the line and session
	// indexes are sparse.
	if c.LineID != "" {
		it["account_line"] = str(c.AccountID + "#" + c.LineID)
	}
	if c.SessionID != "" {
		it["account_session"] = str(c.AccountID + "#" + c.SessionID)
	}
	addCallFilterKeys(it, c)
	return it
}

// callWrites are the actions that save c: the call, and the claim of its platform call
// id (which stays the call's own: a second call with the same id on the same platform
// conflicts).
//
// What the call's usage brings to its account's day (call.TakeUsageDue), and what its
// final report brings to its version's quality (call.TakeQualityDue), are added in the
// same transaction.
func (s *Store) callWrites(c call.Call) ([]types.TransactWriteItem, error) {
	calls, err := s.table(Calls)
	if err != nil {
		return nil, err
	}
	due, counted := c.TakeUsageDue()
	qdue, qcounted := c.TakeQualityDue()
	out := []types.TransactWriteItem{{Put: revisionPut(calls, callItem(c), c.Revision)}}
	if counted {
		w, err := s.usageWrite(due)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	if qcounted {
		w, err := s.qualityWrite(qdue)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	if c.PlatformCallID != "" {
		ids, err := s.table(CallPlatformIDs)
		if err != nil {
			return nil, err
		}
		out = append(out, types.TransactWriteItem{Put: &types.Put{
			TableName:                 ids,
			Item:                      item{"platform_call": str(c.Platform + "#" + c.PlatformCallID), "call_id": str(c.ID)},
			ConditionExpression:       aws.String("attribute_not_exists(platform_call) OR call_id = :id"),
			ExpressionAttributeValues: item{":id": str(c.ID)},
		}})
	}
	return out, nil
}

// callAndEventWrites are the actions that save c (callWrites) followed by those that
// append evts: what every write of a call carries.
func (s *Store) callAndEventWrites(c call.Call, evts []callevent.Event) ([]types.TransactWriteItem, error) {
	cw, err := s.callWrites(c)
	if err != nil {
		return nil, err
	}
	ew, err := s.eventWrites(evts)
	if err != nil {
		return nil, err
	}
	return append(cw, ew...), nil
}

func (s *Store) eventWrites(evts []callevent.Event) ([]types.TransactWriteItem, error) {
	var out []types.TransactWriteItem
	for _, e := range evts {
		put, err := s.EventPut(e)
		if err != nil {
			return nil, err
		}
		out = append(out, put)
	}
	return out, nil
}

// SaveSession writes the session, its call and the events of the change in one
// transaction, each record conditional on the revision it was read at.
func (s *Store) SaveSession(ctx context.Context, ses session.Session, c call.Call, evts []callevent.Event) error {
	sessions, err := s.table(Sessions)
	if err != nil {
		return err
	}
	put := revisionPut(sessions, sessionItem(ses), ses.Revision)
	txn := []types.TransactWriteItem{{Put: put}}
	if rel := slotRelease(sessions, ses, put); rel != nil {
		txn = append(txn, *rel)
	}
	rest, err := s.callAndEventWrites(c, evts)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: append(txn, rest...)})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("save session %s: %w", ses.ID, err)
	}
	return err
}

// DiscardSession deletes a session and its call, both still at their first revision, in
// one transaction. A call discarded here never had a platform id, so no id item is left.
func (s *Store) DiscardSession(ctx context.Context, sessionID, callID string) error {
	sessions, err := s.table(Sessions)
	if err != nil {
		return err
	}
	calls, err := s.table(Calls)
	if err != nil {
		return err
	}
	first := func(table *string, id string) types.TransactWriteItem {
		return types.TransactWriteItem{Delete: &types.Delete{TableName: table, Key: item{"id": str(id)},
			ConditionExpression: aws.String("revision = :first"), ExpressionAttributeValues: item{":first": num(1)}}}
	}
	txn := []types.TransactWriteItem{first(sessions, sessionID), first(calls, callID)}
	if rel, err := s.discardRelease(ctx, sessions, sessionID); err != nil {
		return err
	} else if rel != nil {
		txn = append(txn, *rel)
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("discard session %s: %w", sessionID, err)
	}
	return err
}

// GetSession reads a session.
func (s *Store) GetSession(ctx context.Context, id string) (session.Session, error) {
	return getDoc[session.Session](ctx, s, Sessions, item{"id": str(id)})
}

// ListSessions lists an account's sessions newest first, from by_account or, for a
// status, by_account_status.
func (s *Store) ListSessions(ctx context.Context, accountID string, q session.ListQuery) ([]session.Session, error) {
	index, part := "by_account", attrEq{"account_id", accountID}
	if q.Status != "" {
		index, part = "by_account_status", attrEq{"account_status", accountID + "#" + q.Status}
	}
	items, err := s.pageNewestFirst(ctx, Sessions, index, part, q.Query)
	if err != nil {
		return nil, err
	}
	return decodeAll[session.Session](items)
}

// DueSessions returns up to limit Live sessions due at or before now, after the key
// after, in key order: one key-range query per shard of the due index (live_shard,
// sweep_due), merged. A tick with nothing due costs liveShards empty queries, however
// many sessions are live.
func (s *Store) DueSessions(ctx context.Context, now time.Time, after session.DueKey, limit int) ([]session.Session, error) {
	name, err := s.table(Sessions)
	if err != nil {
		return nil, err
	}
	// Every key of a session due at now is below "<now>$" ('$' follows '#').
	hi := now.UTC().Format(timeLayout) + "$"
	lo := ""
	if after != (session.DueKey{}) {
		lo = dueText(after)
	}
	type due struct {
		key string
		ses session.Session
	}
	var all []due
	for shard := range liveShards {
		in := &dynamodb.QueryInput{
			TableName:                 name,
			IndexName:                 aws.String("due"),
			KeyConditionExpression:    aws.String("live_shard = :s AND sweep_due <= :hi"),
			ExpressionAttributeValues: item{":s": str("live#" + strconv.Itoa(shard)), ":hi": str(hi)},
			Limit:                     aws.Int32(int32(limit + 1)), // the key after itself may come back
		}
		if lo != "" {
			// BETWEEN is inclusive: the session at after itself is dropped below.
			in.KeyConditionExpression = aws.String("live_shard = :s AND sweep_due BETWEEN :lo AND :hi")
			in.ExpressionAttributeValues[":lo"] = str(lo)
		}
		for n := 0; n < limit; {
			page, err := s.db.Query(ctx, in)
			if err != nil {
				return nil, fmt.Errorf("due sessions: %w", err)
			}
			for _, it := range page.Items {
				key := getS(it, "sweep_due")
				if key <= lo {
					continue
				}
				ses, err := fromDoc[session.Session](it)
				if err != nil {
					return nil, err
				}
				all = append(all, due{key, ses})
				n++
			}
			if page.LastEvaluatedKey == nil {
				break
			}
			in.ExclusiveStartKey = page.LastEvaluatedKey
		}
	}
	slices.SortFunc(all, func(a, b due) int { return strings.Compare(a.key, b.key) })
	out := make([]session.Session, 0, min(len(all), limit))
	for _, d := range all[:min(len(all), limit)] {
		out = append(out, d.ses)
	}
	return out, nil
}

// SaveCall writes a call and the events of the change in one transaction.
func (s *Store) SaveCall(ctx context.Context, c call.Call, evts []callevent.Event) error {
	txn, err := s.callAndEventWrites(c, evts)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("save call %s: %w", c.ID, err)
	}
	return err
}

// QueueEvent writes evt to the events table on its own (the outbox, or the stream on
// AWS); an id that exists is ErrConflict.
func (s *Store) QueueEvent(ctx context.Context, evt callevent.Event) error {
	put, err := s.EventPut(evt)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, putItem(put.Put))
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("queue event %s: %w", evt.ID, err)
	}
	return err
}

// GetCall reads a call record.
func (s *Store) GetCall(ctx context.Context, id string) (call.Call, error) {
	return getDoc[call.Call](ctx, s, Calls, item{"id": str(id)})
}

// CallByPlatformID finds a call by its platform's id for it.
func (s *Store) CallByPlatformID(ctx context.Context, platform, platformCallID string) (call.Call, error) {
	if platformCallID == "" {
		return call.Call{}, apierr.ErrNotFound
	}
	it, err := s.getItem(ctx, CallPlatformIDs, item{"platform_call": str(platform + "#" + platformCallID)})
	if err != nil {
		return call.Call{}, err
	}
	return s.GetCall(ctx, getS(it, "call_id"))
}

// ListCalls lists an account's calls newest first, from the index that serves the
// filters (planCallList).
func (s *Store) ListCalls(ctx context.Context, accountID string, q call.ListQuery) ([]call.Call, error) {
	plan := planCallList(accountID, q)
	items, err := s.pageOfPartitions(ctx, Calls, plan.index, plan.attr, plan.values, q.Query)
	if err != nil {
		return nil, err
	}
	list, err := decodeAll[call.Call](items)
	if err != nil || !plan.check {
		return list, err
	}
	// A session has one call or two: the other filters are checked here.
	return slices.DeleteFunc(list, func(c call.Call) bool { return !q.Matches(c) }), nil
}

func decodeAll[T any](items []item) ([]T, error) {
	out := make([]T, len(items))
	for i, it := range items {
		v, err := fromDoc[T](it)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
