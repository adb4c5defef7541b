package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/quality"
)

var _ quality.Store = (*Store)(nil)

// A version's quality aggregate (shared/quality) lives in the calls table as the usage
// days do (usage.go), one item a version keyed id "quality#<account>#<version>": the
// write that records a call's final report adds to it in the same transaction, and
// GET /v1/assistants/{id}/quality reads the page's versions' items by key. The items
// have none of the calls' index attributes, so no list of calls sees them.
func qualityKey(accountID, versionID string) item {
	return item{"id": str("quality#" + accountID + "#" + versionID)}
}

// qualityWrite adds due to its version's item (created at the first add) with ADD, in
// the call's transaction; counts of zero are left out (calls is never zero).
func (s *Store) qualityWrite(due quality.Due) (types.TransactWriteItem, error) {
	calls, err := s.table(Calls)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	var adds []string
	names := map[string]string{"#acct": "quality_account", "#ver": "quality_version"}
	values := item{":acct": str(due.AccountID), ":ver": str(due.VersionID)}
	for i, f := range due.Counts.Fields() {
		if *f.Value == 0 {
			continue
		}
		adds = append(adds, fmt.Sprintf("#f%d :f%d", i, i))
		names[fmt.Sprintf("#f%d", i)] = f.Name
		values[fmt.Sprintf(":f%d", i)] = num(*f.Value)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 calls,
		Key:                       qualityKey(due.AccountID, due.VersionID),
		UpdateExpression:          aws.String("SET #acct = :acct, #ver = :ver ADD " + strings.Join(adds, ", ")),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}, nil
}

// VersionQuality reads the account's items of the given versions by key, strongly
// consistent: GetItem, eight at a time (a page of versions; the functions' read grant is
// GetItem and Query, and no query serves a list of keys).
func (s *Store) VersionQuality(ctx context.Context, accountID string, versionIDs []string) ([]quality.Version, error) {
	keys := make([]item, len(versionIDs))
	for i, id := range versionIDs {
		keys[i] = qualityKey(accountID, id)
	}
	its, err := s.getItems(ctx, Calls, keys)
	if err != nil {
		return nil, fmt.Errorf("quality of %s: %w", accountID, err)
	}
	var out []quality.Version
	for i, it := range its {
		if it == nil {
			continue
		}
		v := quality.Version{VersionID: versionIDs[i]}
		for _, f := range v.Counts.Fields() {
			*f.Value = getN(it, f.Name)
		}
		out = append(out, v)
	}
	return out, nil
}
