package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

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
			TableName: accounts, Item: docItem(a, item{"id": str(a.ID), activeKeys: num(1)}),
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

// activeKeys is the account item's count of keys not revoked: RevokeKey's condition on it
// keeps an account from losing its last key.
const activeKeys = "active_keys"

// A key item holds its doc as made; its use and its revocation are attributes of their
// own, set by single-attribute updates (no read-modify-write of the doc).
func keyItem(k account.Key) item {
	return docItem(k, item{"hash": str(k.Hash), "account_id": str(k.AccountID), "id": str(k.ID)})
}

func keyFromItem(it item) (account.Key, error) {
	k, err := fromDoc[account.Key](it)
	if err != nil {
		return k, err
	}
	for name, dst := range map[string]**time.Time{"last_used_at": &k.LastUsedAt, "revoked_at": &k.RevokedAt} {
		if v := getS(it, name); v != "" {
			t, err := time.Parse(timeLayout, v)
			if err != nil {
				return k, fmt.Errorf("dynamo: key %s: %s: %w", k.ID, name, err)
			}
			*dst = &t
		}
	}
	return k, nil
}

// GetAccount reads an account.
func (s *Store) GetAccount(ctx context.Context, id string) (account.Account, error) {
	return getDoc[account.Account](ctx, s, Accounts, item{"id": str(id)})
}

// AddKey adds a key to an existing account and counts it: NotFound without the account,
// ErrConflict when the hash is taken.
func (s *Store) AddKey(ctx context.Context, k account.Key) error { return s.addKey(ctx, k, 0) }

// AddKeyWithin adds a key while the account's count of active keys is below max: the
// count's increment carries that condition, in the transaction that inserts the key.
func (s *Store) AddKeyWithin(ctx context.Context, k account.Key, max int) error {
	return s.addKey(ctx, k, max)
}

// addKey adds a key; max above 0 bounds the account's active keys.
func (s *Store) addKey(ctx context.Context, k account.Key, max int) error {
	accounts, err := s.table(Accounts)
	if err != nil {
		return err
	}
	keys, err := s.table(APIKeys)
	if err != nil {
		return err
	}
	if err := s.countKeys(ctx, k.AccountID); err != nil {
		return fmt.Errorf("add key to %s: %w", k.AccountID, err)
	}
	cond, vals := "attribute_exists(id)", item{":one": num(1)}
	if max > 0 {
		cond, vals[":max"] = "attribute_exists(id) AND (attribute_not_exists(#n) OR #n < :max)", num(max)
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: accounts, Key: item{"id": str(k.AccountID)},
			UpdateExpression:          aws.String("ADD #n :one"),
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  map[string]string{"#n": activeKeys},
			ExpressionAttributeValues: vals,
		}},
		{Put: &types.Put{
			TableName: keys, Item: keyItem(k),
			ConditionExpression:      aws.String("attribute_not_exists(#h)"),
			ExpressionAttributeNames: map[string]string{"#h": "hash"},
		}},
	}})
	if reasons := cancelReasons(err); len(reasons) == 2 && reasons[0] == "ConditionalCheckFailed" {
		if max > 0 {
			// The account is there (countKeys read it): its count is at max.
			return account.ErrKeyLimit
		}
		return apierr.ErrNotFound
	}
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("add key to %s: %w", k.AccountID, err)
	}
	return err
}

// KeyByHash reads a key by its hash, strongly consistent.
func (s *Store) KeyByHash(ctx context.Context, hash string) (account.Key, error) {
	it, err := s.getItem(ctx, APIKeys, item{"hash": str(hash)})
	if err != nil {
		return account.Key{}, err
	}
	return keyFromItem(it)
}

