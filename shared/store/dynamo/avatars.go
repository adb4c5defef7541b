package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/listing"
)

var _ avatars.Store = (*Store)(nil)

// CreateAvatar inserts an avatar.
func (s *Store) CreateAvatar(ctx context.Context, a avatars.Avatar) error {
	name, err := s.table(Avatars)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: name,
		Item:                docItem(a, item{"id": str(a.ID), "account_id": str(a.AccountID)}),
		ConditionExpression: aws.String("attribute_not_exists(id)")})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("create avatar %s: %w", a.ID, err)
	}
	return err
}

// GetAvatar reads an avatar.
func (s *Store) GetAvatar(ctx context.Context, id string) (avatars.Avatar, error) {
	return getDoc[avatars.Avatar](ctx, s, Avatars, item{"id": str(id)})
}

// ListAvatars lists an account's avatars newest first (an account has at most
// avatars.MaxPerAccount: one page).
func (s *Store) ListAvatars(ctx context.Context, accountID string) ([]avatars.Avatar, error) {
	items, err := s.pageNewestFirst(ctx, Avatars, "by_account", attrEq{"account_id", accountID},
		listing.Query{Limit: 4 * avatars.MaxPerAccount})
	if err != nil {
		return nil, err
	}
	out := make([]avatars.Avatar, len(items))
	for i, it := range items {
		if out[i], err = fromDoc[avatars.Avatar](it); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DeleteAvatar removes an avatar.
func (s *Store) DeleteAvatar(ctx context.Context, id string) error {
	name, err := s.table(Avatars)
	if err != nil {
		return err
	}
	if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: name, Key: item{"id": str(id)}}); err != nil {
		return fmt.Errorf("delete avatar %s: %w", id, err)
	}
	return nil
}
