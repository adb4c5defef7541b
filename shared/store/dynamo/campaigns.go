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

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/campaign"
)

var _ campaign.Store = (*Store)(nil)

// activeCampaigns is the one partition of the campaigns "active" index (sparse: only
// campaigns the runner has work on are in it).
const activeCampaigns = "campaign"

// campaignItem is c as stored, at the revision it carries.
func campaignItem(c campaign.Campaign) item {
	it := docItem(c, item{"id": str(c.ID), "account_id": str(c.AccountID), "status": str(c.Status),
		"account_status": str(c.AccountID + "#" + c.Status), "revision": num(c.Revision)})
	if c.Active {
		it["active"] = str(activeCampaigns)
	}
	return it
}

func recipientItem(r campaign.Recipient) item {
	return docItem(r, item{"campaign_id": str(r.CampaignID), "id": str(r.ID), "status": str(r.Status),
		"campaign_status": str(r.CampaignID + "#" + r.Status), "revision": num(r.Revision)})
}

// CreateCampaign writes the recipients, then the campaign: a campaign is readable only
// once its list is whole (a create that fails half way leaves recipients no campaign
// names, never a campaign short of some).
func (s *Store) CreateCampaign(ctx context.Context, c campaign.Campaign, rs []campaign.Recipient) error {
	campaigns, err := s.table(Campaigns)
	if err != nil {
		return err
	}
	recipients, err := s.table(CampaignRecipients)
	if err != nil {
		return err
	}
	// In transactions of 100 puts (a transaction's most): one request per 100
	// recipients, each put conditional on a fresh id.
	for start := 0; start < len(rs); start += 100 {
		var txn []types.TransactWriteItem
		for _, r := range rs[start:min(start+100, len(rs))] {
			r.Revision = 1
			txn = append(txn, types.TransactWriteItem{Put: &types.Put{TableName: recipients, Item: recipientItem(r),
				ConditionExpression: aws.String("attribute_not_exists(id)")}})
		}
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
		if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
			return fmt.Errorf("write recipients of %s: %w", c.ID, err)
		}
		if err != nil {
			return err
		}
	}
	c.Revision = 1
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: campaigns, Item: campaignItem(c),
		ConditionExpression: aws.String("attribute_not_exists(id)")})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("create campaign %s: %w", c.ID, err)
	}
	return err
}

// GetCampaign reads a campaign.
func (s *Store) GetCampaign(ctx context.Context, id string) (campaign.Campaign, error) {
	return getDoc[campaign.Campaign](ctx, s, Campaigns, item{"id": str(id)})
}

// ListCampaigns lists an account's campaigns newest first (by status: by_account_status).
func (s *Store) ListCampaigns(ctx context.Context, accountID string, q campaign.ListQuery) ([]campaign.Campaign, error) {
	index, part := "by_account", attrEq{"account_id", accountID}
	if q.Status != "" {
		index, part = "by_account_status", attrEq{"account_status", accountID + "#" + q.Status}
	}
	items, err := s.pageNewestFirst(ctx, Campaigns, index, part, q.Query)
	if err != nil {
		return nil, err
	}
	return docs[campaign.Campaign](items)
}

func docs[T any](items []item) ([]T, error) {
	out := make([]T, len(items))
	var err error
	for i, it := range items {
		if out[i], err = fromDoc[T](it); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UpdateCampaign writes c if its revision is unchanged, with evts, in one transaction.
func (s *Store) UpdateCampaign(ctx context.Context, c campaign.Campaign, evts []callevent.Event) error {
	campaigns, err := s.table(Campaigns)
	if err != nil {
		return err
	}
	prev := c.Revision
	c.Revision++
	put := &types.Put{TableName: campaigns, Item: campaignItem(c), ConditionExpression: aws.String("revision = :rev"),
		ExpressionAttributeValues: item{":rev": num(prev)}}
	if len(evts) == 0 {
		_, err = s.db.PutItem(ctx, putItem(put))
	} else {
		var ew []types.TransactWriteItem
		if ew, err = s.eventWrites(evts); err != nil {
			return err
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems: append([]types.TransactWriteItem{{Put: put}}, ew...)})
	}
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("update campaign %s: %w", c.ID, err)
	}
	return err
}