// KeyAndAccount reads a key, then its account: DynamoDB has no join.
func (s *Store) KeyAndAccount(ctx context.Context, hash string) (account.Key, account.Account, error) {
	k, err := s.KeyByHash(ctx, hash)
	if err != nil {
		return account.Key{}, account.Account{}, err
	}
	a, err := s.GetAccount(ctx, k.AccountID)
	if err != nil {
		return account.Key{}, account.Account{}, fmt.Errorf("account of key %s: %w", k.ID, err)
	}
	return k, a, nil
}

// accountKeys reads an account's keys through the by_account index (eventually
// consistent: a key made a moment ago may be missing).
func (s *Store) accountKeys(ctx context.Context, accountID, keyID string) ([]account.Key, error) {
	name, err := s.table(APIKeys)
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 name,
		IndexName:                 aws.String("by_account"),
		KeyConditionExpression:    aws.String("account_id = :a"),
		ExpressionAttributeValues: item{":a": str(accountID)},
	}
	if keyID != "" {
		in.KeyConditionExpression = aws.String("account_id = :a AND id = :id")
		in.ExpressionAttributeValues[":id"] = str(keyID)
	}
	var out []account.Key
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list keys of %s: %w", accountID, err)
		}
		for _, it := range page.Items {
			k, err := keyFromItem(it)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
	}
	return out, nil
}

// GetKey reads one of an account's keys by id (index read, then the item itself
// strongly consistent).
func (s *Store) GetKey(ctx context.Context, accountID, keyID string) (account.Key, error) {
	ks, err := s.accountKeys(ctx, accountID, keyID)
	if err != nil {
		return account.Key{}, err
	}
	if len(ks) == 0 {
		return account.Key{}, apierr.ErrNotFound
	}
	return s.KeyByHash(ctx, ks[0].Hash)
}

// ListKeys lists an account's keys that are not revoked, oldest first.
func (s *Store) ListKeys(ctx context.Context, accountID string) ([]account.Key, error) {
	ks, err := s.accountKeys(ctx, accountID, "")
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ks, account.Key.Revoked), nil
}

// countKeys gives an account made before keys were counted its count of keys not
// revoked; an account that has one is left alone.
func (s *Store) countKeys(ctx context.Context, accountID string) error {
	it, err := s.getItem(ctx, Accounts, item{"id": str(accountID)})
	if err != nil || it[activeKeys] != nil {
		return err
	}
	ks, err := s.ListKeys(ctx, accountID)
	if err != nil {
		return err
	}
	name, _ := s.table(Accounts)
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: name, Key: item{"id": str(accountID)},
		UpdateExpression:          aws.String("SET #n = :n"),
		ConditionExpression:       aws.String("attribute_exists(id) AND attribute_not_exists(#n)"),
		ExpressionAttributeNames:  map[string]string{"#n": activeKeys},
		ExpressionAttributeValues: item{":n": num(len(ks))},
	})
	if errors.Is(conflict(err), apierr.ErrConflict) {
		return nil // another writer counted first
	}
	return err
}

// RevokeKey marks the key revoked and takes it off the account's count in one
// transaction whose condition is that the count stays at least one: of two revokes
// racing over the last two keys, one fails its condition (or collides and fails) and
// answers ErrLastKey or ErrConflict.
func (s *Store) RevokeKey(ctx context.Context, accountID, keyID string, now time.Time) (account.Key, error) {
	k, err := s.GetKey(ctx, accountID, keyID)
	if err != nil || k.Revoked() {
		return k, err
	}
	if err := s.countKeys(ctx, accountID); err != nil {
		return account.Key{}, fmt.Errorf("revoke key %s: %w", keyID, err)
	}
	accounts, _ := s.table(Accounts)
	keys, _ := s.table(APIKeys)
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: keys, Key: item{"hash": str(k.Hash)},
			UpdateExpression:          aws.String("SET revoked_at = :t"),
			ConditionExpression:       aws.String("account_id = :a AND attribute_not_exists(revoked_at)"),
			ExpressionAttributeValues: item{":t": timeAttr(now), ":a": str(accountID)},
		}},
		{Update: &types.Update{
			TableName: accounts, Key: item{"id": str(accountID)},
			UpdateExpression:          aws.String("ADD #n :minus"),
			ConditionExpression:       aws.String("#n > :one"),
			ExpressionAttributeNames:  map[string]string{"#n": activeKeys},
			ExpressionAttributeValues: item{":minus": num(-1), ":one": num(1)},
		}},
	}})
	switch reasons := cancelReasons(err); {
	case err == nil:
	case len(reasons) == 2 && reasons[0] == "ConditionalCheckFailed":
		// Revoked by a request that raced this one: answer as for a revoked key.
	case len(reasons) == 2 && reasons[1] == "ConditionalCheckFailed":
		return account.Key{}, account.ErrLastKey
	default:
		return account.Key{}, fmt.Errorf("revoke key %s: %w", keyID, conflict(err))
	}
	return s.KeyByHash(ctx, k.Hash)
}

