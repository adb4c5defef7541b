package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
)

var _ account.Store = (*Store)(nil)

// CreateAccount writes an account and its first key in one transaction; either taken
// is ErrConflict.
func (s *Store) CreateAccount(ctx context.Context, a account.Account, k account.Key) error {
	accounts, err := s.table(Accounts)
	if err != nil {
		return err
	}
	keys, err := s.table(APIKeys)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{
			TableName: accounts, Item: docItem(a, item{"id": str(a.ID)}),
			ConditionExpression: aws.String("attribute_not_exists(id)"),
		}},
		{Put: &types.Put{
			TableName: keys, Item: keyItem(k),
			ConditionExpression:      aws.String("attribute_not_exists(#h)"),
			ExpressionAttributeNames: map[string]string{"#h": "hash"},
		}},
	}})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("create account %s: %w", a.ID, err)
	}
	return err
}

func keyItem(k account.Key) item {
	return docItem(k, item{"hash": str(k.Hash), "account_id": str(k.AccountID)})
}

// GetAccount reads an account.
func (s *Store) GetAccount(ctx context.Context, id string) (account.Account, error) {
	return getDoc[account.Account](ctx, s, Accounts, item{"id": str(id)})
}

// AddKey adds a key to an existing account: NotFound without the account, ErrConflict
// when the hash is taken.
func (s *Store) AddKey(ctx context.Context, k account.Key) error {
	accounts, err := s.table(Accounts)
	if err != nil {
		return err
	}
	keys, err := s.table(APIKeys)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{
			TableName: accounts, Key: item{"id": str(k.AccountID)},
			ConditionExpression: aws.String("attribute_exists(id)"),
		}},
		{Put: &types.Put{
			TableName: keys, Item: keyItem(k),
			ConditionExpression:      aws.String("attribute_not_exists(#h)"),
			ExpressionAttributeNames: map[string]string{"#h": "hash"},
		}},
	}})
	if reasons := cancelReasons(err); len(reasons) == 2 && reasons[0] == "ConditionalCheckFailed" {
		return apierr.ErrNotFound
	}
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("add key to %s: %w", k.AccountID, err)
	}
	return err
}

// AccountByKeyHash finds the account a key belongs to: the key item, then its account,
// both read strongly consistent.
func (s *Store) AccountByKeyHash(ctx context.Context, hash string) (account.Account, error) {
	k, err := s.getItem(ctx, APIKeys, item{"hash": str(hash)})
	if err != nil {
		return account.Account{}, err
	}
	return s.GetAccount(ctx, getS(k, "account_id"))
}