// ActiveCampaigns reads the "active" index by id.
func (s *Store) ActiveCampaigns(ctx context.Context, afterID string, limit int) ([]campaign.Campaign, error) {
	name, err := s.table(Campaigns)
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{TableName: name, IndexName: aws.String("active"),
		KeyConditionExpression:    aws.String("#a = :a"),
		ExpressionAttributeNames:  map[string]string{"#a": "active"},
		ExpressionAttributeValues: item{":a": str(activeCampaigns)},
		ScanIndexForward:          aws.Bool(true), Limit: aws.Int32(int32(limit))}
	if afterID != "" {
		in.KeyConditionExpression = aws.String("#a = :a AND id > :after")
		in.ExpressionAttributeValues[":after"] = str(afterID)
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("active campaigns: %w", err)
	}
	cs, err := docs[campaign.Campaign](out.Items)
	if err != nil {
		return nil, err
	}
	// The index lags the table: what it lists is read again, consistently.
	fresh := cs[:0]
	for _, c := range cs {
		got, err := s.GetCampaign(ctx, c.ID)
		if errors.Is(err, apierr.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if got.Active {
			fresh = append(fresh, got)
		}
	}
	return fresh, nil
}

// GetRecipient reads one recipient.
func (s *Store) GetRecipient(ctx context.Context, campaignID, id string) (campaign.Recipient, error) {
	return getDoc[campaign.Recipient](ctx, s, CampaignRecipients, item{"campaign_id": str(campaignID), "id": str(id)})
}

// ListRecipients pages a campaign's recipients by id (by status: the
// by_campaign_status index), up to Limit+1. The table's own reads are consistent; an
// index's lag is repaired by the conditional writes that act on what it lists.
func (s *Store) ListRecipients(ctx context.Context, campaignID string, q campaign.RecipientQuery) ([]campaign.Recipient, error) {
	name, err := s.table(CampaignRecipients)
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{TableName: name, ExpressionAttributeNames: map[string]string{"#p": "campaign_id"},
		ExpressionAttributeValues: item{":p": str(campaignID)},
		ScanIndexForward:          aws.Bool(q.Before == "")}
	// Ids after lo and before hi ("": unbounded), both bounds excluded. A key condition
	// has one range on the sort key: with both, BETWEEN takes them in and the loop
	// below leaves them out.
	lo, hi := q.After, q.End
	if q.Before != "" {
		lo = ""
		if hi == "" || q.Before < hi {
			hi = q.Before
		}
	}
	switch {
	case lo != "" && hi != "":
		in.KeyConditionExpression = aws.String("#p = :p AND id BETWEEN :lo AND :hi")
		in.ExpressionAttributeValues[":lo"], in.ExpressionAttributeValues[":hi"] = str(lo), str(hi)
	case lo != "":
		in.KeyConditionExpression = aws.String("#p = :p AND id > :lo")
		in.ExpressionAttributeValues[":lo"] = str(lo)
	case hi != "":
		in.KeyConditionExpression = aws.String("#p = :p AND id < :hi")
		in.ExpressionAttributeValues[":hi"] = str(hi)
	default:
		in.KeyConditionExpression = aws.String("#p = :p")
	}
	if q.Status != "" {
		in.IndexName = aws.String("by_campaign_status")
		in.ExpressionAttributeNames["#p"] = "campaign_status"
		in.ExpressionAttributeValues[":p"] = str(campaignID + "#" + q.Status)
	} else {
		in.ConsistentRead = aws.Bool(true)
	}
	want := q.Limit + 1
	var out []campaign.Recipient
	for len(out) < want {
		in.Limit = aws.Int32(int32(want - len(out)))
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list recipients of %s: %w", campaignID, err)
		}
		rs, err := docs[campaign.Recipient](page.Items)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if r.ID != lo && r.ID != hi && len(out) < want {
				out = append(out, r)
			}
		}
		if page.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	if q.Before != "" {
		slices.Reverse(out)
	}
	return out, nil
}

func (s *Store) recipientPut(r campaign.Recipient) (*types.Put, error) {
	name, err := s.table(CampaignRecipients)
	if err != nil {
		return nil, err
	}
	prev := r.Revision
	r.Revision++
	return &types.Put{TableName: name, Item: recipientItem(r), ConditionExpression: aws.String("revision = :rev"),
		ExpressionAttributeValues: item{":rev": num(prev)}}, nil
}

// UpdateRecipient writes r if its revision is unchanged.
func (s *Store) UpdateRecipient(ctx context.Context, r campaign.Recipient) error {
	put, err := s.recipientPut(r)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, putItem(put))
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("update recipient %s: %w", r.ID, err)
	}
	return err
}