// TouchKey records a use of a key that is not revoked.
func (s *Store) TouchKey(ctx context.Context, hash string, now time.Time) error {
	name, err := s.table(APIKeys)
	if err != nil {
		return err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: name, Key: item{"hash": str(hash)},
		UpdateExpression:          aws.String("SET last_used_at = :t"),
		ConditionExpression:       aws.String("attribute_exists(#h) AND attribute_not_exists(revoked_at)"),
		ExpressionAttributeNames:  map[string]string{"#h": "hash"},
		ExpressionAttributeValues: item{":t": timeAttr(now)},
	})
	if errors.Is(conflict(err), apierr.ErrConflict) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("touch key: %w", err)
	}
	return nil
}

// logoID is the key of an account's logo item, in the accounts table beside the account
// (whose doc every authenticated request reads, so the bytes are not in it): no account
// id starts so, and nothing scans the table.
func logoID(accountID string) string { return "logo#" + accountID }

// SetBranding changes the account's doc on condition it is the one read (a concurrent
// change is not lost) and, in the same transaction, puts or deletes its logo item.
func (s *Store) SetBranding(ctx context.Context, accountID string, c account.BrandingChange) (account.Account, error) {
	accounts, err := s.table(Accounts)
	if err != nil {
		return account.Account{}, err
	}
	a, old, err := s.accountDoc(ctx, accountID)
	if err != nil {
		return account.Account{}, err
	}
	c.Apply(&a)
	txn := []types.TransactWriteItem{{Update: accountDocUpdate(accounts, a, old)}}
	switch {
	case c.Logo != nil:
		txn = append(txn, types.TransactWriteItem{Put: &types.Put{TableName: accounts, Item: item{
			"id": str(logoID(accountID)), "content_type": str(c.Logo.ContentType),
			"data": &types.AttributeValueMemberB{Value: c.Logo.Data}}}})
	case c.RemoveLogo:
		txn = append(txn, types.TransactWriteItem{Delete: &types.Delete{TableName: accounts, Key: item{"id": str(logoID(accountID))}}})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
	if err = conflict(err); err != nil {
		return account.Account{}, fmt.Errorf("set branding of %s: %w", accountID, err)
	}
	return a, nil
}

// GetLogo reads the account's logo: NotFound when it has none.
func (s *Store) GetLogo(ctx context.Context, accountID string) (account.Logo, error) {
	a, err := s.GetAccount(ctx, accountID)
	if err != nil {
		return account.Logo{}, err
	}
	if a.Logo == nil {
		return account.Logo{}, apierr.ErrNotFound
	}
	it, err := s.getItem(ctx, Accounts, item{"id": str(logoID(accountID))})
	if err != nil {
		return account.Logo{}, err
	}
	b, _ := it["data"].(*types.AttributeValueMemberB)
	if b == nil {
		return account.Logo{}, fmt.Errorf("dynamo: logo of %s has no data", accountID)
	}
	return account.Logo{LogoInfo: *a.Logo, Data: b.Value}, nil
}
