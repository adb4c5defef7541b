package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/erasure"
)

var _ erasure.RetentionStore = (*Store)(nil)

// withRetention is the one partition of the accounts' sparse "with_retention" index: an
// account item carries the attribute while its call retention is set, so the retention
// job reads those accounts only, and nothing scans the table.
const (
	withRetentionIndex = "with_retention"
	withRetentionAttr  = "retention"
	withRetentionValue = "set"
)

// SetCallRetention sets the account's call retention in days (nil: keep) in its doc, and
// puts the account in the with_retention index or takes it out, in one conditional
// write (a concurrent change of the account is not lost).
func (s *Store) SetCallRetention(ctx context.Context, accountID string, days *int) (account.Account, error) {
	accounts, err := s.table(Accounts)
	if err != nil {
		return account.Account{}, err
	}
	a, old, err := s.accountDoc(ctx, accountID)
	if err != nil {
		return account.Account{}, err
	}
	a.CallRetentionDays = days
	u := accountDocUpdate(accounts, a, old)
	in := &dynamodb.UpdateItemInput{TableName: u.TableName, Key: u.Key, ConditionExpression: u.ConditionExpression,
		ExpressionAttributeNames: map[string]string{"#r": withRetentionAttr}, ExpressionAttributeValues: u.ExpressionAttributeValues}
	if days != nil {
		in.UpdateExpression = aws.String("SET doc = :doc, #r = :r")
		in.ExpressionAttributeValues[":r"] = str(withRetentionValue)
	} else {
		in.UpdateExpression = aws.String("SET doc = :doc REMOVE #r")
	}
	_, err = s.db.UpdateItem(ctx, in)
	if err = conflict(err); err != nil {
		return account.Account{}, fmt.Errorf("set call retention of %s: %w", accountID, err)
	}
	return a, nil
}

// SetRetainedThrough records how far the retention job got for the account, in its doc
// (conditional on the doc read).
func (s *Store) SetRetainedThrough(ctx context.Context, accountID string, t time.Time) error {
	accounts, err := s.table(Accounts)
	if err != nil {
		return err
	}
	a, old, err := s.accountDoc(ctx, accountID)
	if err != nil {
		return err
	}
	a.RetainedThrough = &t
	_, err = s.db.UpdateItem(ctx, updateItem(accountDocUpdate(accounts, a, old)))
	if err = conflict(err); err != nil {
		return fmt.Errorf("set retained-through of %s: %w", accountID, err)
	}
	return nil
}

// AccountsWithRetention lists the accounts whose call retention is set, by id, from the
// with_retention index. The index is eventually consistent: an account whose setting
// changed a moment ago may be seen as before until the next run, and Retain reads each
// listed account's setting from the doc it lists.
func (s *Store) AccountsWithRetention(ctx context.Context) ([]account.Account, error) {
	name, err := s.table(Accounts)
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName: name, IndexName: aws.String(withRetentionIndex),
		KeyConditionExpression:    aws.String("#r = :r"),
		ExpressionAttributeNames:  map[string]string{"#r": withRetentionAttr},
		ExpressionAttributeValues: item{":r": str(withRetentionValue)},
		ScanIndexForward:          aws.Bool(true),
	}
	var out []account.Account
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("accounts with retention: %w", err)
		}
		for _, it := range page.Items {
			a, err := fromDoc[account.Account](it)
			if err != nil {
				return nil, err
			}
			if a.CallRetentionDays != nil {
				out = append(out, a)
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// updateItem is u as a request of its own.
func updateItem(u *types.Update) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
		ConditionExpression: u.ConditionExpression, ExpressionAttributeNames: u.ExpressionAttributeNames,
		ExpressionAttributeValues: u.ExpressionAttributeValues}
}