// ClaimRecipient writes r if its revision is unchanged and its campaign's status is
// running, in one transaction.
func (s *Store) ClaimRecipient(ctx context.Context, r campaign.Recipient) error {
	campaigns, err := s.table(Campaigns)
	if err != nil {
		return err
	}
	put, err := s.recipientPut(r)
	if err != nil {
		return err
	}
	check := &types.ConditionCheck{TableName: campaigns, Key: item{"id": str(r.CampaignID)},
		ConditionExpression:      aws.String("#s = :running"),
		ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: item{":running": str(campaign.StatusRunning)}}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: check}, {Put: put}}})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("claim recipient %s: %w", r.ID, err)
	}
	return err
}

// RecipientCounts counts each status's partition of by_campaign_status (ids before end).
func (s *Store) RecipientCounts(ctx context.Context, campaignID, end string) (map[string]int, error) {
	name, err := s.table(CampaignRecipients)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, st := range campaign.RecipientStatuses {
		in := &dynamodb.QueryInput{TableName: name, IndexName: aws.String("by_campaign_status"),
			KeyConditionExpression:    aws.String("campaign_status = :p"),
			ExpressionAttributeValues: item{":p": str(campaignID + "#" + st)}, Select: types.SelectCount}
		if end != "" {
			in.KeyConditionExpression = aws.String("campaign_status = :p AND id < :end")
			in.ExpressionAttributeValues[":end"] = str(end)
		}
		for {
			page, err := s.db.Query(ctx, in)
			if err != nil {
				return nil, fmt.Errorf("count recipients of %s: %w", campaignID, err)
			}
			out[st] += int(page.Count)
			if page.LastEvaluatedKey == nil {
				break
			}
			in.ExclusiveStartKey = page.LastEvaluatedKey
		}
	}
	return out, nil
}

// PutRecipients writes recipients in batches of 25 (BatchWriteItem's most), eight
// batches at a time, whatever is stored under their ids; what DynamoDB leaves
// unprocessed is written again after a pause.
func (s *Store) PutRecipients(ctx context.Context, rs []campaign.Recipient) error {
	name, err := s.table(CampaignRecipients)
	if err != nil {
		return err
	}
	var writes []types.WriteRequest
	for _, r := range rs {
		r.Revision = 1
		writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: recipientItem(r)}})
	}
	return s.batchWrite(ctx, *name, writes)
}

// DropRecipients deletes a campaign's recipients from id from on.
func (s *Store) DropRecipients(ctx context.Context, campaignID, from string) error {
	name, err := s.table(CampaignRecipients)
	if err != nil {
		return err
	}
	in := &dynamodb.QueryInput{TableName: name, KeyConditionExpression: aws.String("campaign_id = :p AND id >= :from"),
		ExpressionAttributeValues: item{":p": str(campaignID), ":from": str(from)},
		ProjectionExpression:      aws.String("campaign_id, id"), ConsistentRead: aws.Bool(true)}
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("list recipients of %s past %s: %w", campaignID, from, err)
		}
		var writes []types.WriteRequest
		for _, it := range page.Items {
			writes = append(writes, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: it}})
		}
		if err := s.batchWrite(ctx, *name, writes); err != nil {
			return err
		}
		if page.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// batchWrite sends writes to table in BatchWriteItem requests of 25, eight at a time,
// sending again what DynamoDB leaves unprocessed (after 50 ms, doubling to 2 s).
func (s *Store) batchWrite(ctx context.Context, table string, writes []types.WriteRequest) error {
	const size, parallel = 25, 8
	batches := make(chan []types.WriteRequest)
	errs := make(chan error, parallel)
	for range parallel {
		go func() {
			var first error
			for b := range batches {
				if first == nil {
					first = s.writeBatch(ctx, table, b)
				}
			}
			errs <- first
		}()
	}
	for start := 0; start < len(writes); start += size {
		batches <- writes[start:min(start+size, len(writes))]
	}
	close(batches)
	var err error
	for range parallel {
		err = errors.Join(err, <-errs)
	}
	return err
}

func (s *Store) writeBatch(ctx context.Context, table string, b []types.WriteRequest) error {
	pause := 50 * time.Millisecond
	for len(b) > 0 {
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: b}})
		if err != nil {
			return fmt.Errorf("batch write %s: %w", table, err)
		}
		if b = out.UnprocessedItems[table]; len(b) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
	return nil
}
