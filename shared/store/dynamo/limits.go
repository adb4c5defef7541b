package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

// An account's concurrent-session slots are one counter item in the sessions table
// (every function that writes sessions may write it, and no index holds it: it has no
// account_id or live_shard):
//
//	id       "slots#<account id>"
//	used     how many of the account's sessions hold a slot (their item has `slot`)
//	own_max  the account's own limit, when the operator set one (a copy of the account
//	         doc's max_concurrent_sessions, written in the same transaction)
//
// CreateSession increments used under a condition that it is below the limit, in the
// transaction that inserts the session; the SaveSession that writes a session over
// decrements it in the same transaction as it removes the session's `slot`, on the
// condition that `slot` is still there, so a session ending twice gives its slot back
// once. The count therefore always equals the sessions that hold a slot.

func slotsKey(accountID string) item { return item{"id": str("slots#" + accountID)} }

// slotTakeCondition: below the account's own limit if it has one, else below the
// default. A missing counter is zero.
const slotTakeCondition = "(attribute_exists(own_max) AND own_max > :zero AND (attribute_not_exists(used) OR used < own_max))" +
	" OR (attribute_not_exists(own_max) AND (attribute_not_exists(used) OR used < :default))"

// createAttempts bounds the retries of a create whose transaction met another on the
// counter item (TransactionConflict): every create of an account writes that item.
const createAttempts = 12

// CreateSession inserts a new session and its call with one of the account's slots, in
// one transaction with the counter's conditional increment.
func (s *Store) CreateSession(ctx context.Context, ses session.Session, c call.Call, evts []callevent.Event, defaultLimit int) error {
	if ses.Revision != 0 || !ses.Slot {
		return fmt.Errorf("create session %s: not a new session that takes a slot", ses.ID)
	}
	sessions, err := s.table(Sessions)
	if err != nil {
		return err
	}
	txn := []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: sessions, Key: slotsKey(ses.AccountID),
			UpdateExpression:          aws.String("SET used = if_not_exists(used, :zero) + :one"),
			ConditionExpression:       aws.String(slotTakeCondition),
			ExpressionAttributeValues: item{":zero": num(0), ":one": num(1), ":default": num(defaultLimit)},
		}},
		{Put: revisionPut(sessions, sessionItem(ses), 0)},
	}
	rest, err := s.callAndEventWrites(c, evts)
	if err != nil {
		return err
	}
	txn = append(txn, rest...)
	// Another create or end of the account holds the counter: try again shortly.
	return s.createCounted(ctx, txn, session.ErrConcurrentLimit, "create session "+ses.ID)
}

// createCounted runs a create whose first item takes a place on an account's counter:
// over when that counter's condition fails, again after a short pause while another
// transaction holds the same items (at most createAttempts times), and the put's own
// conflict as apierr.ErrConflict.
func (s *Store) createCounted(ctx context.Context, txn []types.TransactWriteItem, over error, what string) error {
	for attempt := 1; ; attempt++ {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
		reasons := cancelReasons(err)
		switch {
		case err == nil:
			return nil
		case len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed":
			return over
		case contended(err, reasons) && attempt < createAttempts:
			if err := contentionPause(ctx, attempt); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			continue
		}
		if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
			return fmt.Errorf("%s: %w", what, err)
		}
		return err
	}
}

// contentionPause waits a short random time, longer with each attempt, before a
// transaction that met another on the same items tries again.
func contentionPause(ctx context.Context, attempt int) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(rand.IntN(5*attempt)+1) * time.Millisecond):
		return nil
	}
}

// contended reports whether a transaction failed only because another one was writing
// the same items.
func contended(err error, reasons []string) bool {
	var tcx *types.TransactionConflictException
	if errors.As(err, &tcx) {
		return true
	}
	conflicted := false
	for _, r := range reasons {
		switch r {
		case "TransactionConflict":
			conflicted = true
		case "None", "":
		default:
			return false
		}
	}
	return conflicted
}

// slotRelease is the counter's decrement that goes with a write of ses over (nil for any
// other write), and puts the condition that the stored session still holds the slot on
// that write: a second write of the session over fails that condition (ErrConflict; the
// caller reads the session again, without the slot) instead of decrementing twice.
func slotRelease(table *string, ses session.Session, put *types.Put) *types.TransactWriteItem {
	if ses.Revision == 0 || !ses.Slot || !ses.Over() {
		return nil
	}
	put.ConditionExpression = aws.String(aws.ToString(put.ConditionExpression) + " AND attribute_exists(slot)")
	return &types.TransactWriteItem{Update: &types.Update{
		TableName: table, Key: slotsKey(ses.AccountID),
		UpdateExpression:          aws.String("SET used = if_not_exists(used, :one) - :one"),
		ExpressionAttributeValues: item{":one": num(1)},
	}}
}

// discardRelease is the counter's decrement that goes with DiscardSession of a session
// that took a slot (nil for one that did not, or is gone). The discard's condition that
// the session is still at its first revision makes what is read here what is deleted.
func (s *Store) discardRelease(ctx context.Context, table *string, sessionID string) (*types.TransactWriteItem, error) {
	it, err := s.getItem(ctx, Sessions, item{"id": str(sessionID)})
	if errors.Is(err, apierr.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discard session %s: %w", sessionID, err)
	}
	if _, held := it["slot"]; !held || getN(it, "revision") != 1 {
		return nil, nil
	}
	return &types.TransactWriteItem{Update: &types.Update{
		TableName: table, Key: slotsKey(getS(it, "account_id")),
		UpdateExpression:          aws.String("SET used = if_not_exists(used, :one) - :one"),
		ExpressionAttributeValues: item{":one": num(1)},
	}}, nil
}

// SessionSlotsInUse reads the account's counter (the operator's view).
func (s *Store) SessionSlotsInUse(ctx context.Context, accountID string) (int, error) {
	it, err := s.getItem(ctx, Sessions, slotsKey(accountID))
	if errors.Is(err, apierr.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return int(getN(it, "used")), nil
}

// SetMaxConcurrentSessions sets the account's own limit (nil: the deployment's default)
// in its doc and on its slot counter, in one transaction; the doc's write is conditional
// on the doc read, so a concurrent change of the account is not lost.
func (s *Store) SetMaxConcurrentSessions(ctx context.Context, accountID string, limit *int) (account.Account, error) {
	accounts, err := s.table(Accounts)
	if err != nil {
		return account.Account{}, err
	}
	sessions, err := s.table(Sessions)
	if err != nil {
		return account.Account{}, err
	}
	a, old, err := s.accountDoc(ctx, accountID)
	if err != nil {
		return account.Account{}, err
	}
	a.MaxConcurrentSessions = limit
	counter := &types.Update{TableName: sessions, Key: slotsKey(accountID), UpdateExpression: aws.String("REMOVE own_max")}
	if limit != nil {
		counter.UpdateExpression = aws.String("SET own_max = :max")
		counter.ExpressionAttributeValues = item{":max": num(*limit)}
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: accountDocUpdate(accounts, a, old)},
		{Update: counter},
	}})
	if err = conflict(err); err != nil {
		return account.Account{}, fmt.Errorf("set limits of %s: %w", accountID, err)
	}
	return a, nil
}

// SetOutbound sets the account's destination policy (shared/destination) in its doc,
// conditional on the doc read, so a concurrent change of the account is not lost.
func (s *Store) SetOutbound(ctx context.Context, accountID string, o account.Outbound) (account.Account, error) {
	accounts, err := s.table(Accounts)
	if err != nil {
		return account.Account{}, err
	}
	a, old, err := s.accountDoc(ctx, accountID)
	if err != nil {
		return account.Account{}, err
	}
	a.Outbound = o
	u := accountDocUpdate(accounts, a, old)
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: u.TableName, Key: u.Key,
		UpdateExpression: u.UpdateExpression, ConditionExpression: u.ConditionExpression,
		ExpressionAttributeValues: u.ExpressionAttributeValues})
	if err = conflict(err); err != nil {
		return account.Account{}, fmt.Errorf("set outbound policy of %s: %w", accountID, err)
	}
	return a, nil
}

// accountDoc reads the account's doc: the account, and the stored doc itself for
// accountDocUpdate's condition.
func (s *Store) accountDoc(ctx context.Context, accountID string) (account.Account, types.AttributeValue, error) {
	it, err := s.getItem(ctx, Accounts, item{"id": str(accountID)})
	if err != nil {
		return account.Account{}, nil, err
	}
	a, err := fromDoc[account.Account](it)
	if err != nil {
		return account.Account{}, nil, err
	}
	return a, it["doc"], nil
}

// accountDocUpdate writes a as its account's doc, on condition that the doc is still old
// (accountDoc's): a concurrent change of the account is not lost.
func accountDocUpdate(table *string, a account.Account, old types.AttributeValue) *types.Update {
	return &types.Update{
		TableName: table, Key: item{"id": str(a.ID)},
		UpdateExpression:          aws.String("SET doc = :doc"),
		ConditionExpression:       aws.String("doc = :old"),
		ExpressionAttributeValues: item{":doc": docItem(a, item{})["doc"], ":old": old},
	}
}
